//! Barrier-free kernels on the CPU backend run a block as one loop over its threads (the block
//! twin), which keeps the thread's indices in locals and hands the context to what else needs
//! it: in every block shape, the indices a kernel reads directly and through a device function
//! agree with the thread's, a failed assertion names its thread and ends only that one, and the
//! race checker still sees every access, in the kernel and in its device functions. Kernels
//! whose `&mut` parameters each thread owns run an owned loop with plain accesses in
//! one-dimensional launches, with the results of the atomic loop. The first two tests also run
//! on a GPU when there is one.

mod common;

use std::sync::{Mutex, MutexGuard};

use common::assert_compiles_with_nvrtc;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, Error};

/// One test at a time on a device: a GPU has one error slot for all its streams, so a panic
/// launched by one test could surface in another's synchronize.
fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The CPU backend, with and without the race checker, and the GPU when there is one.
fn devices() -> Vec<Gpu> {
    let mut devices = vec![Gpu::cpu(), Gpu::cpu_racecheck()];
    let best = test_device();
    if best.backend() != gpu_dsl::runtime::Backend::Cpu {
        devices.push(best);
    }
    devices
}

#[device]
fn packed_thread_idx() -> u32 {
    thread_idx().x + 100 * thread_idx().y + 10_000 * thread_idx().z
}

/// Each thread writes its indices, read in the kernel and in a device function.
#[kernel]
fn indices(out: &mut [u32]) {
    let (dx, dy, dz) = (block_dim().x, block_dim().y, block_dim().z);
    let linear = (thread_idx().z * dy + thread_idx().y) * dx + thread_idx().x;
    let block = (block_idx().z * grid_dim().y + block_idx().y) * grid_dim().x + block_idx().x;
    let i = (block * dx * dy * dz + linear) as usize * 3;
    out[i] = thread_idx().x + 100 * thread_idx().y + 10_000 * thread_idx().z;
    out[i + 1] = packed_thread_idx();
    out[i + 2] = block_idx().x + 100 * block_idx().y + 10_000 * block_idx().z;
}

