//! The classic CUDA programs of `examples/bench/port_kernels14.rs` (timed in `ports14.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels14.rs"]
mod ports14;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::TemplateArg;
use ports14::BLOCK_SIZE;

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports14::matrix_mul::KERNEL, &[TemplateArg::Const(16)]),
        (&ports14::matrix_mul::KERNEL, &[TemplateArg::Const(32)]),
        (&ports14::merge_basic::KERNEL, &[]),
        (&ports14::shfl_scan::KERNEL, &[]),
        (&shared_rows_at::KERNEL, &[TemplateArg::Const(8)]),
        (&warp_histograms::KERNEL, &[TemplateArg::Const(16)]),
    ]);
}

#[test]
fn templated_matrix_mul_matches_a_plain_product_at_both_block_sizes() {
    let (ha, wa, wb) = (64usize, 96usize, 32usize);
    let a_host = random_f32(ha * wa, 141);
    let b_host = random_f32(wa * wb, 142);
    let mut expected = vec![0.0f32; ha * wb];
    for i in 0..ha {
        for j in 0..wb {
            expected[i * wb + j] = (0..wa)
                .map(|p| a_host[i * wa + p] * b_host[p * wb + j])
                .sum();
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let launch = |side: u32, c: &mut DeviceBuffer<f32>| {
            let grid = Grid::xy(wb as u32 / side, ha as u32 / side);
            let config = LaunchConfig::new(grid, Block::xy(side, side));
            match side {
                16 => ports14::matrix_mul::launch::<16>(&stream, config, wa, wb, &a, &b, c),
                _ => ports14::matrix_mul::launch::<BLOCK_SIZE>(&stream, config, wa, wb, &a, &b, c),
            }
        };
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, ha * wb).unwrap();
        launch(16, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, ha * wb).unwrap();
        launch(32, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

/// `n` sorted values with repeats, so ties between the two inputs occur.
fn sorted(n: usize, seed: u64) -> Vec<f32> {
    let mut v: Vec<f32> = random_f32(n, seed)
        .iter()
        .map(|x| (x * 50.0).round())
        .collect();
    v.sort_by(f32::total_cmp);
    v
}

#[test]
fn merge_by_co_rank_matches_a_sequential_merge() {
    for (m, n) in [(1000usize, 777usize), (0, 300), (513, 0), (5000, 5000)] {
        let a_host = sorted(m, 143 + m as u64);
        let b_host = sorted(n, 144 + n as u64);
        let mut expected: Vec<f32> = a_host.iter().chain(&b_host).copied().collect();
        expected.sort_by(f32::total_cmp);
        for gpu in backends() {
            let stream = gpu.default_stream();
            let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
            let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
            let mut c = DeviceBuffer::<f32>::zeroed(&stream, m + n).unwrap();
            // More threads than outputs for the small cases: some get none.
            let config = LaunchConfig::new(Grid::x(3), Block::x(128));
            ports14::merge_basic::launch(&stream, config, &a, &b, &mut c).unwrap();
            assert_eq!(c.to_host(&stream).unwrap(), expected, "{m} + {n}");
        }
    }
}

#[test]
fn shuffle_scan_gives_each_blocks_inclusive_prefix_sums() {
    let (blocks, threads) = (5usize, 256usize);
    let host: Vec<i32> = (0..blocks * threads)
        .map(|i| (i as i32 * 37) % 101 - 50)
        .collect();
    let mut expected = host.clone();
    let mut totals = vec![0i32; blocks];
    for (block, chunk) in expected.chunks_mut(threads).enumerate() {
        for i in 1..threads {
            chunk[i] += chunk[i - 1];
        }
        totals[block] = chunk[threads - 1];
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut data = DeviceBuffer::from_host(&stream, &host).unwrap();
        let mut sums = DeviceBuffer::<i32>::zeroed(&stream, blocks).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32))
            .with_shared_mem((threads / 32 * 4) as u32);
        ports14::shfl_scan::launch(&stream, config, &mut data, &mut sums).unwrap();
        assert_eq!(data.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        assert_eq!(sums.to_host(&stream).unwrap(), totals, "{}", gpu.name());
    }
}

/// A row, then an element of a row, of a shared array whose rows' length is a const generic.
#[kernel]
fn shared_rows_at<const W: usize>(row: usize, col: usize, out: &mut [f32]) {
    let tile = shared_array::<[f32; W], 4>();
    tile[row][col] = 1.0;
    out[0] = tile[row][col];
}

#[test]
fn rows_of_a_const_generic_length_are_bounds_checked() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1)).checked(true);
        shared_rows_at::launch::<8>(&stream, config, 3, 7, &mut out).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), [1.0]);
        for (row, col, len, index) in [(4, 0, 4, 4), (0, 8, 8, 8)] {
            shared_rows_at::launch::<8>(&stream, config, row, col, &mut out).unwrap();
            let err = stream.synchronize().expect_err("out of bounds");
            let message = common::panic_message(&err);
            assert_eq!(
                message,
                &format!("index out of bounds: the len is {len} but the index is {index}"),
                "{}",
                gpu.name()
            );
        }
    }
}

/// A histogram of `W` bins a warp, privatized in a shared array whose rows' length is a const
/// generic, counted by atomics on a row.
#[kernel]
fn warp_histograms<const W: usize>(values: &[u32], out: &mut [u32]) {
    let hist = shared_array::<[u32; W], 4>();
    let t = thread_idx().x as usize;
    let warp = t / 32;
    for b in 0..W {
        if t % 32 == 0 {
            hist[warp][b] = 0;
        }
    }
    sync_threads();
    hist[warp].atomic_add(values[t] as usize % W, 1);
    sync_threads();
    if t < W {
        out[t] = hist[0][t] + hist[1][t] + hist[2][t] + hist[3][t];
    }
}

#[test]
fn atomics_on_rows_of_a_const_generic_length() {
    let values: Vec<u32> = (0..128u32).map(|i| i * 7 + i / 5).collect();
    let mut expected = [0u32; 16];
    for v in &values {
        expected[*v as usize % 16] += 1;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let vs = DeviceBuffer::from_host(&stream, &values).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 16).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(128));
        warp_histograms::launch::<16>(&stream, config, &vs, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
