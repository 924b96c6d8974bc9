//! `grid_sync()` and cooperative launches: multi-phase kernels in one launch (an iterative heat
//! stencil, a one-launch reduction, a barrier inside a device function) compared with plain
//! Rust, the residency limit and its error, and the race checker across grid barriers. Every
//! test runs on the CPU backend, and on the GPU too where one is present.
//!
//! The tests take turns (`one_at_a_time`): a cooperative grid sized to all the device holds
//! cannot be resident while another test's kernels occupy multiprocessors, and would wait at
//! its first barrier for blocks that never start.

mod common;

use common::{assert_compiles_with_nvrtc, backends as devices};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, Backend, Error, SiteAction, TemplateArg};

/// Held for the whole of a test, so that no two tests' kernels share the GPU.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `steps` explicit heat-equation steps on `a` with fixed ends, ping-ponging through `b`: each
/// step reads the neighbours the previous step wrote, in any block; the result ends in `a` when
/// `steps` is even, in `b` when odd.
#[kernel]
fn heat_steps(steps: u32, alpha: f32, a: &mut [f32], b: &mut [f32]) {
    let n = a.len();
    for step in 0..steps {
        let mut i = global_idx().x;
        while i < n {
            if step % 2 == 0 {
                b[i] = if i == 0 || i == n - 1 {
                    a[i]
                } else {
                    a[i] + alpha * (a[i - 1] - 2.0 * a[i] + a[i + 1])
                };
            } else {
                a[i] = if i == 0 || i == n - 1 {
                    b[i]
                } else {
                    b[i] + alpha * (b[i - 1] - 2.0 * b[i] + b[i + 1])
                };
            }
            i += grid_size().x;
        }
        grid_sync();
    }
}

fn heat_reference(initial: &[f32], steps: u32, alpha: f32) -> Vec<f32> {
    let mut a = initial.to_vec();
    let n = a.len();
    for _ in 0..steps {
        let mut next = a.clone();
        for i in 1..n - 1 {
            next[i] = a[i] + alpha * (a[i - 1] - 2.0 * a[i] + a[i + 1]);
        }
        a = next;
    }
    a
}

#[test]
fn a_heat_stencil_runs_many_steps_in_one_launch_on_a_persistent_grid() {
    let _turn = one_at_a_time();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let block = Block::x(128);
        let shape = LaunchConfig::new(Grid::x(1), block);
        let max = stream
            .max_cooperative_blocks(&heat_steps::KERNEL, shape)
            .unwrap();
        assert!(max >= 1, "{max}");
        // More elements than threads, so each thread strides; few enough blocks to stay quick
        // on the CPU, all the device holds on a GPU.
        let blocks = if gpu.backend() == Backend::Cpu {
            max.min(6)
        } else {
            max
        };
        let n = blocks as usize * 128 * 3 + 17;
        let initial: Vec<f32> = (0..n)
            .map(|i| {
                if (n / 3..n / 2).contains(&i) {
                    100.0
                } else {
                    (i % 7) as f32
                }
            })
            .collect();
        for steps in [1u32, 40, 41] {
            let mut a = DeviceBuffer::from_host(&stream, &initial).unwrap();
            let mut b = DeviceBuffer::zeroed(&stream, n).unwrap();
            let config = LaunchConfig::new(Grid::x(blocks), block);
            heat_steps::launch(&stream, config, steps, 0.25, &mut a, &mut b).unwrap();
            let got = if steps % 2 == 0 { a } else { b }.to_host(&stream).unwrap();
            let want = heat_reference(&initial, steps, 0.25);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                    "{:?}, {steps} steps, {blocks} blocks: [{i}] {g} vs {w}",
                    gpu.backend()
                );
            }
        }
    }
}

/// The sum of `x` in one launch: each block writes its partial, and after the grid barrier
/// block 0 adds them up.
#[kernel]
fn sum_in_one_launch(x: &[u32], partials: &mut [u64], total: &mut [u64]) {
    let tile = shared_array::<u64, 256>();
    let t = thread_idx().x as usize;
    let mut acc = 0u64;
    let mut i = global_idx().x;
    while i < x.len() {
        acc += x[i] as u64;
        i += grid_size().x;
    }
    tile[t] = acc;
    sync_threads();
    let mut half = 128usize;
    while half > 0 {
        if t < half {
            tile[t] += tile[t + half];
        }
        sync_threads();
        half /= 2;
    }
    if t == 0 {
        partials[block_idx().x as usize] = tile[0];
    }
    grid_sync();
    if block_idx().x == 0 {
        let mut part = 0u64;
        let mut b = t;
        while b < grid_dim().x as usize {
            part += partials[b];
            b += 256;
        }
        tile[t] = part;
        sync_threads();
        if t == 0 {
            let mut sum = 0u64;
            for k in 0..256 {
                sum += tile[k];
            }
            total[0] = sum;
        }
    }
}

