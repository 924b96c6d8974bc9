//! Tests that need a CUDA device. Without one each prints `skipped: no CUDA device (...)` and
//! passes, so they run everywhere; on a GPU machine run `cargo test -p gpu-dsl-runtime --test gpu`.

use std::fs;

use gpu_dsl_runtime::{
    test_gpu, Block, CacheConfig, DeviceBuffer, ElemType, Error, Grid, Kernel, KernelArg,
    LaunchConfig, ModuleOrigin, ParamKind, PinnedBuffer, Scalar, ScalarType,
};
use half::{bf16, f16};

const fn slice(elem: ScalarType, mutable: bool) -> ParamKind {
    ParamKind::Slice {
        elem: ElemType::Scalar(elem),
        mutable,
    }
}

static ADD_ONE: Kernel = Kernel::__generated(
    "add_one",
    "add_one",
    "extern \"C\" __global__ void add_one(float* x, unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] += 1.0f; }",
    &[slice(ScalarType::F32, true)],
);

static SAXPY: Kernel = Kernel::__generated(
    "saxpy",
    "saxpy",
    "extern \"C\" __global__ void saxpy(float a, const float* x, unsigned long long x_len, \
     float* y, unsigned long long y_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len && i < y_len) y[i] = a * x[i] + y[i]; }",
    &[
        ParamKind::Scalar(ScalarType::F32),
        slice(ScalarType::F32, false),
        slice(ScalarType::F32, true),
    ],
);

/// Writes every scalar back (as a double, or as raw bits for the 16-bit floats) to check the
/// by-value ABI of each type.
static SCALARS: Kernel = Kernel::__generated(
    "scalars",
    "scalars",
    "extern \"C\" __global__ void scalars(bool b, int i, unsigned int u, long long l, \
     unsigned long long ul, unsigned long long us, float f, double d, unsigned short h, \
     unsigned short bh, double* out, unsigned long long out_len, unsigned short* bits, \
     unsigned long long bits_len) { \
     if (out_len < 8 || bits_len < 2) return; \
     out[0] = b ? 1.0 : 0.0; out[1] = i; out[2] = u; out[3] = (double)l; \
     out[4] = (double)ul; out[5] = (double)us; out[6] = f; out[7] = d; \
     bits[0] = h; bits[1] = bh; }",
    &[
        ParamKind::Scalar(ScalarType::Bool),
        ParamKind::Scalar(ScalarType::I32),
        ParamKind::Scalar(ScalarType::U32),
        ParamKind::Scalar(ScalarType::I64),
        ParamKind::Scalar(ScalarType::U64),
        ParamKind::Scalar(ScalarType::Usize),
        ParamKind::Scalar(ScalarType::F32),
        ParamKind::Scalar(ScalarType::F64),
        ParamKind::Scalar(ScalarType::F16),
        ParamKind::Scalar(ScalarType::Bf16),
        slice(ScalarType::F64, true),
        slice(ScalarType::F16, true),
    ],
);

static BROKEN: Kernel = Kernel::__generated(
    "broken",
    "broken",
    "extern \"C\" __global__ void broken(float* x, unsigned long long x_len) { x[0] = oops }",
    &[slice(ScalarType::F32, true)],
);

static WRONG_ENTRY: Kernel = Kernel::__generated(
    "wrong_entry",
    "not_there",
    "extern \"C\" __global__ void wrong_entry() {}",
    &[],
);

/// Uses 64 KiB of dynamic shared memory: more than the 48 KiB default.
static BIG_SHARED: Kernel = Kernel::__generated(
    "big_shared",
    "big_shared",
    "extern \"C\" __global__ void big_shared(unsigned int* out, unsigned long long out_len) { \
     extern __shared__ unsigned int tile[]; \
     unsigned int n = 16384; \
     for (unsigned int k = threadIdx.x; k < n; k += blockDim.x) tile[k] = k; \
     __syncthreads(); \
     if (threadIdx.x == 0 && out_len > 0) { unsigned int s = 0; \
       for (unsigned int k = 0; k < n; ++k) s += tile[k]; out[0] = s; } }",
    &[slice(ScalarType::U32, true)],
);

fn random_f32(n: usize, mut seed: u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            // xorshift64: reproducible test data without a dependency.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 200.0 - 100.0
        })
        .collect()
}

#[test]
fn add_one_matches_the_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    for n in [1usize, 255, 256, 257, 100_003] {
        let host = random_f32(n, n as u64 + 1);
        let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
        stream
            .launch(
                &ADD_ONE,
                LaunchConfig::for_len(n, 256),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap();
        let expected: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
        assert_eq!(x.to_host(&stream).unwrap(), expected, "n = {n}");
    }
}

