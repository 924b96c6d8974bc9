//! The classic CUDA programs of `examples/bench/port_kernels13.rs` (timed in `ports13.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels13.rs"]
mod ports13;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports13::{Cf32, BM, BN, TM, TN};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports13::sgemm_blocked::KERNEL, &[]),
        (&ports13::fft_radix2::KERNEL, &[]),
        (&ports13::layer_norm::KERNEL, &[]),
    ]);
}

#[test]
fn register_blocked_product_matches_a_plain_product() {
    let (m, n, k) = (256, 128, 40);
    let a_host = random_f32(m * k, 131);
    let b_host = random_f32(k * n, 132);
    let mut expected = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            expected[i * n + j] = (0..k).map(|p| a_host[i * k + p] * b_host[p * n + j]).sum();
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, m * n).unwrap();
        let threads = ((BM / TM) * (BN / TN)) as u32;
        let config = LaunchConfig::new(
            Grid::xy((n / BN) as u32, (m / BM) as u32),
            Block::x(threads),
        );
        ports13::sgemm_blocked::launch(&stream, config, m, n, k, &a, &b, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

/// The discrete Fourier transform of `x`, directly.
fn dft(x: &[Cf32]) -> Vec<Cf32> {
    let n = x.len();
    (0..n)
        .map(|f| {
            let (mut re, mut im) = (0.0f64, 0.0f64);
            for (t, v) in x.iter().enumerate() {
                let angle = -2.0 * std::f64::consts::PI * ((f * t) % n) as f64 / n as f64;
                let (s, c) = angle.sin_cos();
                re += v.re as f64 * c - v.im as f64 * s;
                im += v.re as f64 * s + v.im as f64 * c;
            }
            Cf32 {
                re: re as f32,
                im: im as f32,
            }
        })
        .collect()
}

#[test]
fn stockham_passes_give_the_discrete_fourier_transform() {
    let n = 512usize;
    let re = random_f32(n, 133);
    let im = random_f32(n, 134);
    let x: Vec<Cf32> = re
        .iter()
        .zip(&im)
        .map(|(&re, &im)| Cf32 { re, im })
        .collect();
    let expected = dft(&x);
    let flat = |v: &[Cf32]| v.iter().flat_map(|c| [c.re, c.im]).collect::<Vec<f32>>();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut ping = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut pong = DeviceBuffer::<Cf32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n / 2, 128);
        let mut span = 1;
        while span < n {
            ports13::fft_radix2::launch(&stream, config, span, &ping, &mut pong).unwrap();
            std::mem::swap(&mut ping, &mut pong);
            span *= 2;
        }
        let got = ping.to_host(&stream).unwrap();
        // Sums of 512 terms of magnitude up to 1: a few 1e-4 of rounding.
        close(&flat(&got), &flat(&expected), 2e-3);
    }
}

#[test]
fn layer_norm_gives_each_row_zero_mean_and_unit_variance() {
    let (rows, cols) = (37usize, 300usize);
    let x_host: Vec<f32> = random_f32(rows * cols, 135)
        .iter()
        .enumerate()
        .map(|(i, v)| v * 3.0 + (i / cols) as f32)
        .collect();
    let gamma_host = random_f32(cols, 136);
    let beta_host = random_f32(cols, 137);
    let eps = 1e-5f32;
    let mut expected = vec![0.0f32; rows * cols];
    for r in 0..rows {
        let xs = &x_host[r * cols..(r + 1) * cols];
        let mean = xs.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
        let var = xs.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
        let inv = 1.0 / (var + eps as f64).sqrt();
        for j in 0..cols {
            expected[r * cols + j] =
                ((xs[j] as f64 - mean) * inv * gamma_host[j] as f64 + beta_host[j] as f64) as f32;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
        let gamma = DeviceBuffer::from_host(&stream, &gamma_host).unwrap();
        let beta = DeviceBuffer::from_host(&stream, &beta_host).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows * cols).unwrap();
        let config = LaunchConfig::for_len(rows * 32, 128);
        ports13::layer_norm::launch(&stream, config, cols, eps, &x, &gamma, &beta, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}
