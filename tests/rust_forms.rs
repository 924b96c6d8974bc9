//! Forms Rust users write that kernels accept: atomics on a row of a 2-D shared array,
//! `Option` locals, `min_by`/`max_by` and their `_key` forms, checked arithmetic consumed at
//! once, `chunks` walks, and loops bounded by a module constant whose type only rustc knows;
//! each against the same Rust on the host, on the CPU backend and the GPU where there is one.

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{Kernel, TemplateArg};

const HIST_WARPS: usize = 4;

/// A byte histogram: each warp counts into its own row of a 2-D shared array.
#[kernel]
fn histogram_rows(data: &[u8], bins: &mut [u32]) {
    let hist = shared_array::<[u32; 256], HIST_WARPS>();
    let tid = thread_idx().x as usize;
    let warp = tid / 32;
    for b in (tid..256).step_by(block_dim().x as usize) {
        for w in 0..HIST_WARPS {
            hist[w][b] = 0;
        }
    }
    sync_threads();
    let mut i = global_idx().x;
    while i < data.len() {
        hist[warp].atomic_add(data[i] as usize, 1);
        i += grid_size().x;
    }
    sync_threads();
    for b in (tid..256).step_by(block_dim().x as usize) {
        let mut sum = 0u32;
        for w in 0..HIST_WARPS {
            sum += hist[w][b];
        }
        bins.atomic_add(b, sum);
    }
}

/// An atomic past the end of a row, for checked mode.
#[kernel]
fn row_past_the_end(at: usize, out: &mut [u32]) {
    let rows = shared_array::<[u32; 8], 2>();
    let old = rows[1].atomic_max(at, 5);
    out[0] = old;
}

const KERNELS: &[&Kernel] = &[&histogram_rows::KERNEL, &row_past_the_end::KERNEL];

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let cases: Vec<(&Kernel, &[TemplateArg])> = KERNELS.iter().map(|k| (*k, &[][..])).collect();
    assert_compiles_with_nvrtc(&cases);
}

#[test]
fn atomics_on_a_row_of_shared_memory_count_every_byte() {
    assert!(
        histogram_rows::SOURCE.contains("rs_atomic_add(&hist["),
        "{}",
        histogram_rows::SOURCE
    );
    let data: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut expected = vec![0u32; 256];
    for &b in &data {
        expected[b as usize] += 1;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dd = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let config = LaunchConfig::new(Grid::x(7), Block::x(32 * HIST_WARPS as u32));
        histogram_rows::launch(&stream, config, &dd, &mut bins).unwrap();
        assert_eq!(bins.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn an_atomic_past_the_end_of_a_row_panics_in_checked_mode() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1)).checked(true);
        row_past_the_end::launch(&stream, config, 7, &mut out).unwrap();
        stream.synchronize().unwrap();
        row_past_the_end::launch(&stream, config, 8, &mut out).unwrap();
        let err = stream.synchronize().expect_err("index 8 of a row of 8");
        let gpu_dsl::runtime::Error::KernelPanic { message, .. } = &err else {
            panic!("expected a kernel panic, got {err}");
        };
        assert_eq!(
            message,
            "index out of bounds: the len is 8 but the index is 8"
        );
    }
}
