//! Checked mode: kernels whose bounds and division checks report Rust-style panics at the next
//! synchronizing call. The CUDA sources are written by hand to the macro's prelude contract.
//! NVRTC-only tests run wherever NVRTC is installed; GPU tests print a skip without a device.

use std::sync::{Mutex, MutexGuard};

use gpu_dsl_runtime::{
    compile_to_ptx, compile_to_ptx_checked, compile_to_ptx_generic_checked, test_gpu, test_nvrtc,
    CacheConfig, DeviceBuffer, ElemType, Error, Gpu, Kernel, KernelArg, LaunchConfig, ModuleOrigin,
    ParamKind, ScalarType, TemplateArg, TemplateParam,
};

/// The prelude every generated kernel starts with, and the failure helper the checks call.
macro_rules! prelude {
    () => {
        "struct rs_error_slot { unsigned int flag; unsigned int kind; unsigned int kernel_id; \
         unsigned int line; unsigned long long index; unsigned long long len; };\n\
         #ifdef GPU_CHECKED\n\
         extern \"C\" { __device__ rs_error_slot* rs_error_slot_ptr; \
         __device__ unsigned int rs_kernel_id; }\n\
         __device__ void rs_fail(unsigned int kind, unsigned int line, unsigned long long index, \
         unsigned long long len) {\n\
           rs_error_slot* slot = rs_error_slot_ptr;\n\
           if (atomicCAS(&slot->flag, 0u, 1u) == 0u) {\n\
             slot->kind = kind; slot->kernel_id = rs_kernel_id; slot->line = line;\n\
             slot->index = index; slot->len = len;\n\
             __threadfence_system();\n\
           }\n\
         }\n\
         #endif\n"
    };
}

/// `x[at] = 1.0` from one thread; "line 12" checks the index. Unchecked, the out-of-bounds
/// store is skipped rather than performed, standing in for the undefined behaviour without
/// corrupting other tests' memory.
macro_rules! poke_source {
    ($tag:literal) => {
        concat!(
            prelude!(),
            "// ",
            $tag,
            "\n",
            "extern \"C\" __global__ void poke(float* x, unsigned long long x_len, \
             unsigned long long at) {\n\
             #ifdef GPU_CHECKED\n\
               if (at >= x_len) { rs_fail(1u, 12u, at, x_len); return; }\n\
             #else\n\
               if (at >= x_len) return;\n\
             #endif\n\
               x[at] = 1.0f;\n\
             }\n"
        )
    };
}

const POKE_PARAMS: &[ParamKind] = &[
    ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    },
    ParamKind::Scalar(ScalarType::U64),
];

static POKE: Kernel = Kernel::__generated_v2(
    "poke",
    "poke",
    poke_source!("poke"),
    POKE_PARAMS,
    "tests/checked.rs",
    false,
);

/// Same code, own source text: only the cache test compiles it.
static POKE_CACHED: Kernel = Kernel::__generated_v2(
    "poke",
    "poke",
    poke_source!("cache test"),
    POKE_PARAMS,
    "tests/checked.rs",
    false,
);

/// Same code, checked unless the launch or GPU_CHECKED says otherwise.
static POKE_DEBUG: Kernel = Kernel::__generated_v2(
    "poke_debug",
    "poke",
    poke_source!("debug build"),
    POKE_PARAMS,
    "tests/checked.rs",
    true,
);

/// Every thread `i` of the grid writes `x[i]`; threads past the end fail the check at once.
static FILL: Kernel = Kernel::__generated_v2(
    "fill",
    "fill",
    concat!(
        prelude!(),
        "extern \"C\" __global__ void fill(float* x, unsigned long long x_len) {\n\
           unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n\
         #ifdef GPU_CHECKED\n\
           if (i >= x_len) { rs_fail(1u, 30u, i, x_len); return; }\n\
         #else\n\
           if (i >= x_len) return;\n\
         #endif\n\
           x[i] = 1.0f;\n\
         }\n"
    ),
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
    "tests/checked.rs",
    false,
);

