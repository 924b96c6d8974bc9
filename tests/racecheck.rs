//! The CPU backend's race checker: each planted bug of `examples/planted_bugs` is caught and
//! named at its lines, its correct twin runs without a report and gives the right numbers,
//! and the checker can be chosen per launch.

mod common;

#[path = "../examples/planted_bugs/kernels.rs"]
mod planted;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{Error, RaceSite, SiteAction};

const SOURCE: &str = include_str!("../examples/planted_bugs/kernels.rs");

/// The line of `examples/planted_bugs/kernels.rs` marked `// planted: NAME`.
fn line_of(name: &str) -> u32 {
    let marker = format!("// planted: {name}");
    let index = SOURCE
        .lines()
        .position(|line| line.trim_end().ends_with(&marker))
        .unwrap_or_else(|| panic!("no line marked `{marker}`"));
    index as u32 + 1
}

fn config(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig::new(Grid::x(blocks), Block::x(threads))
}

#[test]
fn a_missing_barrier_in_a_tree_reduction_is_a_race_on_the_tile() {
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let host = random_f32(4 * 256, 1);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let err = planted::sum_missing_barrier::launch(&stream, config(4, 256), &x, &mut out)
        .expect_err("the race is caught");
    let Error::DataRace {
        memory,
        first,
        second,
        ..
    } = &err
    else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "shared array `tile`", "{err}");
    let mut lines = [first.line, second.line];
    lines.sort_unstable();
    let mut want = [
        line_of("missing-barrier-store"),
        line_of("missing-barrier-load"),
    ];
    want.sort_unstable();
    assert_eq!(lines, want, "{err}");
    assert_ne!(first.thread, second.thread, "{err}");
    assert!(err.to_string().contains("sync_threads()"), "{err}");

    // With the barrier: no report, and the sums.
    planted::sum_with_barrier::launch(&stream, config(4, 256), &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (b, sum) in got.iter().enumerate() {
        let want: f32 = host[b * 256..(b + 1) * 256].iter().sum();
        assert!((sum - want).abs() < 1e-3, "block {b}: {sum} vs {want}");
    }
}

#[test]
fn a_barrier_inside_a_branch_is_divergent() {
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 32).unwrap();
    let err = planted::barrier_in_branch::launch(&stream, config(1, 32), &mut out)
        .expect_err("the divergent barrier is caught");
    let Error::DivergentBarrier { waiting, other, .. } = &err else {
        panic!("expected a divergent barrier, got {err}");
    };
    assert_eq!(waiting.line, line_of("branch-barrier"), "{err}");
    assert_eq!(waiting.action, SiteAction::Waits("sync_threads"), "{err}");
    assert!(waiting.thread[0] < 16, "{err}");
    assert_eq!(other.action, SiteAction::Returned, "{err}");
    assert_eq!(other.line, line_of("branch-exit"), "{err}");
    assert!(other.thread[0] >= 16, "{err}");

    planted::barrier_for_all::launch(&stream, config(1, 32), &mut out).unwrap();
    let want: Vec<u32> = (0..32).collect();
    assert_eq!(out.to_host(&stream).unwrap(), want);
}

#[test]
fn two_blocks_writing_one_element_race_across_blocks() {
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let host = random_f32(128, 2);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 128).unwrap();
    let err = planted::blocks_share_output::launch(&stream, config(2, 64), &x, &mut out)
        .expect_err("the race is caught");
    let Error::DataRace {
        memory,
        index,
        first,
        second,
        ..
    } = &err
    else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "`out`", "{err}");
    assert!(*index < 64, "{err}");
    assert_eq!(first.line, line_of("shared-output"), "{err}");
    assert_eq!(second.line, line_of("shared-output"), "{err}");
    assert_ne!(first.block, second.block, "{err}");
    assert_eq!(
        (first.action, second.action),
        (SiteAction::Write, SiteAction::Write)
    );
    assert!(err.to_string().contains("atomic"), "{err}");

    planted::blocks_own_output::launch(&stream, config(2, 64), &x, &mut out).unwrap();
    let want: Vec<f32> = host.iter().map(|v| 2.0 * v).collect();
    assert_eq!(out.to_host(&stream).unwrap(), want);
}