#[test]
fn saxpy_with_a_scalar_and_two_slices() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let n = 10_000;
    let xs = random_f32(n, 7);
    let ys = random_f32(n, 8);
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();
    stream
        .launch(
            &SAXPY,
            LaunchConfig::for_len(n, 128),
            &[
                KernelArg::scalar(2.5f32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y),
            ],
        )
        .unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        let want = 2.5f32 * xs[i] + ys[i];
        assert!((got[i] - want).abs() <= 1e-4 * want.abs().max(1.0), "{i}");
    }
}

#[test]
fn every_scalar_type_is_passed_by_value() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<f64>::zeroed(&stream, 8).unwrap();
    let mut bits = DeviceBuffer::<f16>::zeroed(&stream, 2).unwrap();
    let h = f16::from_f32(1.5);
    let bh = bf16::from_f32(-3.25);
    stream
        .launch(
            &SCALARS,
            LaunchConfig::new(Grid::x(1), Block::x(1)),
            &[
                KernelArg::scalar(true),
                KernelArg::scalar(-7i32),
                KernelArg::scalar(4_000_000_000u32),
                KernelArg::scalar(-(1i64 << 40)),
                KernelArg::scalar(1u64 << 50),
                KernelArg::scalar(123_456usize),
                KernelArg::scalar(0.25f32),
                KernelArg::scalar(1e300f64),
                KernelArg::scalar(h),
                KernelArg::scalar(bh),
                KernelArg::slice_mut(&mut out),
                KernelArg::slice_mut(&mut bits),
            ],
        )
        .unwrap();
    let out = out.to_host(&stream).unwrap();
    assert_eq!(
        out,
        [
            1.0,
            -7.0,
            4e9,
            -(2f64.powi(40)),
            2f64.powi(50),
            123_456.0,
            0.25,
            1e300
        ]
    );
    let bits = bits.to_host(&stream).unwrap();
    assert_eq!(bits[0].to_bits(), h.to_bits());
    assert_eq!(bits[1].to_bits(), bh.to_bits());
}

#[test]
fn argument_mismatches_are_errors() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let x = DeviceBuffer::<f32>::zeroed(&stream, 16).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, 16).unwrap();
    let mut y64 = DeviceBuffer::<f64>::zeroed(&stream, 16).unwrap();
    let config = LaunchConfig::for_len(16, 32);
    let expect = |result: gpu_dsl_runtime::Result<()>, index: usize| match result {
        Err(Error::ArgumentMismatch {
            kernel: "saxpy",
            index: i,
            ..
        }) => assert_eq!(i, index),
        other => panic!("expected ArgumentMismatch at {index}, got {other:?}"),
    };
    // Wrong scalar type.
    expect(
        stream.launch(
            &SAXPY,
            config,
            &[
                KernelArg::scalar(2.0f64),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y),
            ],
        ),
        0,
    );
    // Wrong element type.
    expect(
        stream.launch(
            &SAXPY,
            config,
            &[
                KernelArg::scalar(2.0f32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y64),
            ],
        ),
        2,
    );
    // Read-only where the kernel writes.
    expect(
        stream.launch(
            &SAXPY,
            config,
            &[
                KernelArg::scalar(2.0f32),
                KernelArg::slice(&x),
                KernelArg::slice(&y),
            ],
        ),
        2,
    );
    // Too few arguments.
    expect(
        stream.launch(&SAXPY, config, &[KernelArg::scalar(2.0f32)]),
        1,
    );
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    match stream.launch(
        &BROKEN,
        LaunchConfig::for_len(4, 32),
        &[KernelArg::slice_mut(&mut x)],
    ) {
        Err(Error::Compile { kernel, log }) => {
            assert_eq!(kernel, "broken");
            assert!(log.contains("error"), "{log}");
            assert!(log.contains("oops"), "{log}");
        }
        other => panic!("expected Error::Compile, got {other:?}"),
    }
    match gpu.precompile(&WRONG_ENTRY) {
        Err(Error::InvalidKernel { kernel, reason }) => {
            assert_eq!(kernel, "wrong_entry");
            assert!(reason.contains("not_there"), "{reason}");
        }
        other => panic!("expected InvalidKernel, got {other:?}"),
    }
    // The device is still usable afterwards.
    stream
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), [1.0; 4]);
}

