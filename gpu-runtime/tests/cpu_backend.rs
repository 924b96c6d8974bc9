//! The CPU backend through the public API, with hand-written CPU twins that follow the contract
//! `#[kernel]` generates against. No GPU needed: everything here runs on `Gpu::cpu()`.

use gpu_dsl_runtime::cpu::{CpuArgs, CpuKernelFn, Dim3, ThreadCtx};
use gpu_dsl_runtime::{
    Backend, Block, Device, DeviceBuffer, DeviceLimits, ElemType, Error, Gpu, Grid, Kernel,
    KernelArg, LaunchConfig, ModuleOrigin, ParamKind, PinnedBuffer, Scalar, ScalarType, Stream,
    TemplateArg, TemplateParam,
};
use half::{bf16, f16};

const fn slice(elem: ScalarType, mutable: bool) -> ParamKind {
    ParamKind::Slice {
        elem: ElemType::Scalar(elem),
        mutable,
    }
}

const F32: ParamKind = ParamKind::Scalar(ScalarType::F32);
const U32: ParamKind = ParamKind::Scalar(ScalarType::U32);

/// A kernel with a CPU twin and a placeholder CUDA source (never compiled here).
macro_rules! cpu_kernel {
    ($name:ident, $params:expr, $twin:expr, $sync:expr) => {
        static $name: Kernel = Kernel::__generated_v2(
            stringify!($name),
            stringify!($name),
            "/* CUDA source: not used by the CPU backend */",
            $params,
            "tests/cpu_backend.rs",
            true,
        )
        .with_cpu($twin, $sync);
    };
}

/// The CPU device and a stream of the test's own: tests run concurrently, and a kernel panic
/// is reported on the stream it happened on.
fn cpu() -> (Gpu, Stream) {
    let gpu = Gpu::cpu();
    let stream = gpu.new_stream().expect("the CPU backend makes streams");
    (gpu, stream)
}

fn global_x(t: &ThreadCtx) -> usize {
    (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize
}

fn random_f32(n: usize, mut seed: u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 200.0 - 100.0
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Device selection and properties

#[test]
fn the_cpu_backend_is_a_device() {
    let gpu: Device = Gpu::cpu();
    assert_eq!(gpu.backend(), Backend::Cpu);
    assert_eq!(gpu, Gpu::cpu(), "one CPU device per process");
    assert!(gpu.name().starts_with("CPU backend ("), "{}", gpu.name());
    assert!(gpu.name().ends_with(" threads)"), "{}", gpu.name());
    assert_eq!(gpu.compute_capability(), (0, 0));
    assert_eq!(gpu.limits(), DeviceLimits::SM_90);
    assert!(gpu.sm_count() >= 1);
    let info = gpu.info().to_string();
    assert!(info.contains("CpuBackendProperties"), "{info}");
    assert!(format!("{gpu:?}").starts_with("Gpu(cpu: CPU backend"));
    let device = gpu_dsl_runtime::test_device();
    assert!(matches!(device.backend(), Backend::Cpu | Backend::Cuda));
}

#[test]
fn kernels_without_a_twin_are_refused() {
    static NO_TWIN: Kernel = Kernel::__generated("no_twin", "no_twin", "", &[]);
    let (gpu, stream) = cpu();
    let err = stream
        .launch(&NO_TWIN, LaunchConfig::for_len(1, 1), &[])
        .unwrap_err();
    assert!(
        matches!(&err, Error::CpuBackend { kernel, reason } if kernel == "no_twin" && reason.contains("no CPU twin")),
        "{err}"
    );
    assert!(matches!(
        gpu.precompile(&NO_TWIN),
        Err(Error::CpuBackend { .. })
    ));
    assert_eq!(
        gpu.precompile(&SAXPY).unwrap().origin,
        ModuleOrigin::CpuTwin
    );
    assert!(SAXPY.cpu_twin().is_some() && !SAXPY.needs_sync());
    assert!(BLOCK_SUM.needs_sync());
}

// ---------------------------------------------------------------------------------------------
// Barrier-free kernels

fn saxpy_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let a: f32 = args.scalar(0);
    let x = args.slice::<f32>(1);
    let y = args.slice::<f32>(2);
    let i = global_x(t);
    if i < x.len() && i < y.len() {
        y.set(
            i,
            a * x.get(i, t, line!()) + y.get(i, t, line!()),
            t,
            line!(),
        );
    }
}
cpu_kernel!(
    SAXPY,
    &[
        F32,
        slice(ScalarType::F32, false),
        slice(ScalarType::F32, true)
    ],
    saxpy_twin,
    false
);

#[test]
fn saxpy_matches_a_cpu_loop() {
    let (_, stream) = cpu();
    for (n, threads) in [
        (1usize, 32),
        (255, 256),
        (257, 256),
        (100_003, 128),
        (1 << 20, 256),
    ] {
        let xs = random_f32(n, 7);
        let ys = random_f32(n, 8);
        let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
        let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();
        stream
            .launch(
                &SAXPY,
                LaunchConfig::for_len(n, threads),
                &[
                    KernelArg::scalar(2.5f32),
                    KernelArg::slice(&x),
                    KernelArg::slice_mut(&mut y),
                ],
            )
            .unwrap();
        let expected: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 2.5 * x + y).collect();
        assert_eq!(y.to_host(&stream).unwrap(), expected, "n = {n}");
    }
}

fn grid_stride_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<u32>(0);
    let start = global_x(t);
    let stride = (t.grid_dim().x * t.block_dim().x) as usize;
    for i in (start..x.len()).step_by(stride) {
        x.set(i, x.get(i, t, line!()) * 3 + 1, t, line!());
    }
}
cpu_kernel!(
    GRID_STRIDE,
    &[slice(ScalarType::U32, true)],
    grid_stride_twin,
    false
);

