//! What the runtime does on a machine without CUDA, and NVRTC-only compilation (no GPU needed).
//!
//! Each test adapts to what is installed: without libcuda/libnvrtc it checks the error variant
//! (never a panic); with NVRTC it compiles for real.

use gpu_dsl_runtime::{compile_to_ptx, ElemType, Error, Gpu, Kernel, ParamKind, ScalarType};

static ADD_ONE: Kernel = Kernel::__generated(
    "add_one",
    "add_one",
    "extern \"C\" __global__ void add_one(float* x, unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] += 1.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

static BROKEN: Kernel = Kernel::__generated(
    "broken",
    "broken",
    "extern \"C\" __global__ void broken(float* x, unsigned long long x_len) { x[0] = oops }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

fn nvrtc_present() -> bool {
    gpu_dsl_runtime::test_nvrtc()
}

#[test]
fn device_queries_without_a_driver_are_errors() {
    match Gpu::count() {
        Err(Error::NoDriver) => {
            assert!(matches!(Gpu::new(0), Err(Error::NoDriver)));
            assert!(gpu_dsl_runtime::test_gpu().is_none());
        }
        Ok(count) => {
            // A machine with a driver: ordinals past the count are NoDevice.
            match Gpu::new(count) {
                Err(Error::NoDevice {
                    requested,
                    available,
                }) => assert_eq!((requested, available), (count, count)),
                other => panic!("expected NoDevice, got {other:?}"),
            }
        }
        // A driver that is installed but cannot start (e.g. no device nodes in a container).
        Err(err @ Error::Driver { .. }) => eprintln!("driver present but unusable: {err}"),
        Err(other) => panic!("unexpected error from Gpu::count: {other}"),
    }
}

#[test]
fn compile_to_ptx_with_nvrtc_only() {
    if !nvrtc_present() {
        assert!(matches!(
            compile_to_ptx(&ADD_ONE, (9, 0)),
            Err(Error::NoNvrtc)
        ));
        eprintln!("skipped: NVRTC not installed; checked the NoNvrtc error instead");
        return;
    }
    let ptx = compile_to_ptx(&ADD_ONE, (8, 0)).expect("add_one compiles");
    assert!(ptx.contains(".entry add_one"), "{ptx}");
    assert!(ptx.contains(".target sm_80"), "{ptx}");
}

#[test]
fn syntax_errors_carry_the_nvrtc_log() {
    if !nvrtc_present() {
        assert!(matches!(
            compile_to_ptx(&BROKEN, (9, 0)),
            Err(Error::NoNvrtc)
        ));
        eprintln!("skipped: NVRTC not installed; checked the NoNvrtc error instead");
        return;
    }
    match compile_to_ptx(&BROKEN, (9, 0)) {
        Err(err @ Error::Compile { .. }) => {
            let message = err.to_string();
            let Error::Compile { kernel, log } = err else {
                unreachable!()
            };
            assert_eq!(kernel, "broken");
            assert!(log.contains("broken.cu"), "log names the program: {log}");
            assert!(log.contains("error"), "{log}");
            assert!(
                message.contains("`broken`") && message.contains(&log),
                "{message}"
            );
        }
        other => panic!("expected Error::Compile, got {other:?}"),
    }
}

#[test]
fn malformed_kernels_are_rejected_before_nvrtc() {
    static NUL: Kernel = Kernel::__generated("nul", "nul", "bad\0source", &[]);
    assert!(matches!(
        compile_to_ptx(&NUL, (9, 0)),
        Err(Error::InvalidKernel { .. })
    ));
}

#[test]
fn handles_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Gpu>();
    send_sync::<gpu_dsl_runtime::Stream>();
    send_sync::<gpu_dsl_runtime::Event>();
    send_sync::<gpu_dsl_runtime::DeviceBuffer<f32>>();
    send_sync::<gpu_dsl_runtime::PinnedBuffer<half::f16>>();
}

static WARNS: Kernel = Kernel::__generated(
    "warns",
    "warns",
    "extern \"C\" __global__ void warns(float* x, unsigned long long x_len) { int unused = 5; if (x_len) x[0] = 1.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

#[test]
fn nvrtc_warnings_fail_the_ci_check() {
    if !nvrtc_present() {
        return;
    }
    gpu_dsl_runtime::check_with_nvrtc(&ADD_ONE, &[], (9, 0), false).expect("add_one is clean");
    let error = gpu_dsl_runtime::check_with_nvrtc(&WARNS, &[], (9, 0), false).unwrap_err();
    assert!(matches!(error, Error::Compile { .. }), "{error}");
    assert!(error.to_string().contains("unused"), "{error}");
}