#[test]
fn invalid_configurations_fail_before_cuda() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let limits = gpu.limits();
    let too_many = LaunchConfig::new(Grid::x(1), Block::x(limits.max_threads_per_block + 1));
    let huge = LaunchConfig::for_len(usize::MAX, 1);
    let too_much_shared = LaunchConfig::for_len(4, 32).with_shared_mem(u32::MAX);
    for config in [too_many, huge, too_much_shared] {
        match stream.launch(&ADD_ONE, config, &[KernelArg::slice_mut(&mut x)]) {
            Err(Error::InvalidLaunch(msg)) => assert!(msg.contains("limit"), "{msg}"),
            other => panic!("expected InvalidLaunch for {config:?}, got {other:?}"),
        }
    }
    stream.synchronize().unwrap();
}

#[test]
fn dynamic_shared_memory_beyond_48_kib_is_opted_into() {
    let Some(gpu) = test_gpu() else { return };
    let bytes = 64 * 1024;
    if gpu.info().shared_mem_per_block_optin < bytes {
        eprintln!("skipped: this GPU allows less than 64 KiB of shared memory per block");
        return;
    }
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(256)).with_shared_mem(bytes);
    stream
        .launch(&BIG_SHARED, config, &[KernelArg::slice_mut(&mut out)])
        .unwrap();
    let expected = (0..16384u32).fold(0u32, |s, k| s.wrapping_add(k));
    assert_eq!(out.to_host(&stream).unwrap(), [expected]);
}

