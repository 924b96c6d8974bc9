//! The classic CUDA programs of `examples/bench/port_kernels14.rs` (timed in `ports14.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels14.rs"]
mod ports14;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports14::BLOCK;

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports14::matrix_mul::KERNEL, &[]),
        (&ports14::merge_basic::KERNEL, &[]),
        (&ports14::shfl_scan::KERNEL, &[]),
    ]);
}

#[test]
fn tiled_matrix_mul_matches_a_plain_product() {
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
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, ha * wb).unwrap();
        let side = BLOCK as u32;
        let grid = Grid::xy(wb as u32 / side, ha as u32 / side);
        let config = LaunchConfig::new(grid, Block::xy(side, side));
        ports14::matrix_mul::launch(&stream, config, wa, wb, &a, &b, &mut c).unwrap();
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
