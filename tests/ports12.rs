//! The classic CUDA programs of `examples/bench/port_kernels12.rs` (timed in `ports12.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels12.rs"]
mod ports12;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports12::{Complex, JULIA_ITERATIONS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports12::julia::KERNEL, &[]),
        (&ports12::stencil_z::KERNEL, &[]),
    ]);
}

#[test]
fn julia_marks_the_points_whose_orbit_stays_bounded() {
    let dim = 64usize;
    let c = Complex { r: -0.8, i: 0.156 };
    let mut expected = vec![0u8; dim * dim * 4];
    for y in 0..dim {
        for x in 0..dim {
            let half = dim as f32 / 2.0;
            let (mut r, mut i) = (
                1.5 * (half - x as f32) / half,
                1.5 * (half - y as f32) / half,
            );
            let mut inside = 255u8;
            for _ in 0..JULIA_ITERATIONS {
                (r, i) = (r * r - i * i + c.r, i * r + r * i + c.i);
                if r * r + i * i > 1000.0 {
                    inside = 0;
                    break;
                }
            }
            expected[(y * dim + x) * 4] = inside;
        }
    }
    assert!(expected.contains(&255) && expected.chunks(4).any(|p| p[0] == 0));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut image = DeviceBuffer::<u8>::zeroed(&stream, dim * dim * 4).unwrap();
        let config = LaunchConfig::new(Grid::xy(dim as u32, 1), Block::x(64));
        ports12::julia::launch(&stream, config, dim, c, &mut image).unwrap();
        let got = image.to_host(&stream).unwrap();
        // A point at the set's edge may leave it an iteration apart where FMA rounds.
        let differing = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
        assert!(
            differing <= dim / 8,
            "{}: {differing} pixels differ",
            gpu.name()
        );
    }
}

#[test]
fn register_tiled_stencil_matches_the_seven_point_sum() {
    let n = 13usize;
    let input = random_f32(n * n * n, 23);
    let (c0, c1) = (0.4f32, 0.1f32);
    let mut expected = vec![0.0f32; n * n * n];
    for z in 1..n - 1 {
        for y in 1..n - 1 {
            for x in 1..n - 1 {
                let at = (z * n + y) * n + x;
                expected[at] = c0 * input[at]
                    + c1 * (input[at - 1]
                        + input[at + 1]
                        + input[at - n]
                        + input[at + n]
                        + input[at - n * n]
                        + input[at + n * n]);
            }
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let din = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n * n * n).unwrap();
        let config = LaunchConfig::new(Grid::xy(1, 2), Block::xy(16, 8));
        ports12::stencil_z::launch(&stream, config, n, c0, c1, &din, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}