/// `out[0] = a / b` with Rust's two division checks (lines 20 and 21).
static DIVIDE: Kernel = Kernel::__generated_v2(
    "divide",
    "divide",
    concat!(
        prelude!(),
        "extern \"C\" __global__ void divide(int* out, unsigned long long out_len, int a, int b) {\n\
         #ifdef GPU_CHECKED\n\
           if (b == 0) { rs_fail(2u, 20u, (unsigned long long)(long long)a, 0ull); return; }\n\
           if (a == (-2147483647 - 1) && b == -1) {\n\
             rs_fail(3u, 21u, (unsigned long long)(long long)a, 0ull); return; }\n\
         #else\n\
           if (b == 0 || (a == (-2147483647 - 1) && b == -1)) return;\n\
         #endif\n\
           if (out_len > 0) out[0] = a / b;\n\
         }\n"
    ),
    &[
        ParamKind::Slice {
            elem: ElemType::Scalar(ScalarType::I32),
            mutable: true,
        },
        ParamKind::Scalar(ScalarType::I32),
        ParamKind::Scalar(ScalarType::I32),
    ],
    "tests/checked.rs",
    false,
);

/// `x[N - 1] = 1`: generic, so its panic names the instantiation (line 40).
static LAST: Kernel = Kernel::__generated_generic(
    "last",
    concat!(
        prelude!(),
        "template <typename T, unsigned long long N> __global__ void last(T* x, \
         unsigned long long x_len) {\n\
         #ifdef GPU_CHECKED\n\
           if (N - 1 >= x_len) { rs_fail(1u, 40u, N - 1, x_len); return; }\n\
         #else\n\
           if (N - 1 >= x_len) return;\n\
         #endif\n\
           x[N - 1] = (T)1;\n\
         }\n"
    ),
    &[ParamKind::GenericSlice {
        param: 0,
        mutable: true,
    }],
    &[TemplateParam::Type, TemplateParam::Const],
    "tests/checked.rs",
    false,
);

/// The error slot is per device and these tests share one process, so a panic in one test
/// could surface in another's synchronize: checked GPU tests run one at a time.
fn exclusive() -> Option<(MutexGuard<'static, ()>, Gpu)> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let gpu = test_gpu()?;
    // Drain anything a failed earlier test left behind.
    let _ = gpu.synchronize();
    Some((guard, gpu))
}

fn one_thread() -> LaunchConfig {
    LaunchConfig::for_len(1, 1)
}

fn poke(
    stream: &gpu_dsl_runtime::Stream,
    kernel: &'static Kernel,
    config: LaunchConfig,
    x: &mut DeviceBuffer<f32>,
    at: u64,
) {
    stream
        .launch(
            kernel,
            config,
            &[KernelArg::slice_mut(x), KernelArg::scalar(at)],
        )
        .unwrap();
}