#[test]
fn a_global_sum_takes_one_launch() {
    let _turn = one_at_a_time();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let shape = LaunchConfig::new(Grid::x(1), Block::x(256));
        let max = stream
            .max_cooperative_blocks(&sum_in_one_launch::KERNEL, shape)
            .unwrap();
        for (n, blocks) in [
            (1usize, 1u32),
            (1000, 3),
            (100_003, max.min(7)),
            (1 << 20, max),
        ] {
            let host: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) >> 8)
                .collect();
            let x = DeviceBuffer::from_host(&stream, &host).unwrap();
            let mut partials = DeviceBuffer::zeroed(&stream, blocks as usize).unwrap();
            let mut total = DeviceBuffer::zeroed(&stream, 1).unwrap();
            let config = LaunchConfig::new(Grid::x(blocks), Block::x(256));
            sum_in_one_launch::launch(&stream, config, &x, &mut partials, &mut total).unwrap();
            let want: u64 = host.iter().map(|&v| u64::from(v)).sum();
            assert_eq!(
                total.to_host(&stream).unwrap(),
                [want],
                "{:?}: n {n}, {blocks} blocks",
                gpu.backend()
            );
        }
    }
}

/// A grid barrier in a device function.
#[device]
fn publish_then_wait(values: &mut [u32], i: usize, value: u32) {
    if i < values.len() {
        values[i] = value;
    }
    grid_sync();
}

/// Every thread publishes a value, then reads one another block published.
#[kernel]
fn rotate_through_device_fn(shift: usize, values: &mut [u32], out: &mut [u32]) {
    let i = global_idx().x;
    publish_then_wait(values, i, (i as u32) * 3 + 1);
    let n = values.len();
    if i < n {
        out[i] = values[(i + shift) % n];
    }
}

#[test]
fn a_grid_sync_in_a_device_function_makes_the_kernel_cooperative() {
    let _turn = one_at_a_time();
    assert!(rotate_through_device_fn::KERNEL.cooperative());
    assert!(heat_steps::KERNEL.cooperative());
    assert!(!plain_shift::KERNEL.cooperative());
    for gpu in devices() {
        let stream = gpu.default_stream();
        let (blocks, threads) = (4u32, 64u32);
        let n = (blocks * threads) as usize - 5;
        let shift = 97;
        let mut values = DeviceBuffer::zeroed(&stream, n).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks), Block::x(threads));
        rotate_through_device_fn::launch(&stream, config, shift, &mut values, &mut out).unwrap();
        let want: Vec<u32> = (0..n).map(|i| (((i + shift) % n) as u32) * 3 + 1).collect();
        assert_eq!(out.to_host(&stream).unwrap(), want, "{:?}", gpu.backend());
    }
}

/// A 2D grid of 2D blocks: every thread stages its value through dynamic shared memory,
/// publishes it, and after the grid barrier reads one another block published.
#[kernel]
fn staged_rotate_2d(shift: usize, values: &mut [u32], out: &mut [u32]) {
    let stage = dynamic_shared::<u32>();
    let threads = (block_dim().x * block_dim().y) as usize;
    let t = (thread_idx().y * block_dim().x + thread_idx().x) as usize;
    let block = (block_idx().y * grid_dim().x + block_idx().x) as usize;
    let i = block * threads + t;
    let n = values.len();
    stage[t] = (i as u32) ^ 0x5a5a;
    sync_threads();
    if i < n {
        values[i] = stage[threads - 1 - t];
    }
    grid_sync();
    if i < n {
        out[i] = values[(i + shift) % n];
    }
}

