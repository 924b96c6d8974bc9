//! The classic CUDA programs of `examples/bench/port_kernels10.rs` (timed in `ports10.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels10.rs"]
mod ports10;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports10::{DCT_SIZE, MAX_DISPARITY, SAD_RADIUS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports10::stereo_sad::KERNEL, &[]),
        (&ports10::dct8x8::KERNEL, &[]),
        (&ports10::gemv_i8::KERNEL, &[]),
    ]);
}

#[test]
fn stereo_matching_finds_the_shift_of_a_textured_image() {
    let (w, h) = (70usize, 21usize);
    let texture = |x: usize, y: usize| ((x * 7919 + y * 104_729) % 251) as u8;
    let left: Vec<u8> = (0..w * h).map(|i| texture(i % w, i / w)).collect();
    let right: Vec<u8> = (0..w * h).map(|i| texture(i % w + 5, i / w)).collect();
    let (wi, hi) = (w as i32, h as i32);
    let mut expected = vec![0u32; w * h];
    for y in 0..hi {
        for x in 0..wi {
            let (mut best, mut best_d) = (u32::MAX, 0u32);
            for d in 0..MAX_DISPARITY {
                let mut sad = 0u32;
                for dy in -SAD_RADIUS..=SAD_RADIUS {
                    let row = (y + dy).clamp(0, hi - 1) * wi;
                    for dx in -SAD_RADIUS..=SAD_RADIUS {
                        let l = left[(row + (x + dx).clamp(0, wi - 1)) as usize];
                        let r = right[(row + (x + dx - d).clamp(0, wi - 1)) as usize];
                        sad += l.abs_diff(r) as u32;
                    }
                }
                if sad < best {
                    (best, best_d) = (sad, d as u32);
                }
            }
            expected[(y * wi + x) as usize] = best_d;
        }
    }
    // Away from the edges the match is exact at the true shift.
    assert_eq!(expected[10 * w + 30], 5);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dl = DeviceBuffer::from_host(&stream, &left).unwrap();
        let dr = DeviceBuffer::from_host(&stream, &right).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, w * h).unwrap();
        let config = LaunchConfig::new(Grid::xy(3, 3), Block::xy(32, 8));
        ports10::stereo_sad::launch(&stream, config, w, h, &dl, &dr, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn dct_of_each_block_matches_the_direct_sum() {
    let n = 3 * DCT_SIZE;
    let src = random_f32(n * n, 41);
    let c = |u: usize, x: usize| {
        let scale = if u == 0 {
            (1.0f64 / 8.0).sqrt()
        } else {
            (2.0f64 / 8.0).sqrt()
        };
        scale * ((2 * x + 1) as f64 * u as f64 * std::f64::consts::PI / 16.0).cos()
    };
    let mut expected = vec![0.0f32; n * n];
    for by in (0..n).step_by(DCT_SIZE) {
        for bx in (0..n).step_by(DCT_SIZE) {
            for v in 0..DCT_SIZE {
                for u in 0..DCT_SIZE {
                    let mut sum = 0.0f64;
                    for y in 0..DCT_SIZE {
                        for x in 0..DCT_SIZE {
                            let p = src[(by + y) * n + bx + x] as f64;
                            sum += c(v, y) * c(u, x) * p;
                        }
                    }
                    expected[(by + v) * n + bx + u] = sum as f32;
                }
            }
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dsrc = DeviceBuffer::from_host(&stream, &src).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n * n).unwrap();
        let side = DCT_SIZE as u32;
        let config = LaunchConfig::new(Grid::xy(3, 3), Block::xy(side, side));
        ports10::dct8x8::launch(&stream, config, n, &dsrc, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn int8_matrix_vector_product_sums_exactly() {
    let (rows, cols) = (37usize, 100usize);
    let w: Vec<i8> = (0..rows * cols)
        .map(|i| (i * 37 % 255) as u8 as i8)
        .collect();
    let x: Vec<i8> = (0..cols).map(|i| (i * 91 % 255) as u8 as i8).collect();
    let scale = 0.5f32;
    let expected: Vec<f32> = (0..rows)
        .map(|r| {
            let sum: i32 = (0..cols)
                .map(|c| w[r * cols + c] as i32 * x[c] as i32)
                .sum();
            sum as f32 * scale
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dw = DeviceBuffer::from_host(&stream, &w).unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows * 32, 128);
        ports10::gemv_i8::launch(&stream, config, rows, cols, &dw, &dx, scale, &mut y).unwrap();
        assert_eq!(y.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