#[test]
fn grid_stride_loop_covers_everything_once() {
    let (_, stream) = cpu();
    let n = 100_000;
    let host: Vec<u32> = (0..n as u32).collect();
    let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
    stream
        .launch(
            &GRID_STRIDE,
            LaunchConfig::new(Grid::x(7), Block::x(96)),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let expected: Vec<u32> = host.iter().map(|v| v * 3 + 1).collect();
    assert_eq!(x.to_host(&stream).unwrap(), expected);
}

/// Writes every thread's coordinates, to check 3D indices and dimensions.
fn coordinates_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let out = args.slice::<u32>(0);
    let (b, d, g, th) = (t.block_idx(), t.block_dim(), t.grid_dim(), t.thread_idx());
    let block = (b.z * g.y + b.y) * g.x + b.x;
    let thread = (th.z * d.y + th.y) * d.x + th.x;
    let i = (block * d.x * d.y * d.z + thread) as usize;
    let code = ((b.x * 4 + b.y) * 4 + b.z) * 1000 + (th.x * 10 + th.y) * 10 + th.z;
    out.set(i, code, t, line!());
    assert_eq!(t.lane_id(), thread % 32);
    assert_eq!(t.warp_size(), 32);
}
cpu_kernel!(
    COORDINATES,
    &[slice(ScalarType::U32, true)],
    coordinates_twin,
    false
);

#[test]
fn three_dimensional_indices() {
    let (_, stream) = cpu();
    let (grid, block) = (Grid::xyz(3, 2, 2), Block::xyz(4, 3, 2));
    let n = (grid.blocks() * block.threads()) as usize;
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    stream
        .launch(
            &COORDINATES,
            LaunchConfig::new(grid, block),
            &[KernelArg::slice_mut(&mut out)],
        )
        .unwrap();
    let mut expected = Vec::new();
    for bz in 0..2 {
        for by in 0..2 {
            for bx in 0..3 {
                for tz in 0..2 {
                    for ty in 0..3 {
                        for tx in 0..4 {
                            expected
                                .push(((bx * 4 + by) * 4 + bz) * 1000 + (tx * 10 + ty) * 10 + tz);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(out.to_host(&stream).unwrap(), expected);
}

// ---------------------------------------------------------------------------------------------
// Shared memory and barriers

fn block_sum_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<u64>(0);
    let out = args.slice::<u64>(1);
    let tile = t.shared_array::<u64>(0, 1024);
    let tid = t.thread_idx().x as usize;
    let i = global_x(t);
    let v = if i < x.len() { x.get(i, t, line!()) } else { 0 };
    tile.set(tid, v, t, line!());
    t.sync_threads();
    let mut s = t.block_dim().x as usize / 2;
    while s > 0 {
        if tid < s {
            let sum = tile.get(tid, t, line!()) + tile.get(tid + s, t, line!());
            tile.set(tid, sum, t, line!());
        }
        t.sync_threads();
        s /= 2;
    }
    if tid == 0 {
        out.set(
            t.block_idx().x as usize,
            tile.get(0, t, line!()),
            t,
            line!(),
        );
    }
}
cpu_kernel!(
    BLOCK_SUM,
    &[slice(ScalarType::U64, false), slice(ScalarType::U64, true)],
    block_sum_twin,
    true
);

fn block_sums(stream: &Stream, host: &[u64], threads: u32) -> Vec<u64> {
    let x = DeviceBuffer::from_host(stream, host).unwrap();
    let config = LaunchConfig::for_len(host.len(), threads);
    let mut out = DeviceBuffer::<u64>::zeroed(stream, config.grid.x as usize).unwrap();
    stream
        .launch(
            &BLOCK_SUM,
            config,
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut out)],
        )
        .unwrap();
    out.to_host(stream).unwrap()
}

#[test]
fn block_tree_reduction_with_1024_threads() {
    let (_, stream) = cpu();
    let n = 50_000;
    let host: Vec<u64> = (0..n as u64).map(|v| v * v % 1000).collect();
    let sums = block_sums(&stream, &host, 1024);
    let expected: Vec<u64> = host.chunks(1024).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, expected);
    // Shared memory is zeroed and private per block: a second launch sees no leftovers.
    let ones = vec![1u64; 3000];
    assert_eq!(block_sums(&stream, &ones, 1024), [1024, 1024, 952]);
}

/// Threads below `cutoff` return before the barrier; the rest must still pass it, since
/// returned threads count as arrived.
fn early_exit_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let out = args.slice::<u32>(0);
    let cutoff: u32 = args.scalar(1);
    let tile = t.shared_array::<u32>(0, 256);
    let tid = t.thread_idx().x;
    if tid < cutoff {
        return;
    }
    tile.set(tid as usize, tid, t, line!());
    t.sync_threads();
    // Reads a neighbour's value written before the barrier.
    let next = if tid + 1 < t.block_dim().x {
        tid + 1
    } else {
        cutoff
    };
    out.set(
        tid as usize,
        tile.get(next as usize, t, line!()),
        t,
        line!(),
    );
    t.sync_threads();
}
cpu_kernel!(
    EARLY_EXIT,
    &[slice(ScalarType::U32, true), U32],
    early_exit_twin,
    true
);

#[test]
fn returned_threads_count_as_arrived() {
    let (_, stream) = cpu();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    stream
        .launch(
            &EARLY_EXIT,
            LaunchConfig::new(Grid::x(1), Block::x(256)),
            &[KernelArg::slice_mut(&mut out), KernelArg::scalar(100u32)],
        )
        .unwrap();
    let got = out.to_host(&stream).unwrap();
    assert!(got[..100].iter().all(|&v| v == 0));
    assert_eq!(got[100], 101);
    assert_eq!(got[254], 255);
    assert_eq!(got[255], 100);
}

/// Reverses each block's chunk through dynamic shared memory.
fn reverse_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let lens = args.slice::<u32>(1);
    let tile = t.dynamic_shared::<f32>();
    let tid = t.thread_idx().x as usize;
    let n = t.block_dim().x as usize;
    let i = global_x(t);
    if tid == 0 && t.block_idx().x == 0 {
        lens.set(0, tile.len() as u32, t, line!());
    }
    tile.set(tid, x.get(i, t, line!()), t, line!());
    t.sync_threads();
    x.set(i, tile.get(n - 1 - tid, t, line!()), t, line!());
}
cpu_kernel!(
    REVERSE,
    &[slice(ScalarType::F32, true), slice(ScalarType::U32, true)],
    reverse_twin,
    true
);