#[test]
fn two_dimensional_grids_with_dynamic_shared_memory_meet_at_grid_sync() {
    let _turn = one_at_a_time();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let block = Block::xy(16, 8);
        let small = LaunchConfig::new(Grid::x(1), block).with_shared_mem(128 * 4);
        let max = stream
            .max_cooperative_blocks(&staged_rotate_2d::KERNEL, small)
            .unwrap();
        if gpu.backend() == Backend::Cuda {
            // More shared memory per block, fewer resident blocks.
            let big = LaunchConfig::new(Grid::x(1), block).with_shared_mem(64 * 1024);
            let fewer = stream
                .max_cooperative_blocks(&staged_rotate_2d::KERNEL, big)
                .unwrap();
            assert!(fewer >= 1 && fewer < max, "{fewer} vs {max}");
        }
        let grid = Grid::xy(3, 2);
        assert!(max >= 6, "{max}");
        let n = 6 * 128 - 9;
        let shift = 200;
        let mut values = DeviceBuffer::zeroed(&stream, n).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(grid, block).with_shared_mem(128 * 4);
        staged_rotate_2d::launch(&stream, config, shift, &mut values, &mut out).unwrap();
        // Thread t of a block published the value of thread 127 - t of the same block.
        let published = |i: usize| {
            let (block, t) = (i / 128, i % 128);
            ((block * 128 + 127 - t) as u32) ^ 0x5a5a
        };
        let want: Vec<u32> = (0..n).map(|i| published((i + shift) % n)).collect();
        assert_eq!(out.to_host(&stream).unwrap(), want, "{:?}", gpu.backend());
    }
}

#[test]
fn a_grid_larger_than_the_device_holds_is_refused_with_the_numbers() {
    let _turn = one_at_a_time();
    for gpu in devices() {
        let stream = gpu.default_stream();
        for threads in [64u32, 256, 1024] {
            let block = Block::x(threads);
            let max = stream
                .max_cooperative_blocks(
                    &sum_in_one_launch::KERNEL,
                    LaunchConfig::new(Grid::x(1), block),
                )
                .unwrap();
            if gpu.backend() == Backend::Cpu {
                assert_eq!(max, 16 * 1024 / threads);
            }
            let blocks = max + 1;
            let n = 1000;
            let x = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            let mut partials = DeviceBuffer::zeroed(&stream, blocks as usize).unwrap();
            let mut total = DeviceBuffer::zeroed(&stream, 1).unwrap();
            let config = LaunchConfig::new(Grid::x(blocks), block);
            let err = sum_in_one_launch::launch(&stream, config, &x, &mut partials, &mut total)
                .expect_err("too many blocks for a cooperative launch");
            let Error::CooperativeGridTooLarge {
                kernel,
                blocks: asked,
                block_threads,
                max: most,
                ..
            } = &err
            else {
                panic!("expected CooperativeGridTooLarge, got {err}");
            };
            assert_eq!(kernel, "sum_in_one_launch");
            assert_eq!(
                (*asked, *most, *block_threads),
                (u64::from(blocks), u64::from(max), threads)
            );
            let text = err.to_string();
            for needle in [
                format!("asks for {blocks} blocks of {threads} threads"),
                format!("at most {max} such blocks"),
                "grid-stride loop".to_string(),
                "max_cooperative_blocks".to_string(),
            ] {
                assert!(text.contains(&needle), "`{needle}` missing from: {text}");
            }
        }
    }
}

/// Phase 1 writes each thread's element, phase 2 reads another block's.
#[kernel]
fn phased_shift(a: &mut [u32], b: &mut [u32]) {
    let i = global_idx().x;
    let n = a.len();
    if i < n {
        a[i] = i as u32 * 3;
    }
    grid_sync();
    if i < n {
        b[i] = a[(i + 100) % n];
    }
}

/// The same without the grid barrier: a race across blocks.
#[kernel]
fn plain_shift(a: &mut [u32], b: &mut [u32]) {
    let i = global_idx().x;
    let n = a.len();
    if i < n {
        a[i] = i as u32 * 3;
    }
    if i < n {
        b[i] = a[(i + 100) % n];
    }
}

/// Phases apart, but every thread of phase 2 writes the same word: a race inside a phase.
#[kernel]
fn race_after_the_barrier(a: &mut [u32], last: &mut [u32]) {
    let i = global_idx().x;
    if i < a.len() {
        a[i] = i as u32;
    }
    grid_sync();
    if i < a.len() {
        last[0] = a[i];
    }
}

fn racecheck_config() -> LaunchConfig {
    LaunchConfig::new(Grid::x(4), Block::x(64))
}

