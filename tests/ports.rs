//! The classic CUDA programs of `examples/bench/port_kernels.rs` (timed there against their
//! CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels.rs"]
mod ports;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;
use ports::{BLOCK, TILE, TRANSPOSE_ROWS};

/// Both backends: the CPU always, the best device too when it is a GPU.
fn devices() -> Vec<Gpu> {
    let best = test_device();
    if best.backend() == gpu_dsl::runtime::Backend::Cuda {
        vec![Gpu::cpu(), best]
    } else {
        vec![Gpu::cpu()]
    }
}

fn close(ours: &[f32], expected: &[f32], tolerance: f32) {
    assert_eq!(ours.len(), expected.len());
    for (i, (a, b)) in ours.iter().zip(expected).enumerate() {
        assert!(
            (a - b).abs() <= tolerance * (1.0 + b.abs()),
            "element {i}: {a} against {b}"
        );
    }
}

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports::matmul_tiled::KERNEL, &[]),
        (&ports::matmul_general::KERNEL, &[]),
        (&ports::transpose_tiled::KERNEL, &[]),
        (&ports::histogram256::KERNEL, &[]),
        (&ports::reduce_sum::KERNEL, &[]),
        (&ports::heat_step::KERNEL, &[]),
        (&ports::nbody_accel::KERNEL, &[]),
    ]);
}

#[test]
fn tiled_matmul_matches_the_plain_product() {
    let n = 64;
    let (a, b) = (random_f32(n * n, 1), random_f32(n * n, 2));
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let (da, db) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut c = DeviceBuffer::zeroed(&stream, n * n).unwrap();
        let tiles = (n / TILE) as u32;
        let config = LaunchConfig::new(Grid::xy(tiles, tiles), Block::xy(32, 32));
        ports::matmul_tiled::launch(&stream, config, n, &da, &db, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

#[test]
fn general_matmul_of_ragged_shapes() {
    for (m, n, k) in [(45, 70, 33), (32, 32, 64), (1, 65, 7)] {
        let (a, b) = (random_f32(m * k, 7), random_f32(k * n, 8));
        let mut expected = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                expected[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        for gpu in devices() {
            let stream = gpu.default_stream();
            let (da, db) = (
                DeviceBuffer::from_host(&stream, &a).unwrap(),
                DeviceBuffer::from_host(&stream, &b).unwrap(),
            );
            let mut c = DeviceBuffer::zeroed(&stream, m * n).unwrap();
            let grid = Grid::xy(n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32);
            let config = LaunchConfig::new(grid, Block::xy(32, 32));
            ports::matmul_general::launch(&stream, config, m, n, k, &da, &db, &mut c).unwrap();
            close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
        }
    }
}

#[test]
fn tiled_transpose_of_a_ragged_matrix() {
    let (width, height) = (70, 45);
    let x = random_f32(width * height, 3);
    let mut expected = vec![0.0f32; width * height];
    for r in 0..height {
        for c in 0..width {
            expected[c * height + r] = x[r * width + c];
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(TILE) as u32, height.div_ceil(TILE) as u32);
        let config = LaunchConfig::new(grid, Block::xy(TILE as u32, TRANSPOSE_ROWS as u32));
        ports::transpose_tiled::launch(&stream, config, width, height, &input, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn histogram_counts_every_byte() {
    let n = 50_001;
    let data: Vec<u8> = (0..n).map(|i| ((i * 7919) >> 3) as u8).collect();
    let mut expected = vec![0u32; 256];
    for &d in &data {
        expected[d as usize] += 1;
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let config = LaunchConfig::new(Grid::x(7), Block::x(BLOCK as u32));
        ports::histogram256::launch(&stream, config, &input, &mut bins).unwrap();
        assert_eq!(bins.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn reduction_sums_everything() {
    let x = random_f32(100_003, 4);
    let expected: f64 = x.iter().map(|&v| f64::from(v)).sum();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut total = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(9), Block::x(BLOCK as u32));
        ports::reduce_sum::launch(&stream, config, &input, &mut total).unwrap();
        let got = f64::from(total.to_host(&stream).unwrap()[0]);
        assert!((got - expected).abs() < 1e-2, "{got} against {expected}");
    }
}

#[test]
fn heat_step_updates_the_interior_only() {
    let (width, height, k) = (67, 41, 0.1f32);
    let u = random_f32(width * height, 5);
    let mut expected = vec![0.0f32; width * height];
    for y in 1..height - 1 {
        for x in 1..width - 1 {
            let i = y * width + x;
            let lap = u[i - 1] + u[i + 1] + u[i - width] + u[i + width] - 4.0 * u[i];
            expected[i] = u[i] + k * lap;
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &u).unwrap();
        let mut next = DeviceBuffer::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports::heat_step::launch(&stream, config, width, height, k, &input, &mut next).unwrap();
        close(&next.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn nbody_accelerations_match_the_direct_sum() {
    let n = 300;
    let v = random_f32(4 * n, 6);
    let bodies: Vec<[f32; 4]> = v
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3].abs() + 0.1])
        .collect();
    let expected: Vec<f32> = bodies
        .iter()
        .flat_map(|me| {
            let mut a = [0.0f32; 3];
            for other in &bodies {
                let d = [other[0] - me[0], other[1] - me[1], other[2] - me[2]];
                let inv = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3).sqrt();
                let s = other[3] * inv * inv * inv;
                for k in 0..3 {
                    a[k] += d[k] * s;
                }
            }
            [a[0], a[1], a[2], 0.0]
        })
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let pos = DeviceBuffer::from_host(&stream, &bodies).unwrap();
        let mut acc = DeviceBuffer::<[f32; 4]>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(Grid::x(n.div_ceil(256) as u32), Block::x(256));
        ports::nbody_accel::launch(&stream, config, &pos, &mut acc).unwrap();
        let got: Vec<f32> = acc
            .to_host(&stream)
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        close(&got, &expected, 2e-3);
    }
}