#[test]
fn dynamic_shared_memory() {
    let (_, stream) = cpu();
    for (threads, extra_bytes) in [(128u32, 0u32), (256, 64 * 1024)] {
        let n = threads as usize * 5;
        let host: Vec<f32> = (0..n).map(|v| v as f32).collect();
        let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let mut lens = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let bytes = threads * 4 + extra_bytes;
        stream
            .launch(
                &REVERSE,
                LaunchConfig::for_len(n, threads).with_shared_mem(bytes),
                &[
                    KernelArg::slice_mut(&mut x),
                    KernelArg::slice_mut(&mut lens),
                ],
            )
            .unwrap();
        let expected: Vec<f32> = host
            .chunks(threads as usize)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        assert_eq!(x.to_host(&stream).unwrap(), expected);
        assert_eq!(lens.to_host(&stream).unwrap(), [bytes / 4]);
    }
}

// ---------------------------------------------------------------------------------------------
// Warp operations

fn warp_sum_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<i32>(0);
    let out = args.slice::<i32>(1);
    let i = global_x(t);
    let mut v = x.get(i, t, line!());
    let mut offset = 16;
    while offset > 0 {
        v += t.shfl_down_sync(u32::MAX, v, offset);
        offset /= 2;
    }
    if t.lane_id() == 0 {
        out.set(i / 32, v, t, line!());
    }
}
cpu_kernel!(
    WARP_SUM,
    &[slice(ScalarType::I32, false), slice(ScalarType::I32, true)],
    warp_sum_twin,
    true
);

#[test]
fn warp_shuffle_reduction() {
    let (_, stream) = cpu();
    let n = 256 * 6;
    let host: Vec<i32> = (0..n as i32).map(|v| v * 7 % 101 - 50).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<i32>::zeroed(&stream, n / 32).unwrap();
    stream
        .launch(
            &WARP_SUM,
            LaunchConfig::for_len(n, 256),
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut out)],
        )
        .unwrap();
    let expected: Vec<i32> = host.chunks(32).map(|c| c.iter().sum()).collect();
    assert_eq!(out.to_host(&stream).unwrap(), expected);
}

/// Every lane gets the warp's total through an xor butterfly, in f64, plus votes and ballots.
fn butterfly_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let totals = args.slice::<f64>(0);
    let votes = args.slice::<u32>(1);
    let i = global_x(t);
    let lane = t.lane_id();
    let mut v = f64::from(lane) + 0.5;
    for mask in [16, 8, 4, 2, 1] {
        v += t.shfl_xor_sync(u32::MAX, v, mask);
    }
    totals.set(i, v, t, line!());
    let ballot = t.ballot_sync(u32::MAX, lane.is_multiple_of(3));
    let any = t.any_sync(u32::MAX, lane == 31);
    let all = t.all_sync(u32::MAX, lane < 32);
    let not_all = t.all_sync(u32::MAX, lane != 5);
    let from_7: u32 = t.shfl_sync(u32::MAX, lane * 100, 7);
    let up: u32 = t.shfl_up_sync(u32::MAX, lane, 2);
    let flags = u32::from(any) | u32::from(all) << 1 | u32::from(not_all) << 2;
    t.sync_warp();
    if lane == 0 {
        let w = i / 32 * 4;
        votes.set(w, ballot, t, line!());
        votes.set(w + 1, flags, t, line!());
        votes.set(w + 2, from_7, t, line!());
        votes.set(w + 3, t.active_mask(), t, line!());
    }
    if lane == 1 {
        // Lanes below the delta keep their own value.
        assert_eq!(up, 1);
    }
    if lane == 9 {
        assert_eq!(up, 7);
    }
}
cpu_kernel!(
    BUTTERFLY,
    &[slice(ScalarType::F64, true), slice(ScalarType::U32, true)],
    butterfly_twin,
    true
);

#[test]
fn xor_butterfly_votes_and_ballots() {
    let (_, stream) = cpu();
    let n = 128;
    let mut totals = DeviceBuffer::<f64>::zeroed(&stream, n).unwrap();
    let mut votes = DeviceBuffer::<u32>::zeroed(&stream, n / 32 * 4).unwrap();
    stream
        .launch(
            &BUTTERFLY,
            LaunchConfig::for_len(n, 64),
            &[
                KernelArg::slice_mut(&mut totals),
                KernelArg::slice_mut(&mut votes),
            ],
        )
        .unwrap();
    let total: f64 = (0..32).map(|l| f64::from(l) + 0.5).sum();
    assert!(totals.to_host(&stream).unwrap().iter().all(|&v| v == total));
    let votes = votes.to_host(&stream).unwrap();
    let ballot: u32 = (0..32).filter(|l| l % 3 == 0).map(|l| 1u32 << l).sum();
    // `active_mask()` is read inside `if lane == 0`: as on the GPU, only lane 0 is active there.
    for warp in votes.chunks(4) {
        assert_eq!(warp, [ballot, 0b011, 700, 1]);
    }
}

/// A block of 48 threads: warp 1 has 16 lanes; shuffles over `active_mask()` stay in them.
fn partial_warp_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let out = args.slice::<u32>(0);
    let mask = t.active_mask();
    let mut v = 1u32;
    let mut offset = 16;
    while offset > 0 {
        let other = t.shfl_down_sync(mask, v, offset);
        // A source lane that does not exist leaves the own value: add only real neighbours.
        if t.lane_id() + offset < 32 && mask & (1 << (t.lane_id() + offset)) != 0 {
            v += other;
        }
        offset /= 2;
    }
    if t.lane_id() == 0 {
        out.set((t.thread_idx().x / 32) as usize, v, t, line!());
        out.set(2 + (t.thread_idx().x / 32) as usize, mask, t, line!());
    }
}
cpu_kernel!(
    PARTIAL_WARP,
    &[slice(ScalarType::U32, true)],
    partial_warp_twin,
    true
);