/// The panic's (kernel, file, line, message), or a failure naming what came instead.
fn panic_of(
    result: gpu_dsl_runtime::Result<impl std::fmt::Debug>,
) -> (String, String, u32, String) {
    match result {
        Err(Error::KernelPanic {
            kernel,
            file,
            line,
            message,
            ..
        }) => (kernel, file, line, message),
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
}

#[test]
fn checked_ptx_declares_the_error_slot_globals() {
    if !test_nvrtc() {
        return;
    }
    let checked = compile_to_ptx_checked(&POKE, (9, 0)).unwrap();
    // Unmangled (extern "C") module globals of the declared sizes, which is what the runtime
    // looks up with cuModuleGetGlobal.
    for global in [".u64 rs_error_slot_ptr;", ".u32 rs_kernel_id;"] {
        assert!(
            checked.lines().any(|l| l.trim_start().starts_with(".")
                && l.contains(".global")
                && l.trim_end().ends_with(global)),
            "no `{global}` global in:\n{checked}"
        );
    }
    // The claim and the system-scope fence of the contract.
    assert!(checked.contains("atom.cas.b32"), "{checked}");
    assert!(checked.contains("membar.sys"), "{checked}");
    let unchecked = compile_to_ptx(&POKE, (9, 0)).unwrap();
    assert!(!unchecked.contains("rs_error_slot_ptr"), "{unchecked}");
    assert!(!unchecked.contains("atom."), "{unchecked}");

    let generic = compile_to_ptx_generic_checked(
        &LAST,
        &[TemplateArg::of::<f32>(), TemplateArg::Const(4)],
        (9, 0),
    )
    .unwrap();
    assert!(generic.ptx.contains("rs_error_slot_ptr"), "{}", generic.ptx);
    assert!(generic
        .ptx
        .contains(&format!(".entry {}", generic.lowered_name)));
}

#[test]
fn out_of_bounds_write_panics_at_synchronize() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 100).unwrap();
    poke(&stream, &POKE, one_thread().checked(true), &mut x, 104);
    let err = stream.synchronize().unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `poke` panicked at tests/checked.rs:12 in block (0, 0, 0) thread (0, 0, 0): \
         index out of bounds: the len is 100 but the index is 104"
    );
    let (kernel, file, line, _) = panic_of(Err::<(), _>(err));
    assert_eq!(
        (kernel.as_str(), file.as_str(), line),
        ("poke", "tests/checked.rs", 12)
    );

    // Reported once; the slot is reset, so the next checked launch runs normally.
    stream.synchronize().unwrap();
    poke(&stream, &POKE, one_thread().checked(true), &mut x, 5);
    stream.synchronize().unwrap();
    let host = x.to_host(&stream).unwrap();
    assert_eq!(host[5], 1.0);
    assert_eq!(host.iter().filter(|&&v| v != 0.0).count(), 1);
}

#[test]
fn unchecked_mode_skips_the_checks() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 100).unwrap();
    poke(&stream, &POKE, one_thread().checked(false), &mut x, 104);
    stream.synchronize().unwrap();
    assert!(x.to_host(&stream).unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn many_failing_threads_record_one_panic() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 100).unwrap();
    stream
        .launch(
            &FILL,
            LaunchConfig::for_len(1000, 128).checked(true),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let (kernel, _, line, message) = panic_of(x.to_host(&stream));
    assert_eq!((kernel.as_str(), line), ("fill", 30));
    let index: u64 = message
        .strip_prefix("index out of bounds: the len is 100 but the index is ")
        .and_then(|i| i.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!((100..1024).contains(&index), "{message}");
    // Threads in bounds were not stopped by the others' failure.
    assert!(x.to_host(&stream).unwrap().iter().all(|&v| v == 1.0));
}

#[test]
fn division_checks() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<i32>::zeroed(&stream, 1).unwrap();
    let mut divide = |a: i32, b: i32| {
        stream
            .launch(
                &DIVIDE,
                one_thread().checked(true),
                &[
                    KernelArg::slice_mut(&mut out),
                    KernelArg::scalar(a),
                    KernelArg::scalar(b),
                ],
            )
            .unwrap();
        stream.synchronize()
    };
    let (kernel, _, line, message) = panic_of(divide(7, 0));
    assert_eq!(
        (kernel.as_str(), line, message.as_str()),
        ("divide", 20, "attempt to divide by zero")
    );
    let (_, _, line, message) = panic_of(divide(i32::MIN, -1));
    assert_eq!(
        (line, message.as_str()),
        (21, "attempt to divide with overflow")
    );
    divide(-7, 2).unwrap();
    assert_eq!(out.to_host(&stream).unwrap(), [-3]);
}

