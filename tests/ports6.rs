//! The classic CUDA programs of `examples/bench/port_kernels6.rs` (timed in `ports6.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels6.rs"]
mod ports6;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports6::{GAUSS7, PER_THREAD, TAPS9};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports6::gauss_rows::KERNEL, &[]),
        (&ports6::collatz_steps::KERNEL, &[]),
        (&ports6::conv1d_blocked::KERNEL, &[]),
        (&ports6::tone_histogram::KERNEL, &[]),
    ]);
}

#[test]
fn gaussian_rows_clamp_at_the_edges() {
    let (width, height) = (37, 11);
    let input = random_f32(width * height, 5);
    let mut expected = vec![0.0f32; input.len()];
    for y in 0..height {
        for x in 0..width {
            let mut sum = 0.0f32;
            for (k, w) in GAUSS7.iter().enumerate() {
                let nx = (x as isize + k as isize - 3).clamp(0, width as isize - 1) as usize;
                sum += w * input[y * width + nx];
            }
            expected[y * width + x] = sum;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dinput = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        let config = LaunchConfig::new(Grid::xy(2, 2), Block::xy(32, 8));
        ports6::gauss_rows::launch(&stream, config, width, height, &dinput, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

#[test]
fn collatz_counts_the_steps_to_one() {
    let start: Vec<u32> = (0..500u32).chain([27, 97, 871, 77_031, 837_799]).collect();
    let expected: Vec<u32> = start
        .iter()
        .map(|&s| {
            let (mut v, mut n) = (s.max(1), 0u32);
            while v != 1 {
                v = if v.is_multiple_of(2) {
                    v / 2
                } else {
                    3 * v + 1
                };
                n += 1;
            }
            n
        })
        .collect();
    assert_eq!(expected[505 - 5], 111, "27 takes 111 steps");
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dstart = DeviceBuffer::from_host(&stream, &start).unwrap();
        let mut steps = DeviceBuffer::<u32>::zeroed(&stream, start.len()).unwrap();
        let config = LaunchConfig::for_len(start.len(), 128);
        ports6::collatz_steps::launch(&stream, config, &dstart, &mut steps).unwrap();
        assert_eq!(steps.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn blocked_convolution_matches_the_direct_sum() {
    let n = 4 * 100;
    let x = random_f32(n + TAPS9.len() - 1, 9);
    let expected: Vec<f32> = (0..n)
        .map(|i| TAPS9.iter().enumerate().map(|(k, w)| w * x[i + k]).sum())
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n / PER_THREAD, 32);
        ports6::conv1d_blocked::launch(&stream, config, &dx, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn tone_histogram_counts_every_pixel_in_its_bin() {
    let pixels = 1000;
    let rgb: Vec<f32> = random_f32(pixels * 3, 13)
        .iter()
        .map(|v| (v + 1.0) * 0.5)
        .collect();
    let mut expected = vec![0u32; 4];
    for p in rgb.chunks(3) {
        let lum = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
        let bin = if lum < 0.25 {
            0
        } else if lum < 0.5 {
            1
        } else if lum < 0.75 {
            2
        } else {
            3
        };
        expected[bin] += 1;
    }
    assert_eq!(expected.iter().sum::<u32>(), pixels as u32);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let drgb = DeviceBuffer::from_host(&stream, &rgb).unwrap();
        let mut counts = DeviceBuffer::<u32>::zeroed(&stream, 4).unwrap();
        let config = LaunchConfig::for_len(pixels, 256);
        ports6::tone_histogram::launch(&stream, config, &drgb, &mut counts).unwrap();
        assert_eq!(counts.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
