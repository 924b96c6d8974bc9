//! The owned loop of a block twin (`ThreadCtx::__each_owned_thread`, `CpuOwnedSlice`,
//! `CpuReadSlice`) through hand-written twins: it runs the launches it is sound for, and a
//! twin that breaks its rules (another thread's element, one parameter both owned and
//! shared, a launch that is not one-dimensional) fails the launch without touching memory
//! the thread does not own.

use gpu_dsl_runtime::cpu::{CpuArgs, ThreadCtx};
use gpu_dsl_runtime::{
    Block, DeviceBuffer, ElemType, Error, Gpu, Grid, Kernel, KernelArg, LaunchConfig, ParamKind,
    ScalarType,
};

const fn slice(elem: ScalarType, mutable: bool) -> ParamKind {
    ParamKind::Slice {
        elem: ElemType::Scalar(elem),
        mutable,
    }
}

/// The per-thread twin the block twins below stand beside (launches here never run it).
fn unused_twin(_: &CpuArgs<'_>, _: &ThreadCtx) {}

/// A kernel `(x: &[f32], y: &mut [f32])` with block twin `block`.
macro_rules! owned_kernel {
    ($name:ident, $block:expr) => {
        static $name: Kernel = Kernel::__generated_v2(
            stringify!($name),
            stringify!($name),
            "/* CUDA source: not used by the CPU backend */",
            &[slice(ScalarType::F32, false), slice(ScalarType::F32, true)],
            "tests/owned_loop.rs",
            true,
        )
        .with_cpu(unused_twin, false)
        .__with_cpu_block($block);
    };
}

/// `y[i] += 2 x[i]` with owned views, as the macro writes it.
fn saxpy_owned(args: &CpuArgs<'_>, block: &mut ThreadCtx, first: u32) {
    let x = args.slice_read::<f32>(0);
    let y = args.slice_owned::<f32>(1);
    block.__each_owned_thread(first, x.len().min(y.len()), |t| {
        let i = t.block_idx().x as usize * t.block_dim().x as usize + t.thread_idx().x as usize;
        if i < y.len() {
            y.set(
                i,
                2.0 * x.get(i, t, line!()) + y.get(i, t, line!()),
                t,
                line!(),
            );
        }
    });
}
owned_kernel!(SAXPY_OWNED, saxpy_owned);

/// Writes the next thread's element: a twin the macro would never write.
fn neighbour_owned(args: &CpuArgs<'_>, block: &mut ThreadCtx, first: u32) {
    let y = args.slice_owned::<f32>(1);
    block.__each_owned_thread(first, y.len(), |t| {
        let i = t.block_idx().x as usize * t.block_dim().x as usize + t.thread_idx().x as usize;
        if i + 1 < y.len() {
            y.set(i + 1, 7.0, t, line!());
        }
    });
}
owned_kernel!(NEIGHBOUR_OWNED, neighbour_owned);

/// Takes `y` as owned views and as a `CpuSlice` in one launch.
fn owned_and_shared(args: &CpuArgs<'_>, block: &mut ThreadCtx, first: u32) {
    let y = args.slice_owned::<f32>(1);
    let shared = args.slice_mut::<f32>(1);
    block.__each_owned_thread(first, y.len(), |t| {
        let i = t.block_idx().x as usize * t.block_dim().x as usize + t.thread_idx().x as usize;
        if i < shared.len() {
            shared.set(i, 7.0, t, line!());
        }
    });
}
owned_kernel!(OWNED_AND_SHARED, owned_and_shared);

/// Runs the owned loop whatever the launch's shape.
fn owned_always(args: &CpuArgs<'_>, block: &mut ThreadCtx, first: u32) {
    let y = args.slice_owned::<f32>(1);
    block.__each_owned_thread(first, y.len(), |t| {
        let i = t.block_idx().x as usize * t.block_dim().x as usize + t.thread_idx().x as usize;
        if i < y.len() {
            y.set(i, 7.0, t, line!());
        }
    });
}
owned_kernel!(OWNED_ALWAYS, owned_always);

/// Launches `kernel` on `n` elements (`x[i] = i`, `y = 1`) and returns the error, if any, and
/// `y` afterwards.
fn run(kernel: &'static Kernel, config: LaunchConfig, n: usize) -> (Option<Error>, Vec<f32>) {
    let stream = Gpu::cpu().new_stream().unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &vec![1.0f32; n]).unwrap();
    let err = stream
        .launch(
            kernel,
            config,
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut y)],
        )
        .err();
    (err, y.to_host(&stream).unwrap())
}

/// The contract error's reason, or a panic naming what came instead.
fn reason(err: Option<Error>) -> String {
    match err {
        Some(Error::CpuBackend { reason, .. }) => reason,
        other => panic!("expected a broken contract, got {other:?}"),
    }
}

#[test]
fn an_owned_loop_runs_one_dimensional_launches_with_a_partial_last_block() {
    // 1000 threads' elements in blocks of 64: the last block's threads past 1000 skip.
    let (err, y) = run(&SAXPY_OWNED, LaunchConfig::for_len(1000, 64), 1000);
    assert!(err.is_none(), "{err:?}");
    let want: Vec<f32> = (0..1000).map(|i| 2.0 * i as f32 + 1.0).collect();
    assert_eq!(y, want);
}

#[test]
fn another_threads_element_is_refused_untouched() {
    let (err, y) = run(&NEIGHBOUR_OWNED, LaunchConfig::for_len(64, 32), 64);
    assert!(reason(err).contains("does not own it"));
    assert_eq!(y, vec![1.0; 64]);
}

#[test]
fn a_parameter_is_owned_or_shared_never_both() {
    let (err, y) = run(&OWNED_AND_SHARED, LaunchConfig::for_len(64, 32), 64);
    assert!(reason(err).contains("both as an owned slice and as a shared one"));
    assert_eq!(y, vec![1.0; 64]);
}

#[test]
fn the_owned_loop_refuses_launches_that_are_not_one_dimensional() {
    let shapes = [
        LaunchConfig::new(Grid::xy(2, 2), Block::x(16)),
        LaunchConfig::new(Grid::x(4), Block::xy(8, 2)),
        LaunchConfig::for_len(64, 16).racecheck(true),
    ];
    for config in shapes {
        let (err, y) = run(&OWNED_ALWAYS, config, 64);
        assert!(reason(err).contains("not one-dimensional"), "{config:?}");
        assert_eq!(y, vec![1.0; 64], "{config:?}");
    }
    let (err, y) = run(&OWNED_ALWAYS, LaunchConfig::for_len(64, 16), 64);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(y, vec![7.0; 64]);
}