#[test]
fn the_race_checker_orders_accesses_across_a_grid_sync() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let n = 256;
    let mut a = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    phased_shift::launch(&stream, racecheck_config(), &mut a, &mut b).unwrap();
    let want: Vec<u32> = (0..n).map(|i| ((i + 100) % n) as u32 * 3).collect();
    assert_eq!(b.to_host(&stream).unwrap(), want);

    let err = plain_shift::launch(&stream, racecheck_config(), &mut a, &mut b)
        .expect_err("without the grid barrier, blocks race");
    let Error::DataRace {
        memory,
        first,
        second,
        ..
    } = &err
    else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "`a`", "{err}");
    assert_ne!(first.block, second.block, "{err}");

    let mut last = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
    let err = race_after_the_barrier::launch(&stream, racecheck_config(), &mut a, &mut last)
        .expect_err("a race inside a phase is still a race");
    let Error::DataRace { memory, .. } = &err else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "`last`", "{err}");
}

#[test]
fn the_race_checker_finds_nothing_in_the_correct_multi_phase_kernels() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();

    let n = 3 * 128 * 2 + 7;
    let initial: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let mut a = DeviceBuffer::from_host(&stream, &initial).unwrap();
    let mut b = DeviceBuffer::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::x(3), Block::x(128));
    heat_steps::launch(&stream, config, 6, 0.25, &mut a, &mut b).unwrap();
    let want = heat_reference(&initial, 6, 0.25);
    let got = a.to_host(&stream).unwrap();
    assert!(got
        .iter()
        .zip(&want)
        .all(|(g, w)| (g - w).abs() <= 1e-4 * w.abs().max(1.0)));

    let host: Vec<u32> = (0..5000).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut partials = DeviceBuffer::zeroed(&stream, 4).unwrap();
    let mut total = DeviceBuffer::zeroed(&stream, 1).unwrap();
    let config = LaunchConfig::new(Grid::x(4), Block::x(256));
    sum_in_one_launch::launch(&stream, config, &x, &mut partials, &mut total).unwrap();
    assert_eq!(
        total.to_host(&stream).unwrap(),
        [host.iter().map(|&v| u64::from(v)).sum::<u64>()]
    );

    let n = 6 * 128;
    let mut values = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::xy(3, 2), Block::xy(16, 8)).with_shared_mem(128 * 4);
    staged_rotate_2d::launch(&stream, config, 5, &mut values, &mut out).unwrap();

    let mut values = DeviceBuffer::zeroed(&stream, 200).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 200).unwrap();
    let config = LaunchConfig::new(Grid::x(4), Block::x(64));
    rotate_through_device_fn::launch(&stream, config, 77, &mut values, &mut out).unwrap();
    let want: Vec<u32> = (0..200)
        .map(|i| (((i + 77) % 200) as u32) * 3 + 1)
        .collect();
    assert_eq!(out.to_host(&stream).unwrap(), want);
}

/// Thread 5 of each block returns before the grid barrier the others wait at.
#[kernel]
fn thread_leaves_early(out: &mut [u32]) {
    let i = global_idx().x;
    if thread_idx().x == 5 {
        return;
    }
    grid_sync();
    out[i] = 1;
}

/// Block 1 returns before the grid barrier the other blocks wait at.
#[kernel]
fn block_leaves_early(out: &mut [u32]) {
    let i = global_idx().x;
    if block_idx().x == 1 {
        return;
    }
    grid_sync();
    out[i] = 1;
}

#[test]
fn leaving_before_a_grid_sync_others_wait_at_is_a_divergent_barrier() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    for (result, kernel) in [
        (
            thread_leaves_early::launch(&stream, racecheck_config(), &mut out),
            "thread_leaves_early",
        ),
        (
            block_leaves_early::launch(&stream, racecheck_config(), &mut out),
            "block_leaves_early",
        ),
    ] {
        let err = result.expect_err("divergent grid barrier");
        let Error::DivergentBarrier { waiting, other, .. } = &err else {
            panic!("{kernel}: expected a divergent barrier, got {err}");
        };
        assert_eq!(waiting.action, SiteAction::Waits("grid_sync"), "{err}");
        assert_eq!(other.action, SiteAction::Returned, "{err}");
        assert!(err.to_string().contains("grid_sync"), "{err}");
    }

    // Without the checker, a thread that returned counts as arrived, as at sync_threads; a
    // whole block that returned never arrives, which would hang a GPU.
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    thread_leaves_early::launch(&stream, racecheck_config(), &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    let want: Vec<u32> = (0..256).map(|i| u32::from(i % 64 != 5)).collect();
    assert_eq!(got, want);
    let err = block_leaves_early::launch(&stream, racecheck_config(), &mut out)
        .expect_err("a block that never arrives");
    let text = err.to_string();
    assert!(
        matches!(err, Error::CpuBackend { .. })
            && text.contains("block (0, 0, 0) waits at grid_sync")
            && text.contains("every thread of block (1, 0, 0) has returned"),
        "{text}"
    );
}