#[test]
fn partial_warps_shuffle_among_their_lanes() {
    let (_, stream) = cpu();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 4).unwrap();
    stream
        .launch(
            &PARTIAL_WARP,
            LaunchConfig::new(Grid::x(1), Block::x(48)),
            &[KernelArg::slice_mut(&mut out)],
        )
        .unwrap();
    assert_eq!(out.to_host(&stream).unwrap(), [32, 16, u32::MAX, 0xffff]);
}

// ---------------------------------------------------------------------------------------------
// Atomics

fn histogram_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<u32>(0);
    let global_bins = args.slice::<u32>(1);
    let shared_out = args.slice::<u32>(2);
    let float_sum = args.slice::<f32>(3);
    let bins = t.shared_array::<u32>(0, 16);
    let tid = t.thread_idx().x as usize;
    let i = global_x(t);
    t.sync_threads();
    if i < x.len() {
        let v = x.get(i, t, line!()) as usize;
        global_bins.atomic_add(v % 16, 1, t, line!());
        bins.atomic_add(v % 16, 1, t, line!());
        float_sum.atomic_add(0, 1.0, t, line!());
    }
    t.sync_threads();
    if tid < 16 {
        shared_out.atomic_add(tid, bins.get(tid, t, line!()), t, line!());
    }
}
cpu_kernel!(
    HISTOGRAM,
    &[
        slice(ScalarType::U32, false),
        slice(ScalarType::U32, true),
        slice(ScalarType::U32, true),
        slice(ScalarType::F32, true),
    ],
    histogram_twin,
    true
);

#[test]
fn histogram_with_global_and_shared_atomics() {
    let (_, stream) = cpu();
    let n = 100_000;
    let host: Vec<u32> = (0..n as u32)
        .map(|v| v.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut global_bins = DeviceBuffer::<u32>::zeroed(&stream, 16).unwrap();
    let mut shared_bins = DeviceBuffer::<u32>::zeroed(&stream, 16).unwrap();
    let mut sum = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
    stream
        .launch(
            &HISTOGRAM,
            LaunchConfig::for_len(n, 256),
            &[
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut global_bins),
                KernelArg::slice_mut(&mut shared_bins),
                KernelArg::slice_mut(&mut sum),
            ],
        )
        .unwrap();
    let mut expected = vec![0u32; 16];
    for v in &host {
        expected[*v as usize % 16] += 1;
    }
    assert_eq!(global_bins.to_host(&stream).unwrap(), expected);
    assert_eq!(shared_bins.to_host(&stream).unwrap(), expected);
    assert_eq!(sum.to_host(&stream).unwrap(), [n as f32]);
}

/// One thread runs every atomic once and records the old values it got.
fn atomic_ops_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let ints = args.slice::<i32>(0);
    let floats = args.slice::<f32>(1);
    let olds = args.slice::<i32>(2);
    let float_olds = args.slice::<f32>(3);
    let l = line!();
    let records = [
        ints.atomic_add(0, 5, t, l),                  // 10 -> 15
        ints.atomic_sub(0, 20, t, l),                 // 15 -> -5
        ints.atomic_min(0, -7, t, l),                 // -5 -> -7
        ints.atomic_max(0, 3, t, l),                  // -7 -> 3
        ints.atomic_exchange(0, 12, t, l),            // 3 -> 12
        ints.atomic_and(0, 0b1010, t, l),             // 12 -> 8
        ints.atomic_or(0, 0b0001, t, l),              // 8 -> 9
        ints.atomic_xor(0, 0b1111, t, l),             // 9 -> 6
        ints.atomic_compare_exchange(0, 6, 40, t, l), // 6 -> 40
        ints.atomic_compare_exchange(0, 6, 50, t, l), // stays 40
        ints.atomic_add(1, i32::MAX, t, l),           // wraps
    ];
    for (k, old) in records.into_iter().enumerate() {
        olds.set(k, old, t, l);
    }
    let float_records = [
        floats.atomic_add(0, 1.5, t, l),                    // 1 -> 2.5
        floats.atomic_sub(0, 0.5, t, l),                    // 2.5 -> 2
        floats.atomic_min(0, f32::NAN, t, l),               // NaN ignored: 2
        floats.atomic_max(0, 8.0, t, l),                    // 2 -> 8
        floats.atomic_exchange(0, -1.0, t, l),              // 8 -> -1
        floats.atomic_compare_exchange(0, -1.0, 4.0, t, l), // -1 -> 4
    ];
    for (k, old) in float_records.into_iter().enumerate() {
        float_olds.set(k, old, t, l);
    }
}
cpu_kernel!(
    ATOMIC_OPS,
    &[
        slice(ScalarType::I32, true),
        slice(ScalarType::F32, true),
        slice(ScalarType::I32, true),
        slice(ScalarType::F32, true),
    ],
    atomic_ops_twin,
    false
);

#[test]
fn every_atomic_returns_the_old_value() {
    let (_, stream) = cpu();
    let mut ints = DeviceBuffer::from_host(&stream, &[10i32, 1]).unwrap();
    let mut floats = DeviceBuffer::from_host(&stream, &[1.0f32]).unwrap();
    let mut olds = DeviceBuffer::<i32>::zeroed(&stream, 11).unwrap();
    let mut float_olds = DeviceBuffer::<f32>::zeroed(&stream, 6).unwrap();
    stream
        .launch(
            &ATOMIC_OPS,
            LaunchConfig::for_len(1, 1),
            &[
                KernelArg::slice_mut(&mut ints),
                KernelArg::slice_mut(&mut floats),
                KernelArg::slice_mut(&mut olds),
                KernelArg::slice_mut(&mut float_olds),
            ],
        )
        .unwrap();
    assert_eq!(
        olds.to_host(&stream).unwrap(),
        [10, 15, -5, -7, 3, 12, 8, 9, 6, 40, 1]
    );
    assert_eq!(ints.to_host(&stream).unwrap(), [40, i32::MIN]);
    assert_eq!(
        float_olds.to_host(&stream).unwrap(),
        [1.0, 2.5, 2.0, 2.0, 8.0, -1.0]
    );
    assert_eq!(floats.to_host(&stream).unwrap(), [4.0]);
}