#[test]
fn a_read_of_unwritten_shared_memory_is_reported() {
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 64).unwrap();
    let err = planted::reads_unwritten_shared::launch(&stream, config(1, 64), &mut out)
        .expect_err("the read is caught");
    let Error::UninitializedShared {
        memory,
        index,
        read,
        ..
    } = &err
    else {
        panic!("expected an uninitialized read, got {err}");
    };
    assert_eq!(memory, "shared array `tile`", "{err}");
    assert!((32..64).contains(index), "{err}");
    assert_eq!(read.line, line_of("unwritten-read"), "{err}");
    assert_eq!(read.thread[0] as usize, *index, "{err}");

    planted::reads_written_shared::launch(&stream, config(1, 64), &mut out).unwrap();
    let want: Vec<f32> = (0..64).map(|t| (63 - t) as f32).collect();
    assert_eq!(out.to_host(&stream).unwrap(), want);
}

#[test]
fn a_shuffle_naming_lanes_that_returned_is_divergent() {
    let gpu = Gpu::cpu_racecheck();
    let stream = gpu.default_stream();
    let host = random_f32(20, 3);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 20).unwrap();
    let err = planted::shuffle_after_exit::launch(&stream, config(1, 32), &x, &mut out)
        .expect_err("the shuffle is caught");
    let Error::DivergentBarrier { waiting, other, .. } = &err else {
        panic!("expected a divergent warp operation, got {err}");
    };
    assert_eq!(waiting.line, line_of("shuffle"), "{err}");
    assert_eq!(waiting.action, SiteAction::Waits("shfl_down_sync"), "{err}");
    assert_eq!(other.action, SiteAction::Returned, "{err}");
    assert_eq!(other.line, line_of("shuffle-exit"), "{err}");
    assert!(other.thread[0] >= 20, "{err}");

    planted::shuffle_then_guard::launch(&stream, config(1, 32), &x, &mut out).unwrap();
    let want: Vec<f32> = (0..20)
        .map(|i| host[i] + if i + 1 < 20 { host[i + 1] } else { 0.0 })
        .collect();
    assert_eq!(out.to_host(&stream).unwrap(), want);
}

/// Each thread reads its neighbour's element of dynamic shared memory without a barrier.
#[kernel]
fn dynamic_neighbour(out: &mut [f32]) {
    let tile = dynamic_shared::<f32>();
    let t = thread_idx().x as usize;
    tile[t] = t as f32;
    out[t] = tile[(t + 1) % 64];
}

#[test]
fn dynamic_shared_memory_is_named_and_indexed_by_element() {
    let stream = Gpu::cpu_racecheck().default_stream();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 64).unwrap();
    let config = config(1, 64).with_shared_mem(64 * 4);
    let err = dynamic_neighbour::launch(&stream, config, &mut out).unwrap_err();
    let Error::DataRace {
        memory,
        index,
        first,
        second,
        ..
    } = &err
    else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "dynamic shared memory (as f32)", "{err}");
    assert_eq!(*index, 1, "{err}");
    assert_eq!(
        (first.action, second.action),
        (SiteAction::Read, SiteAction::Write),
        "{err}"
    );
}

#[test]
fn the_checker_is_chosen_per_launch() {
    let host = random_f32(128, 4);
    // Off on the plain CPU backend unless the launch asks (or GPU_RACECHECK=1).
    let stream = Gpu::cpu().default_stream();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 128).unwrap();
    let racing = config(2, 64).racecheck(true);
    let err = planted::blocks_share_output::launch(&stream, racing, &x, &mut out).unwrap_err();
    assert!(matches!(err, Error::DataRace { .. }), "{err}");
    // And off for one launch on the checking device.
    let stream = Gpu::cpu_racecheck().default_stream();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 128).unwrap();
    let quiet = config(2, 64).racecheck(false);
    planted::blocks_share_output::launch(&stream, quiet, &x, &mut out).unwrap();
}

#[test]
fn reports_say_where_each_thread_was() {
    let site = RaceSite {
        file: "k.rs",
        line: 7,
        block: [1, 0, 0],
        thread: [3, 0, 0],
        action: SiteAction::Write,
    };
    assert_eq!(
        site.to_string(),
        "a write at k.rs:7 by thread (3, 0, 0) of block (1, 0, 0)"
    );
}

#[test]
fn planted_kernels_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&planted::sum_missing_barrier::KERNEL, &[]),
        (&planted::sum_with_barrier::KERNEL, &[]),
        (&planted::barrier_in_branch::KERNEL, &[]),
        (&planted::barrier_for_all::KERNEL, &[]),
        (&planted::blocks_share_output::KERNEL, &[]),
        (&planted::blocks_own_output::KERNEL, &[]),
        (&planted::reads_unwritten_shared::KERNEL, &[]),
        (&planted::reads_written_shared::KERNEL, &[]),
        (&planted::shuffle_after_exit::KERNEL, &[]),
        (&planted::shuffle_then_guard::KERNEL, &[]),
        (&dynamic_neighbour::KERNEL, &[]),
    ]);
}