fn round_trip<T: Scalar + PartialEq + std::fmt::Debug>(values: &[T]) {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut a = DeviceBuffer::from_host(&stream, values).unwrap();
    assert_eq!(a.len(), values.len());
    assert_eq!(a.to_host(&stream).unwrap(), values);

    let mut b = DeviceBuffer::<T>::zeroed(&stream, values.len()).unwrap();
    b.copy_from(&stream, &a).unwrap();
    let mut out = values.to_vec();
    b.copy_to_host(&stream, &mut out).unwrap();
    assert_eq!(out, values);

    let reversed: Vec<T> = values.iter().rev().copied().collect();
    a.copy_from_host(&stream, &reversed).unwrap();
    assert_eq!(a.to_host(&stream).unwrap(), reversed);

    let wrong = vec![values[0]; values.len() + 1];
    assert!(matches!(
        a.copy_from_host(&stream, &wrong),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
fn host_device_round_trips() {
    round_trip(&random_f32(1000, 3));
    round_trip(&[1.0f64, -2.5, 1e-300]);
    round_trip(&[i32::MIN, -1, 0, i32::MAX]);
    round_trip(&[0u32, u32::MAX]);
    round_trip(&[i64::MIN, i64::MAX]);
    round_trip(&[u64::MAX, 1]);
    round_trip(&[usize::MAX, 2]);
    round_trip(&[true, false, true]);
    round_trip(&[f16::from_f32(0.5), f16::MAX]);
    round_trip(&[bf16::from_f32(-1.0), bf16::MIN_POSITIVE]);
}

#[test]
fn empty_buffers_work() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::from_host(&stream, &[]).unwrap();
    assert!(x.is_empty());
    assert_eq!(x.to_host(&stream).unwrap(), Vec::<f32>::new());
    x.copy_from_host(&stream, &[]).unwrap();
    stream
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(0, 256),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    stream.synchronize().unwrap();
    let pinned = PinnedBuffer::<f32>::new(&gpu, 0).unwrap();
    assert!(pinned.as_slice().unwrap().is_empty());
}

#[test]
fn pinned_async_copies() {
    let Some(gpu) = test_gpu() else { return };
    for stream in [gpu.default_stream(), gpu.new_stream().unwrap()] {
        let n = 1 << 20;
        let host = random_f32(n, 11);
        let src = PinnedBuffer::from_slice(&gpu, &host).unwrap();
        let mut dst = PinnedBuffer::<f32>::new(&gpu, n).unwrap();
        assert!(dst.as_slice().unwrap().iter().all(|&v| v == 0.0));
        let mut x = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        x.copy_from_pinned(&stream, &src).unwrap();
        stream
            .launch(
                &ADD_ONE,
                LaunchConfig::for_len(n, 256),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap();
        x.copy_to_pinned(&stream, &mut dst).unwrap();
        // No synchronize: the host view waits for the copy itself.
        let got = dst.as_slice().unwrap();
        assert!(got.iter().zip(&host).all(|(g, h)| *g == h + 1.0));
        let short = PinnedBuffer::<f32>::new(&gpu, n - 1).unwrap();
        assert!(matches!(
            x.copy_from_pinned(&stream, &short),
            Err(Error::LengthMismatch { .. })
        ));
    }
}

#[test]
fn streams_order_work_through_buffers() {
    let Some(gpu) = test_gpu() else { return };
    let first = gpu.new_stream().unwrap();
    let second = gpu.new_stream().unwrap();
    let n = 1 << 22;
    let mut x = DeviceBuffer::<f32>::zeroed(&first, n).unwrap();
    for _ in 0..5 {
        first
            .launch(
                &ADD_ONE,
                LaunchConfig::for_len(n, 256),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap();
    }
    // Work on `second` waits for the writes queued on `first`.
    second
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(n, 256),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let event = second.record_event().unwrap();
    first.wait_event(&event).unwrap();
    assert!(x.to_host(&first).unwrap().iter().all(|&v| v == 6.0));
}

#[test]
fn events_time_a_launch() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.new_stream().unwrap();
    let n = 1 << 24;
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    gpu.precompile(&ADD_ONE).unwrap();
    let start = stream.record_event().unwrap();
    stream
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(n, 256),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let end = stream.record_event().unwrap();
    end.synchronize().unwrap();
    assert!(end.is_complete().unwrap());
    let ms = start.elapsed_ms(&end).unwrap();
    assert!(ms > 0.0 && ms < 10_000.0, "{ms} ms");
    eprintln!("add_one over {n} floats: {ms:.3} ms");
}

#[test]
fn memory_stats_follow_buffers() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    // Other tests allocate concurrently on the same device, so only check our own effect on
    // the peak, which cannot be undone by them.
    let bytes = 64 << 20;
    let buffer = DeviceBuffer::<u32>::zeroed(&stream, bytes / 4).unwrap();
    let stats = gpu.memory_stats();
    assert!(
        stats.allocated_bytes >= bytes && stats.peak_bytes >= bytes,
        "{stats}"
    );
    assert!(stats.live_buffers >= 1);
    drop(buffer);
    assert!(gpu.memory_stats().peak_bytes >= bytes);
}

#[test]
fn disk_cache_hit_after_clearing_memory() {
    let Some(gpu) = test_gpu() else { return };
    // A source no other test compiles, so the in-process cache starts cold for it.
    static UNIQUE: Kernel = Kernel::__generated(
        "cached",
        "cached",
        "// disk cache test\n\
         extern \"C\" __global__ void cached(float* x, unsigned long long x_len) { \
         unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
         if (i < x_len) x[i] *= 2.0f; }",
        &[slice(ScalarType::F32, true)],
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheConfig::Dir(dir.path().join("kernels"));

    let cold = gpu.precompile_with(&UNIQUE, &cache).unwrap();
    assert_eq!(cold.origin, ModuleOrigin::Nvrtc, "{cold}");
    let warm = gpu.precompile_with(&UNIQUE, &cache).unwrap();
    assert_eq!(warm.origin, ModuleOrigin::MemoryCache, "{warm}");

    gpu.forget_compiled(&UNIQUE);
    let disk = gpu.precompile_with(&UNIQUE, &cache).unwrap();
    assert_eq!(disk.origin, ModuleOrigin::DiskCache, "{disk}");
    eprintln!("cold: {cold}; in-process: {warm}; disk: {disk}");

    // The function loaded from disk runs.
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0]).unwrap();
    stream
        .launch(
            &UNIQUE,
            LaunchConfig::for_len(2, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), [2.0, 4.0]);

    // A damaged entry is rejected, rebuilt by NVRTC and written back whole.
    let entries: Vec<_> = fs::read_dir(dir.path().join("kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let full = fs::read(&entries[0]).unwrap();
    fs::write(&entries[0], &full[..full.len() / 2]).unwrap();
    gpu.forget_compiled(&UNIQUE);
    let rebuilt = gpu.precompile_with(&UNIQUE, &cache).unwrap();
    assert_eq!(rebuilt.origin, ModuleOrigin::Nvrtc);
    assert_eq!(fs::read(&entries[0]).unwrap(), full);

    // Disabled: always NVRTC after the in-process cache is cleared.
    gpu.forget_compiled(&UNIQUE);
    let off = gpu
        .precompile_with(&UNIQUE, &CacheConfig::Disabled)
        .unwrap();
    assert_eq!(off.origin, ModuleOrigin::Nvrtc);
}

#[test]
fn device_info_is_sane() {
    let Some(gpu) = test_gpu() else { return };
    let info = gpu.info();
    eprintln!("{info}");
    assert_eq!(info.name, gpu.name());
    assert!(gpu.sm_count() > 0 && gpu.total_memory() > 0);
    assert_eq!(info.warp_size, 32);
    assert!(info.limits().max_threads_per_block >= 1024);
    assert!(gpu.compute_capability().0 >= 5);
    match gpu_dsl_runtime::Gpu::new(gpu_dsl_runtime::Gpu::count().unwrap()) {
        Err(Error::NoDevice { .. }) => {}
        other => panic!("expected NoDevice, got {other:?}"),
    }
}

/// A device-wide synchronization on another thread waits for a capture in progress instead of
/// invalidating it; one inside the capture is an error, not a deadlock. (Under
/// compute-sanitizer with the other tests running in parallel, a capture can still be
/// invalidated by something none of them calls itself; run this file there with
/// `--test-threads=1`.)
#[test]
fn captures_and_device_synchronizations_on_other_threads_wait_for_each_other() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.new_stream().unwrap();
    let n = 4096;
    let y = std::cell::RefCell::new(DeviceBuffer::<f32>::zeroed(&stream, n).unwrap());
    let step = |s: &gpu_dsl_runtime::Stream| {
        let config = LaunchConfig::for_len(n, 256);
        s.launch(
            &ADD_ONE,
            config,
            &[KernelArg::slice_mut(&mut y.borrow_mut())],
        )
    };
    // Compiles the kernel before the threads start.
    step(&stream).unwrap();
    let captures = 200;
    let done = AtomicBool::new(false);
    let syncs = std::thread::scope(|scope| {
        let syncer = scope.spawn(|| {
            let mut syncs = 0u64;
            while !done.load(Ordering::Relaxed) {
                gpu.synchronize().unwrap();
                syncs += 1;
            }
            syncs
        });
        for _ in 0..captures {
            let graph = stream.capture(step);
            let graph = graph.unwrap_or_else(|err| {
                done.store(true, Ordering::Relaxed);
                panic!("a capture failed while another thread synchronized: {err}")
            });
            graph.launch().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        syncer.join().unwrap()
    });
    assert!(syncs > 0);
    let expected = vec![1.0 + captures as f32; n];
    assert_eq!(y.borrow().to_host(&stream).unwrap(), expected);

    let err = stream.capture(|s| s.gpu().synchronize()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidLaunch(m) if m.contains("inside Stream::capture")),
        "{err}"
    );
    // The device can be synchronized again once that capture has ended.
    gpu.synchronize().unwrap();
}

#[test]
fn graphs_replay_captured_launches() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.new_stream().unwrap();
    let n = 1000;
    let host = random_f32(n, 7);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    // The graph keeps the closure's borrows: a RefCell lets the test read `y` between replays.
    let y = std::cell::RefCell::new(DeviceBuffer::<f32>::zeroed(&stream, n).unwrap());
    let step = |s: &gpu_dsl_runtime::Stream| {
        let config = LaunchConfig::for_len(n, 256);
        let mut y = y.borrow_mut();
        s.launch(&ADD_ONE, config, &[KernelArg::slice_mut(&mut y)])?;
        s.launch(
            &SAXPY,
            config,
            &[
                KernelArg::scalar(2.0f32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y),
            ],
        )
    };
    // Once eagerly (compiles both kernels), then captured: capturing runs nothing.
    step(&stream).unwrap();
    let graph = stream.capture(step).unwrap();
    assert_eq!(graph.launches(), 2);
    let expected_once: Vec<f32> = host.iter().map(|v| 1.0 + 2.0 * v).collect();
    assert_eq!(y.borrow().to_host(&stream).unwrap(), expected_once);
    for _ in 0..3 {
        graph.launch().unwrap();
    }
    let mut expected = expected_once;
    for _ in 0..3 {
        for (e, v) in expected.iter_mut().zip(&host) {
            *e = (*e + 1.0) + 2.0 * v;
        }
    }
    assert_eq!(y.borrow().to_host(&stream).unwrap(), expected);

    // The legacy default stream cannot be captured; a failing capture returns its error.
    let err = gpu.default_stream().capture(step).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    let failed = stream.capture(|_| Err(Error::InvalidLaunch("planted".into())));
    assert!(matches!(failed, Err(Error::InvalidLaunch(m)) if m == "planted"));
    // The stream and the graph still work after the abandoned capture.
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    for (e, v) in expected.iter_mut().zip(&host) {
        *e = (*e + 1.0) + 2.0 * v;
    }
    assert_eq!(y.borrow().to_host(&stream).unwrap(), expected);
}