fn float_bitwise_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    x.atomic_and(0, 1.0, t, line!());
}
cpu_kernel!(
    FLOAT_BITWISE,
    &[slice(ScalarType::F32, true)],
    float_bitwise_twin,
    false
);

#[test]
fn undefined_atomics_fail_the_launch() {
    let (_, stream) = cpu();
    let mut x = DeviceBuffer::from_host(&stream, &[3.0f32]).unwrap();
    let err = stream
        .launch(
            &FLOAT_BITWISE,
            LaunchConfig::for_len(1, 1),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("atomic_and on f32"), "{err}");
    assert_eq!(x.to_host(&stream).unwrap(), [3.0]);
}

// ---------------------------------------------------------------------------------------------
// Checked mode

const OOB_LINE: u32 = 9999;

/// Writes one past the end from the last thread.
fn off_by_one_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let i = global_x(t);
    if i <= x.len() {
        x.set(i, 1.0, t, OOB_LINE);
    }
}
cpu_kernel!(
    OFF_BY_ONE,
    &[slice(ScalarType::F32, true)],
    off_by_one_twin,
    false
);

#[test]
fn out_of_bounds_write_is_a_kernel_panic_at_synchronize() {
    let gpu = Gpu::cpu();
    let stream = gpu.new_stream().unwrap();
    let other = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 100).unwrap();
    let launch = |x: &mut DeviceBuffer<f32>| {
        stream.launch(
            &OFF_BY_ONE,
            LaunchConfig::for_len(101, 32),
            &[KernelArg::slice_mut(x)],
        )
    };
    launch(&mut x).unwrap();
    // Another stream has nothing pending.
    other.synchronize().unwrap();
    let err = stream.synchronize().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "kernel `OFF_BY_ONE` panicked at tests/cpu_backend.rs:{OOB_LINE} in block (3, 0, \
             0) thread (4, 0, 0): index out of bounds: the len is 100 but the index is 100"
        )
    );
    assert!(matches!(err, Error::KernelPanic { line: OOB_LINE, .. }));
    // Reported once; the in-bounds writes happened.
    stream.synchronize().unwrap();
    assert!(x.to_host(&stream).unwrap().iter().all(|&v| v == 1.0));

    // Through to_host, copy_to_host, events and the device, too.
    launch(&mut x).unwrap();
    assert!(matches!(x.to_host(&stream), Err(Error::KernelPanic { .. })));
    launch(&mut x).unwrap();
    let mut out = vec![0.0; 100];
    assert!(matches!(
        x.copy_to_host(&stream, &mut out),
        Err(Error::KernelPanic { .. })
    ));
    let before = stream.record_event().unwrap();
    launch(&mut x).unwrap();
    let after = stream.record_event().unwrap();
    before.synchronize().unwrap();
    assert!(matches!(
        after.synchronize(),
        Err(Error::KernelPanic { .. })
    ));
    launch(&mut x).unwrap();
    assert!(matches!(gpu.synchronize(), Err(Error::KernelPanic { .. })));
    // The device-wide call consumed it (other tests share the device, so only this stream's
    // state is certain).
    stream.synchronize().unwrap();

    // The next launch works (exactly 100 threads stay in bounds).
    stream
        .launch(
            &OFF_BY_ONE,
            LaunchConfig::new(Grid::x(4), Block::x(25)),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    stream.synchronize().unwrap();
}

const DIV_LINE: u32 = 4242;

/// `out[i] = x[i] / d`, with the division check the macro emits.
fn divide_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<i32>(0);
    let d: i32 = args.scalar(1);
    let i = global_x(t);
    if i < x.len() {
        let v = x.get(i, t, line!());
        let q = if d == 0 {
            t.fail(2, DIV_LINE, v as u64, 0);
            0
        } else if v == i32::MIN && d == -1 {
            t.fail(3, DIV_LINE, v as u64, 0);
            v
        } else {
            v / d
        };
        x.set(i, q, t, line!());
    }
}
cpu_kernel!(
    DIVIDE,
    &[
        slice(ScalarType::I32, true),
        ParamKind::Scalar(ScalarType::I32)
    ],
    divide_twin,
    false
);

#[test]
fn division_checks_report_like_rust() {
    let (_, stream) = cpu();
    let mut x = DeviceBuffer::from_host(&stream, &[10i32, i32::MIN]).unwrap();
    let divide = |d: i32, x: &mut DeviceBuffer<i32>| {
        stream
            .launch(
                &DIVIDE,
                LaunchConfig::for_len(2, 32),
                &[KernelArg::slice_mut(x), KernelArg::scalar(d)],
            )
            .unwrap();
        stream.synchronize()
    };
    let err = divide(0, &mut x).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "kernel `DIVIDE` panicked at tests/cpu_backend.rs:{DIV_LINE} in block (0, 0, 0) \
             thread (0, 0, 0): attempt to divide by zero"
        )
    );
    let mut y = DeviceBuffer::from_host(&stream, &[10i32, i32::MIN]).unwrap();
    let err = divide(-1, &mut y).unwrap_err();
    assert!(
        err.to_string().ends_with("attempt to divide with overflow"),
        "{err}"
    );
    let mut z = DeviceBuffer::from_host(&stream, &[10i32, 20]).unwrap();
    divide(5, &mut z).unwrap();
    assert_eq!(z.to_host(&stream).unwrap(), [2, 4]);
}

// ---------------------------------------------------------------------------------------------
// Contract violations, panics and deadlocks are errors, not hangs

/// Thread 0 waits in `sync_warp` while every other thread waits at `sync_threads`.
fn deadlock_twin(_args: &CpuArgs<'_>, t: &ThreadCtx) {
    if t.thread_idx().x == 0 {
        t.sync_warp();
    } else {
        t.sync_threads();
    }
}
cpu_kernel!(DEADLOCK, &[], deadlock_twin, true);