#[test]
fn threads_see_their_own_indices_in_every_block_shape() {
    let _lock = exclusive();
    let shapes = [
        (Grid::x(3), Block::x(64)),
        (Grid::xy(2, 3), Block::xy(8, 5)),
        (Grid::xyz(2, 1, 2), Block::xyz(4, 3, 5)),
    ];
    for gpu in devices() {
        let stream = gpu.default_stream();
        for (grid, block) in shapes {
            let blocks = grid.x * grid.y * grid.z;
            let threads = block.x * block.y * block.z;
            let mut out =
                DeviceBuffer::<u32>::zeroed(&stream, (blocks * threads * 3) as usize).unwrap();
            indices::launch(&stream, LaunchConfig::new(grid, block), &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            let mut want = Vec::new();
            for (bz, by, bx) in (0..grid.z)
                .flat_map(|z| (0..grid.y).flat_map(move |y| (0..grid.x).map(move |x| (z, y, x))))
            {
                for (tz, ty, tx) in (0..block.z).flat_map(|z| {
                    (0..block.y).flat_map(move |y| (0..block.x).map(move |x| (z, y, x)))
                }) {
                    let packed = tx + 100 * ty + 10_000 * tz;
                    want.extend([packed, packed, bx + 100 * by + 10_000 * bz]);
                }
            }
            assert_eq!(got, want, "{} {grid:?} {block:?}", gpu.name());
        }
    }
}

/// Marks each thread's element, except the thread whose linear index is `fail`, which stops at
/// an assertion first.
#[kernel]
fn mark_all_but(fail: u32, out: &mut [u32]) {
    let (dx, dy, dz) = (block_dim().x, block_dim().y, block_dim().z);
    let linear = (thread_idx().z * dy + thread_idx().y) * dx + thread_idx().x;
    let i = (block_idx().x * dx * dy * dz + linear) as usize;
    assert!(linear != fail, "thread {} stops here", linear);
    out[i] = linear + 1;
}

#[test]
fn a_failed_assertion_ends_only_its_thread_in_a_3d_block() {
    let _lock = exclusive();
    let block = Block::xyz(8, 4, 3);
    let threads = 8 * 4 * 3;
    // Thread (3, 2, 1): the loop resumes mid-row, mid-plane after it.
    let fail = (4 + 2) * 8 + 3;
    for gpu in devices() {
        let stream = gpu.new_stream().unwrap();
        let _ = gpu.synchronize();
        for checked in [false, true] {
            let mut out = DeviceBuffer::<u32>::zeroed(&stream, 2 * threads).unwrap();
            let config = LaunchConfig::new(Grid::x(2), block).checked(checked);
            mark_all_but::launch(&stream, config, fail, &mut out).unwrap();
            let err = stream.synchronize().expect_err("the assertion fails");
            let Error::KernelPanic {
                block,
                thread,
                message,
                ..
            } = &err
            else {
                panic!("expected a kernel panic, got {err}");
            };
            assert!(block[0] < 2 && block[1..] == [0, 0], "{err}");
            assert_eq!(*thread, [3, 2, 1], "{err}");
            assert_eq!(*message, format!("thread {fail} stops here"));
            let got = out.to_host(&stream).unwrap();
            let want: Vec<u32> = (0..2 * threads as u32)
                .map(|i| i % threads as u32)
                .map(|linear| if linear == fail { 0 } else { linear + 1 })
                .collect();
            assert_eq!(got, want, "{} checked {checked}", gpu.name());
        }
    }
}

/// Every thread adds its element to its neighbour's: a race across threads of a block that
/// the checker must see through the block loop.
#[kernel]
fn add_to_neighbour(x: &mut [f32]) {
    let i = global_idx().x;
    if i + 1 < x.len() {
        x[i + 1] += x[i];
    }
}

#[device]
fn add_to_next(x: &mut [f32], i: usize) {
    if i + 1 < x.len() {
        x[i + 1] += x[i];
    }
}

/// The same race, in a device function.
#[kernel]
fn add_to_neighbour_in_device_function(x: &mut [f32]) {
    add_to_next(x, global_idx().x);
}

#[test]
fn the_race_checker_sees_accesses_in_the_block_loop() {
    type Launch = fn(&Stream, LaunchConfig, &mut DeviceBuffer<f32>) -> gpu_dsl::runtime::Result<()>;
    let launches: [(&str, Launch); 2] = [
        ("kernel", |s, c, x| add_to_neighbour::launch(s, c, x)),
        ("device function", |s, c, x| {
            add_to_neighbour_in_device_function::launch(s, c, x)
        }),
    ];
    for (what, launch) in launches {
        let stream = Gpu::cpu_racecheck().default_stream();
        let mut x = DeviceBuffer::from_host(&stream, &[1.0f32; 64]).unwrap();
        let err =
            launch(&stream, LaunchConfig::for_len(64, 32), &mut x).expect_err("the race is caught");
        let Error::DataRace { first, second, .. } = &err else {
            panic!("{what}: expected a data race, got {err}");
        };
        assert_ne!(first.thread, second.thread, "{what}: {err}");
        // Without the checker the same launch runs, its threads one after another.
        let stream = Gpu::cpu().default_stream();
        let mut x = DeviceBuffer::from_host(&stream, &[1.0f32; 64]).unwrap();
        launch(&stream, LaunchConfig::for_len(64, 32), &mut x).unwrap();
        let mut want = [1.0f32; 64];
        for i in 0..63 {
            want[i + 1] += want[i];
        }
        assert_eq!(x.to_host(&stream).unwrap(), want, "{what}");
    }
}

/// Saxpy through a spelled-out index behind a `let`: `y` is owned, `x` read plainly.
#[kernel]
fn saxpy_spelled(a: f32, x: &[f32], y: &mut [f32]) {
    let i = block_dim().x as usize * block_idx().x as usize + thread_idx().x as usize;
    let j = i;
    if j < y.len() {
        y[j] = a * x[j] + y[j];
    }
}

/// Reverses into `y`: another thread's element, so `y` keeps its atomic accesses.
#[kernel]
fn reverse(x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    let n = y.len();
    if i < n && i < x.len() {
        y[n - 1 - i] = x[i] + 1.0;
    }
}

/// Only the first row of a two-dimensional block writes: `y` is proven owned, but the launch
/// is not one-dimensional, so the block runs its loop with atomic accesses.
#[kernel]
fn first_row(x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if thread_idx().y == 0 && i < y.len() {
        y[i] = 3.0 * x[i] + y[i];
    }
}

/// Kernels whose `&mut` parameter the macro proves owned, and ones it does not, give the same
/// results through the owned loop (`Gpu::cpu()`, one-dimensional launches), through the loop
/// with atomic accesses (the race checker on, or a two-dimensional launch) and by hand.
#[test]
fn owned_and_atomic_loops_agree() {
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 3.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let saxpy: Vec<f32> = (0..n).map(|i| 2.0 * xs[i] + ys[i]).collect();
    let reversed: Vec<f32> = (0..n).map(|i| xs[n - 1 - i] + 1.0).collect();
    let row: Vec<f32> = (0..n).map(|i| 3.0 * xs[i] + ys[i]).collect();
    for gpu in [Gpu::cpu(), Gpu::cpu_racecheck()] {
        let stream = gpu.new_stream().unwrap();
        let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();
        saxpy_spelled::launch(&stream, config, 2.0, &x, &mut y).unwrap();
        assert_eq!(
            y.to_host(&stream).unwrap(),
            saxpy,
            "saxpy on {}",
            gpu.name()
        );
        let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();
        reverse::launch(&stream, config, &x, &mut y).unwrap();
        assert_eq!(
            y.to_host(&stream).unwrap(),
            reversed,
            "reverse on {}",
            gpu.name()
        );
        let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();
        let config = LaunchConfig::new(Grid::x(n.div_ceil(64) as u32), Block::xy(64, 2));
        first_row::launch(&stream, config, &x, &mut y).unwrap();
        assert_eq!(
            y.to_host(&stream).unwrap(),
            row,
            "first row on {}",
            gpu.name()
        );
        stream.synchronize().unwrap();
    }
}

/// An owned element read out of bounds is reported as any other, from the owned loop too.
#[kernel]
fn unguarded(y: &mut [f32]) {
    let i = global_idx().x;
    y[i] = y[i] + 1.0;
}

#[test]
fn an_owned_loop_reports_out_of_bounds_accesses() {
    let stream = Gpu::cpu().new_stream().unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &[1.0f32; 40]).unwrap();
    unguarded::launch(&stream, LaunchConfig::for_len(64, 32), &mut y).unwrap();
    let err = stream
        .synchronize()
        .expect_err("threads 40.. index out of bounds");
    assert!(err.to_string().contains("out of bounds"), "{err}");
    assert_eq!(y.to_host(&stream).unwrap(), [2.0f32; 40]);
}