/// Every thread of block 1 fails an assertion before the grid barrier the others wait at.
#[kernel]
fn block_panics_before_grid_sync(out: &mut [u32]) {
    let i = global_idx().x;
    assert!(block_idx().x != 1, "block {} gives up", block_idx().x);
    grid_sync();
    out[i] = 1;
}

#[test]
fn a_panic_before_a_grid_sync_is_reported_instead_of_hanging() {
    let _turn = one_at_a_time();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let err = block_panics_before_grid_sync::launch(&stream, racecheck_config(), &mut out)
            .and_then(|()| stream.synchronize())
            .expect_err("the failed assertion");
        let Error::KernelPanic { message, block, .. } = &err else {
            panic!("{:?}: expected a kernel panic, got {err}", gpu.backend());
        };
        assert_eq!(
            (message.as_str(), *block),
            ("block 1 gives up", [1, 0, 0]),
            "{err}"
        );
    }
}

/// Half the block waits at a block barrier, the other half at a grid barrier.
#[kernel]
fn barrier_mismatch(out: &mut [u32]) {
    if thread_idx().x < 32 {
        sync_threads();
    } else {
        grid_sync();
    }
    out[global_idx().x] = 1;
}

#[test]
fn threads_split_between_sync_threads_and_grid_sync_are_divergent() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    let err = barrier_mismatch::launch(&stream, racecheck_config(), &mut out)
        .expect_err("divergent barriers");
    let Error::DivergentBarrier { waiting, other, .. } = &err else {
        panic!("expected a divergent barrier, got {err}");
    };
    assert_eq!(
        (waiting.action, other.action),
        (
            SiteAction::Waits("sync_threads"),
            SiteAction::Waits("grid_sync")
        ),
        "{err}"
    );
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    let err =
        barrier_mismatch::launch(&stream, racecheck_config(), &mut out).expect_err("a deadlock");
    let text = err.to_string();
    assert!(
        text.contains("32 thread(s) wait at sync_threads")
            && text.contains("32 more wait at grid_sync"),
        "{text}"
    );
}

/// A generic kernel that publishes `input`, then reads another block's element.
#[kernel]
fn generic_rotate<T: Number>(shift: usize, input: &[T], values: &mut [T], out: &mut [T]) {
    let i = global_idx().x;
    let n = values.len();
    if i < n {
        values[i] = input[i];
    }
    grid_sync();
    if i < n {
        out[i] = values[(i + shift) % n];
    }
}

fn rotate_generic<T: Number + PartialEq + std::fmt::Debug>(gpu: &Gpu, input: &[T]) {
    let stream = gpu.default_stream();
    let block = Block::x(96);
    let max = stream
        .max_cooperative_blocks_generic(
            &generic_rotate::KERNEL,
            &[TemplateArg::of::<T>()],
            LaunchConfig::new(Grid::x(1), block),
        )
        .unwrap();
    let blocks = max.min(5);
    let n = input.len().min(blocks as usize * 96);
    let shift = 131;
    let x = DeviceBuffer::from_host(&stream, &input[..n]).unwrap();
    let mut values = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::x(blocks), block);
    generic_rotate::launch(&stream, config, shift, &x, &mut values, &mut out).unwrap();
    let want: Vec<T> = (0..n).map(|i| input[(i + shift) % n]).collect();
    assert_eq!(out.to_host(&stream).unwrap(), want, "{:?}", gpu.backend());
}

#[test]
fn a_generic_kernel_can_call_grid_sync() {
    let _turn = one_at_a_time();
    assert!(generic_rotate::KERNEL.cooperative());
    for gpu in devices() {
        let floats: Vec<f32> = (0..480).map(|i| i as f32 * 0.5 - 7.0).collect();
        rotate_generic(&gpu, &floats);
        let ints: Vec<i64> = (0..480).map(|i| i * i - 1000).collect();
        rotate_generic(&gpu, &ints);
    }
}