/// Even threads hit one barrier, odd threads another one twice: a classic divergent barrier.
fn divergent_barrier_twin(_args: &CpuArgs<'_>, t: &ThreadCtx) {
    if t.thread_idx().x.is_multiple_of(2) {
        t.sync_threads();
    } else {
        t.sync_threads();
        t.sync_threads();
        // Never returns early: keeps waiting at a barrier the even threads never reach again.
        t.sync_threads();
    }
}
cpu_kernel!(DIVERGENT, &[], divergent_barrier_twin, true);

#[test]
fn a_deadlock_is_an_error_naming_the_kernel() {
    let (_, stream) = cpu();
    let err = stream
        .launch(&DEADLOCK, LaunchConfig::new(Grid::x(3), Block::x(64)), &[])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `DEADLOCK` failed on the CPU backend: deadlock in block"),
        "{text}"
    );
    assert!(
        text.contains("63 thread(s) wait at sync_threads and 1 in warp operations"),
        "{text}"
    );
    // Odd threads wait at their second barrier after the even ones returned: returned threads
    // count as arrived, so that one completes, as do the rest. No deadlock.
    stream
        .launch(&DIVERGENT, LaunchConfig::new(Grid::x(2), Block::x(64)), &[])
        .unwrap();
    // The next launch works.
    let sums = block_sums(&stream, &[1, 2, 3], 32);
    assert_eq!(sums, [6]);
}

fn needs_sync_lie_twin(_args: &CpuArgs<'_>, t: &ThreadCtx) {
    t.sync_threads();
}
cpu_kernel!(NEEDS_SYNC_LIE, &[], needs_sync_lie_twin, false);

fn panicking_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<u32>(0);
    if global_x(t) == 77 {
        panic!("twin bug at thread {}", global_x(t));
    }
    x.set(global_x(t), 1, t, line!());
}
cpu_kernel!(
    PANICKING,
    &[slice(ScalarType::U32, true)],
    panicking_twin,
    false
);
cpu_kernel!(
    PANICKING_SYNC,
    &[slice(ScalarType::U32, true)],
    panicking_twin,
    true
);

fn wrong_types_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f64>(0);
    x.set(0, 1.0, t, line!());
}
cpu_kernel!(
    WRONG_TYPES,
    &[slice(ScalarType::F32, true)],
    wrong_types_twin,
    false
);

fn read_only_write_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    x.set(0, 1.0, t, line!());
}
cpu_kernel!(
    READ_ONLY_WRITE,
    &[slice(ScalarType::F32, false)],
    read_only_write_twin,
    false
);

fn read_only_as_mutable_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice_mut::<f32>(0);
    x.set(0, 1.0, t, line!());
}
cpu_kernel!(
    READ_ONLY_AS_MUTABLE,
    &[slice(ScalarType::F32, false)],
    read_only_as_mutable_twin,
    false
);

fn ones_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice_mut::<u32>(0);
    let i = global_x(t);
    x.set(i, 1, t, line!());
}

/// A block twin that runs its loop as if the race checker were off, whatever the launch says.
fn ones_unchecked_block(args: &CpuArgs<'_>, block: &mut ThreadCtx, first: u32) {
    let x = args.slice_mut::<u32>(0);
    block.__each_thread::<false>(first, |t| {
        let i = (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize;
        x.set(i, 1, t, line!());
    });
}

static ONES_UNCHECKED_BLOCK: Kernel = Kernel::__generated_v2(
    "ones",
    "ones",
    "/* CUDA source: not used by the CPU backend */",
    &[slice(ScalarType::U32, true)],
    "tests/cpu_backend.rs",
    true,
)
.with_cpu(ones_twin, false)
.__with_cpu_block(ones_unchecked_block);

/// A block twin's loop without race checks runs where the checker is off and is refused
/// where it is on, rather than letting accesses go unchecked.
#[test]
fn a_block_loop_without_race_checks_is_refused_under_the_checker() {
    let gpu = Gpu::cpu();
    let stream = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&stream, 64).unwrap();
    let config = LaunchConfig::for_len(64, 32);
    stream
        .launch(
            &ONES_UNCHECKED_BLOCK,
            config,
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), [1; 64]);

    let mut x = DeviceBuffer::<u32>::zeroed(&stream, 64).unwrap();
    let err = stream
        .launch(
            &ONES_UNCHECKED_BLOCK,
            config.racecheck(true),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::CpuBackend { reason, .. } if reason.contains("without race checks")),
        "{err}"
    );
    assert_eq!(x.to_host(&stream).unwrap(), [0; 64]);
}

#[test]
fn broken_twins_are_errors() {
    let (_, stream) = cpu();
    let reason = |result: gpu_dsl_runtime::Result<()>| match result {
        Err(Error::CpuBackend { reason, .. }) => reason,
        other => panic!("expected CpuBackend, got {other:?}"),
    };
    let r = reason(stream.launch(&NEEDS_SYNC_LIE, LaunchConfig::for_len(4, 4), &[]));
    assert!(r.contains("needs_sync = false"), "{r}");

    let mut x = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    for kernel in [&PANICKING, &PANICKING_SYNC] {
        let r = reason(stream.launch(
            kernel,
            LaunchConfig::for_len(256, 128),
            &[KernelArg::slice_mut(&mut x)],
        ));
        assert!(
            r.contains("panicked in thread (77, 0, 0) of block (0, 0, 0): twin bug at thread 77"),
            "{r}"
        );
    }

    let mut f = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let r = reason(stream.launch(
        &WRONG_TYPES,
        LaunchConfig::for_len(1, 1),
        &[KernelArg::slice_mut(&mut f)],
    ));
    assert!(
        r.contains("parameter 0 as a slice of f64, but it is &mut [f32]"),
        "{r}"
    );
    let r = reason(stream.launch(
        &READ_ONLY_WRITE,
        LaunchConfig::for_len(1, 1),
        &[KernelArg::slice(&f)],
    ));
    assert!(r.contains("read-only slice"), "{r}");
    assert_eq!(f.to_host(&stream).unwrap(), [0.0; 4]);
    let r = reason(stream.launch(
        &READ_ONLY_AS_MUTABLE,
        LaunchConfig::for_len(1, 1),
        &[KernelArg::slice(&f)],
    ));
    assert!(
        r.contains("parameter 0 as a mutable slice of f32, but it is &[f32]"),
        "{r}"
    );
    assert_eq!(f.to_host(&stream).unwrap(), [0.0; 4]);
    stream.synchronize().unwrap();
}