/// Marks each thread's element, owned, except thread `fail`'s, which stops at an assertion.
#[kernel]
fn mark_owned_but(fail: usize, out: &mut [u32]) {
    let i = global_idx().x;
    assert!(i != fail, "thread {} stops here", i);
    if i < out.len() {
        out[i] = i as u32 + 1;
    }
}

/// A failed assertion in the owned loop ends only its thread; the loop resumes after it.
#[test]
fn a_failed_assertion_ends_only_its_thread_in_the_owned_loop() {
    let fail = 64 + 6;
    for gpu in [Gpu::cpu(), Gpu::cpu_racecheck()] {
        let stream = gpu.new_stream().unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 128).unwrap();
        mark_owned_but::launch(&stream, LaunchConfig::for_len(128, 64), fail, &mut out).unwrap();
        let err = stream.synchronize().expect_err("the assertion fails");
        let Error::KernelPanic { block, thread, .. } = &err else {
            panic!("expected a kernel panic, got {err}");
        };
        assert_eq!((*block, *thread), ([1, 0, 0], [6, 0, 0]), "{err}");
        let want: Vec<u32> = (0..128)
            .map(|i| if i == fail { 0 } else { i as u32 + 1 })
            .collect();
        assert_eq!(out.to_host(&stream).unwrap(), want, "{}", gpu.name());
    }
}

#[test]
fn compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&saxpy_spelled::KERNEL, &[]),
        (&reverse::KERNEL, &[]),
        (&first_row::KERNEL, &[]),
        (&unguarded::KERNEL, &[]),
        (&mark_owned_but::KERNEL, &[]),
        (&indices::KERNEL, &[]),
        (&mark_all_but::KERNEL, &[]),
        (&add_to_neighbour::KERNEL, &[]),
        (&add_to_neighbour_in_device_function::KERNEL, &[]),
    ]);
}