#[test]
fn cooperative_launches_on_two_streams_meet_at_their_own_words() {
    let _turn = one_at_a_time();
    let gpu = test_device();
    if gpu.backend() != Backend::Cuda {
        eprintln!("skipped: concurrent streams need a CUDA device");
        return;
    }
    let streams = [gpu.new_stream().unwrap(), gpu.new_stream().unwrap()];
    let block = Block::x(256);
    let max = streams[0]
        .max_cooperative_blocks(&heat_steps::KERNEL, LaunchConfig::new(Grid::x(1), block))
        .unwrap();
    // A quarter of the device each, so both can be resident at once.
    let blocks = (max / 4).max(1);
    let n = blocks as usize * 256 * 2 + 5;
    let initial: Vec<f32> = (0..n).map(|i| ((i * 37) % 101) as f32).collect();
    let steps = 200;
    let mut buffers: Vec<_> = streams
        .iter()
        .map(|s| {
            (
                DeviceBuffer::from_host(s, &initial).unwrap(),
                DeviceBuffer::zeroed(s, n).unwrap(),
            )
        })
        .collect();
    let config = LaunchConfig::new(Grid::x(blocks), block);
    for _ in 0..3 {
        for (stream, (a, b)) in streams.iter().zip(&mut buffers) {
            heat_steps::launch(stream, config, steps, 0.25, a, b).unwrap();
        }
    }
    let want = heat_reference(
        &heat_reference(&heat_reference(&initial, steps, 0.25), steps, 0.25),
        steps,
        0.25,
    );
    for (stream, (a, _)) in streams.iter().zip(&buffers) {
        let got = a.to_host(stream).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "[{i}] {g} vs {w}");
        }
    }
}

#[test]
fn a_captured_graph_replays_a_cooperative_kernel() {
    let _turn = one_at_a_time();
    let gpu = test_device();
    if gpu.backend() != Backend::Cuda {
        eprintln!("skipped: graphs need a CUDA device");
        return;
    }
    let stream = gpu.new_stream().unwrap();
    let (blocks, threads) = (8u32, 128u32);
    let n = (blocks * threads) as usize;
    let shift = 301;
    let values = std::cell::RefCell::new(DeviceBuffer::<u32>::zeroed(&stream, n).unwrap());
    let out = std::cell::RefCell::new(DeviceBuffer::<u32>::zeroed(&stream, n).unwrap());
    let config = LaunchConfig::new(Grid::x(blocks), Block::x(threads));
    let graph = stream
        .capture(|s| {
            rotate_through_device_fn::launch(
                s,
                config,
                shift,
                &mut values.borrow_mut(),
                &mut out.borrow_mut(),
            )
        })
        .unwrap();
    let want: Vec<u32> = (0..n).map(|i| (((i + shift) % n) as u32) * 3 + 1).collect();
    for _ in 0..3 {
        out.borrow_mut().fill(&stream, 0).unwrap();
        graph.launch().unwrap();
        stream.synchronize().unwrap();
        assert_eq!(out.borrow().to_host(&stream).unwrap(), want);
    }
    // A plain launch on the same stream meets at the same word between replays.
    rotate_through_device_fn::launch(
        &stream,
        config,
        shift,
        &mut values.borrow_mut(),
        &mut out.borrow_mut(),
    )
    .unwrap();
    graph.launch().unwrap();
    assert_eq!(out.borrow().to_host(&stream).unwrap(), want);
}

#[test]
fn compiles_with_nvrtc() {
    let _turn = one_at_a_time();
    assert_compiles_with_nvrtc(&[
        (&heat_steps::KERNEL, &[]),
        (&sum_in_one_launch::KERNEL, &[]),
        (&rotate_through_device_fn::KERNEL, &[]),
        (&phased_shift::KERNEL, &[]),
        (&thread_leaves_early::KERNEL, &[]),
        (&block_panics_before_grid_sync::KERNEL, &[]),
        (&staged_rotate_2d::KERNEL, &[]),
        (&generic_rotate::KERNEL, &[TemplateArg::of::<f32>()]),
        (&generic_rotate::KERNEL, &[TemplateArg::of::<i64>()]),
    ]);
}