#[test]
fn launches_are_validated_as_on_a_gpu() {
    let (_, stream) = cpu();
    let x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let too_many_threads = LaunchConfig::new(Grid::x(1), Block::x(2048));
    let too_much_shared = LaunchConfig::for_len(4, 4).with_shared_mem(300_000);
    for config in [too_many_threads, too_much_shared] {
        let result = stream.launch(
            &SAXPY,
            config,
            &[
                KernelArg::scalar(1.0f32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y),
            ],
        );
        assert!(matches!(result, Err(Error::InvalidLaunch(_))), "{result:?}");
    }
    assert!(matches!(
        stream.launch(
            &SAXPY,
            LaunchConfig::for_len(4, 4),
            &[KernelArg::scalar(1.0f32)]
        ),
        Err(Error::ArgumentMismatch { index: 1, .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Generic kernels

/// `fill::<T, N>(x: &mut [T])`: writes N (as T) into the first N elements.
fn fill_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    fn body<T: Scalar>(args: &CpuArgs<'_>, t: &ThreadCtx, value: T) {
        let x = args.slice::<T>(0);
        let n = args.template_const(1) as usize;
        let i = global_x(t);
        if i < n {
            x.set(i, value, t, line!());
        }
    }
    let n = args.template_const(1);
    match args.template_type(0) {
        Some(ScalarType::F32) => body::<f32>(args, t, n as f32),
        Some(ScalarType::U64) => body::<u64>(args, t, n),
        Some(ScalarType::F16) => body::<f16>(args, t, f16::from_f32(n as f32)),
        _ => {}
    }
}

static FILL: Kernel = Kernel::__generated_generic(
    "fill",
    "/* template source */",
    &[ParamKind::GenericSlice {
        param: 0,
        mutable: true,
    }],
    &[TemplateParam::Type, TemplateParam::Const],
    "tests/cpu_backend.rs",
    true,
)
.with_cpu(fill_twin as CpuKernelFn, false);

#[test]
fn generic_kernels_read_their_template_arguments() {
    let (_, stream) = cpu();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    stream
        .launch_generic(
            &FILL,
            &[TemplateArg::of::<f32>(), TemplateArg::Const(7)],
            LaunchConfig::for_len(10, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(
        x.to_host(&stream).unwrap(),
        [7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 0.0, 0.0, 0.0]
    );
    let mut h = DeviceBuffer::<f16>::zeroed(&stream, 3).unwrap();
    stream
        .launch_generic(
            &FILL,
            &[TemplateArg::of::<f16>(), TemplateArg::Const(2)],
            LaunchConfig::for_len(3, 32),
            &[KernelArg::slice_mut(&mut h)],
        )
        .unwrap();
    let two = f16::from_f32(2.0);
    assert_eq!(h.to_host(&stream).unwrap(), [two, two, f16::ZERO]);
    // Template arguments are checked as for CUDA.
    assert!(matches!(
        stream.launch(
            &FILL,
            LaunchConfig::for_len(1, 1),
            &[KernelArg::slice_mut(&mut x)]
        ),
        Err(Error::TemplateArgs { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Events, buffers, pinned memory

#[test]
fn events_time_a_launch() {
    let (_, stream) = cpu();
    let n = 1 << 20;
    let x = DeviceBuffer::from_host(&stream, &vec![1.0f32; n]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let start = stream.record_event().unwrap();
    for _ in 0..3 {
        stream
            .launch(
                &SAXPY,
                LaunchConfig::for_len(n, 256),
                &[
                    KernelArg::scalar(2.0f32),
                    KernelArg::slice(&x),
                    KernelArg::slice_mut(&mut y),
                ],
            )
            .unwrap();
    }
    let end = stream.record_event().unwrap();
    let ms = start.elapsed_ms(&end).unwrap();
    assert!(ms > 0.0 && ms < 60_000.0, "{ms}");
    assert!(end.elapsed_ms(&start).unwrap() < 0.0, "signed like CUDA");
    assert!(end.is_complete().unwrap());
    end.synchronize().unwrap();
    let other = Gpu::cpu().new_stream().unwrap();
    other.wait_event(&end).unwrap();
    assert_eq!(y.to_host(&stream).unwrap()[n - 1], 6.0);
}

fn round_trip<T: Scalar + PartialEq + std::fmt::Debug>(stream: &Stream, values: &[T]) {
    let buffer = DeviceBuffer::from_host(stream, values).unwrap();
    assert_eq!(buffer.to_host(stream).unwrap(), values);
    let mut copy = DeviceBuffer::<T>::zeroed(stream, values.len()).unwrap();
    copy.copy_from(stream, &buffer).unwrap();
    let mut out = values.to_vec();
    out.iter_mut().for_each(|v| *v = T::from_bits(0));
    copy.copy_to_host(stream, &mut out).unwrap();
    assert_eq!(out, values);
}

#[test]
fn buffers_and_pinned_copies() {
    let (gpu, stream) = cpu();
    round_trip(&stream, &[true, false, true]);
    round_trip(&stream, &[-1i32, 2, i32::MAX]);
    round_trip(&stream, &[1u32, u32::MAX]);
    round_trip(&stream, &[i64::MIN, 5]);
    round_trip(&stream, &[u64::MAX, 7]);
    round_trip(&stream, &[usize::MAX, 0]);
    round_trip(&stream, &[1.5f32, -0.0]);
    round_trip(&stream, &[f64::MAX, 1e-300]);
    round_trip(&stream, &[f16::from_f32(0.5), f16::MAX]);
    round_trip(&stream, &[bf16::from_f32(-2.0), bf16::MIN_POSITIVE]);

    let empty = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    assert!(empty.is_empty() && empty.to_host(&stream).unwrap().is_empty());
    assert!(format!("{empty:?}").contains("CPU backend"));

    // Memory accounting is checked in `cpu_memory_stats.rs`, a process of its own: the CPU
    // device is shared, and the tests here allocate on it concurrently.
    let mut device = DeviceBuffer::<u32>::zeroed(&stream, 1000).unwrap();
    let pinned = PinnedBuffer::from_slice(&gpu, &(0..1000u32).collect::<Vec<_>>()).unwrap();
    device.copy_from_pinned(&stream, &pinned).unwrap();
    let mut back = PinnedBuffer::<u32>::new(&gpu, 1000).unwrap();
    device.copy_to_pinned(&stream, &mut back).unwrap();
    back.synchronize().unwrap();
    assert_eq!(back.as_slice().unwrap(), pinned.as_slice().unwrap());
    back.as_mut_slice().unwrap()[0] = 99;
    device.copy_from_pinned(&stream, &back).unwrap();
    assert_eq!(device.to_host(&stream).unwrap()[0], 99);
    device.copy_from_host(&stream, &vec![5; 1000]).unwrap();
    assert_eq!(device.to_host(&stream).unwrap(), vec![5; 1000]);
    assert!(matches!(
        device.copy_from_host(&stream, &[1, 2]),
        Err(Error::LengthMismatch {
            expected: 1000,
            found: 2,
            ..
        })
    ));
    drop(device);
    let mut huge_error = DeviceBuffer::<u64>::zeroed(&stream, usize::MAX / 4);
    assert!(matches!(huge_error, Err(Error::AllocationTooLarge { .. })));
    huge_error = DeviceBuffer::zeroed(&stream, 1);
    assert!(huge_error.is_ok());
}

#[test]
fn dim3_is_plain_data() {
    let d = Dim3::new(1, 2, 3);
    assert_eq!((d.x, d.y, d.z), (1, 2, 3));
    assert_eq!(Dim3::default(), Dim3::new(0, 0, 0));
}

// ---------------------------------------------------------------------------------------------
// Tensor-core MMA

/// One warp: D = A * B + C with A (16x16, f16, row-major), B (16x8, f16, row-major) and C, D
/// (16x8, f32), each lane loading its fragments as PTX lays them out.
fn mma_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let a = args.slice::<f16>(0);
    let b = args.slice::<f16>(1);
    let c = args.slice::<f32>(2);
    let d = args.slice::<f32>(3);
    let lane = t.lane_id() as usize;
    let (g, tig) = (lane / 4, lane % 4);
    let pack = |lo: f16, hi: f16| u32::from(lo.to_bits()) | u32::from(hi.to_bits()) << 16;
    let a_at = |i: usize| {
        let row = if i < 2 || (4..6).contains(&i) {
            g
        } else {
            g + 8
        };
        let col = tig * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
        a.get(row * 16 + col, t, line!())
    };
    let b_at = |i: usize| {
        let row = tig * 2 + (i & 1) + if i >= 2 { 8 } else { 0 };
        b.get(row * 8 + g, t, line!())
    };
    let cd = |i: usize| (g + if i >= 2 { 8 } else { 0 }) * 8 + tig * 2 + (i & 1);
    let a_regs = [
        pack(a_at(0), a_at(1)),
        pack(a_at(2), a_at(3)),
        pack(a_at(4), a_at(5)),
        pack(a_at(6), a_at(7)),
    ];
    let b_regs = [pack(b_at(0), b_at(1)), pack(b_at(2), b_at(3))];
    let acc: [f32; 4] = std::array::from_fn(|i| c.get(cd(i), t, line!()));
    // Twice in a row: the second uses the first's result as its accumulator.
    let once = gpu_dsl_runtime::cpu::mma_m16n8k16(t, ScalarType::F16, acc, a_regs, b_regs);
    let twice = gpu_dsl_runtime::cpu::mma_m16n8k16(t, ScalarType::F16, once, a_regs, b_regs);
    for (i, value) in twice.into_iter().enumerate() {
        d.set(cd(i), value, t, line!());
    }
}
cpu_kernel!(
    MMA,
    &[
        slice(ScalarType::F16, false),
        slice(ScalarType::F16, false),
        slice(ScalarType::F32, false),
        slice(ScalarType::F32, true),
    ],
    mma_twin,
    true
);

#[test]
fn tensor_core_mma_matches_a_matrix_product() {
    let (_, stream) = cpu();
    let a: Vec<f32> = (0..256).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let b: Vec<f32> = (0..128).map(|i| ((i * 5) % 7) as f32 - 3.0).collect();
    let c: Vec<f32> = (0..128).map(|i| i as f32 * 0.5).collect();
    let to_f16 = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    let a_buf = DeviceBuffer::from_host(&stream, &to_f16(&a)).unwrap();
    let b_buf = DeviceBuffer::from_host(&stream, &to_f16(&b)).unwrap();
    let c_buf = DeviceBuffer::from_host(&stream, &c).unwrap();
    let mut d_buf = DeviceBuffer::<f32>::zeroed(&stream, 128).unwrap();
    // Two warps run the same product independently.
    stream
        .launch(
            &MMA,
            LaunchConfig::new(Grid::x(2), Block::x(64)),
            &[
                KernelArg::slice(&a_buf),
                KernelArg::slice(&b_buf),
                KernelArg::slice(&c_buf),
                KernelArg::slice_mut(&mut d_buf),
            ],
        )
        .unwrap();
    let mut expected = c.clone();
    for _ in 0..2 {
        for row in 0..16 {
            for col in 0..8 {
                let dot: f32 = (0..16).map(|k| a[row * 16 + k] * b[k * 8 + col]).sum();
                expected[row * 8 + col] += dot;
            }
        }
    }
    assert_eq!(d_buf.to_host(&stream).unwrap(), expected);
}

#[test]
fn graphs_need_a_cuda_device() {
    let (_gpu, stream) = cpu();
    let err = stream.capture(|_| Ok(())).unwrap_err();
    assert!(
        matches!(err, gpu_dsl_runtime::Error::CudaOnly { .. }),
        "{err}"
    );
}