#[test]
fn checked_and_unchecked_modules_coexist() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheConfig::Dir(dir.path().join("kernels"));
    let origin = |checked: bool| {
        gpu.precompile_variant(&POKE_CACHED, &[], checked, &cache)
            .unwrap()
            .origin
    };
    assert_eq!(origin(false), ModuleOrigin::Nvrtc);
    assert_eq!(origin(true), ModuleOrigin::Nvrtc, "a separate compile");
    assert_eq!(origin(false), ModuleOrigin::MemoryCache);
    assert_eq!(origin(true), ModuleOrigin::MemoryCache);
    let entries = std::fs::read_dir(dir.path().join("kernels"))
        .unwrap()
        .count();
    assert_eq!(entries, 2, "separate disk entries");
    gpu.forget_compiled(&POKE_CACHED);
    assert_eq!(origin(true), ModuleOrigin::DiskCache);
    assert_eq!(origin(false), ModuleOrigin::DiskCache);

    // Both stay usable side by side; the checked one loaded from disk is wired to the slot.
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    for _ in 0..2 {
        poke(
            &stream,
            &POKE_CACHED,
            one_thread().checked(true),
            &mut x,
            10,
        );
        let (_, _, _, message) = panic_of(stream.synchronize());
        assert!(
            message.contains("the len is 10 but the index is 10"),
            "{message}"
        );
        poke(
            &stream,
            &POKE_CACHED,
            one_thread().checked(false),
            &mut x,
            10,
        );
        stream.synchronize().unwrap();
    }
}

#[test]
fn every_synchronizing_call_reports() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let checked = one_thread().checked(true);
    let a = gpu.new_stream().unwrap();
    let b = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&a, 4).unwrap();

    // copy_to_host.
    poke(&a, &POKE, checked, &mut x, 4);
    let mut out = [0.0f32; 4];
    panic_of(x.copy_to_host(&a, &mut out));

    // A stream with no checked launch pending does not take another stream's panic.
    poke(&a, &POKE, checked, &mut x, 4);
    b.synchronize().unwrap();
    panic_of(a.synchronize());

    // The device as a whole.
    poke(&a, &POKE, checked, &mut x, 4);
    panic_of(gpu.synchronize());
    a.synchronize().unwrap();

    // Events recorded after a checked launch.
    poke(&a, &POKE, checked, &mut x, 4);
    let event = a.record_event().unwrap();
    panic_of(event.synchronize());
    a.synchronize().unwrap();

    let start = a.record_event().unwrap();
    poke(&a, &POKE, checked, &mut x, 4);
    let end = a.record_event().unwrap();
    panic_of(start.elapsed_ms(&end));

    // Nothing pending any more: everything is Ok and the buffer was never written.
    a.synchronize().unwrap();
    gpu.synchronize().unwrap();
    assert_eq!(x.to_host(&a).unwrap(), [0.0; 4]);
}

#[test]
fn the_mode_comes_from_launch_then_env_then_kernel() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    // An explicit choice wins over the kernel's default.
    poke(&stream, &POKE_DEBUG, one_thread().checked(false), &mut x, 9);
    stream.synchronize().unwrap();
    if let Some(env) = std::env::var_os("GPU_CHECKED") {
        eprintln!("GPU_CHECKED={env:?} is set: skipping the kernel-default half");
        return;
    }
    // No choice and no GPU_CHECKED: the kernel's default.
    poke(&stream, &POKE_DEBUG, one_thread(), &mut x, 9);
    let (kernel, ..) = panic_of(stream.synchronize());
    assert_eq!(kernel, "poke_debug");
    poke(&stream, &POKE, one_thread(), &mut x, 9);
    stream.synchronize().unwrap();
}

#[test]
fn generic_panics_name_the_instantiation() {
    let Some((_lock, gpu)) = exclusive() else {
        return;
    };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 8).unwrap();
    let mut launch = |n: u64| {
        stream
            .launch_generic(
                &LAST,
                &[TemplateArg::of::<f32>(), TemplateArg::Const(n)],
                one_thread().checked(true),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap();
        stream.synchronize()
    };
    launch(8).unwrap();
    let err = launch(16).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `last::<f32, 16>` panicked at tests/checked.rs:40 in block (0, 0, 0) thread \
         (0, 0, 0): index out of bounds: the len is 8 but the index is 15"
    );
    assert_eq!(x.to_host(&stream).unwrap()[7], 1.0);
}
