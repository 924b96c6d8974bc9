//! The classic CUDA programs of `examples/bench/port_kernels17.rs` (timed in `ports17.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels17.rs"]
mod ports17;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports17::Activation;

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports17::bias_activation::KERNEL, &[]),
        (&ports17::transpose_in_place::KERNEL, &[]),
        (&ports17::compact_warp_aggregated::KERNEL, &[]),
    ]);
}

#[test]
fn each_activation_matches_plain_rust() {
    let (rows, cols) = (37usize, 19usize);
    let x = random_f32(rows * cols, 171);
    let bias = random_f32(cols, 172);
    for act in [
        Activation::Relu,
        Activation::Tanh,
        Activation::Sigmoid,
        Activation::Gelu,
    ] {
        let expected: Vec<f32> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let v = v + bias[i % cols];
                match act {
                    Activation::Relu => v.max(0.0),
                    Activation::Tanh => v.tanh(),
                    Activation::Sigmoid => 1.0 / (1.0 + (-v).exp()),
                    Activation::Gelu => {
                        0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh())
                    }
                }
            })
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let xs = DeviceBuffer::from_host(&stream, &x).unwrap();
            let b = DeviceBuffer::from_host(&stream, &bias).unwrap();
            let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows * cols).unwrap();
            let config = LaunchConfig::for_len(rows * cols, 128);
            ports17::bias_activation::launch(&stream, config, act, &xs, &b, &mut y).unwrap();
            close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
        }
    }
}

#[test]
fn in_place_transpose_matches_plain_rust() {
    let n = 45usize;
    let a_host = random_f32(n * n, 173);
    let mut expected = vec![0.0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            expected[c * n + r] = a_host[r * n + c];
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let config = LaunchConfig::new(
            Grid::xy(n.div_ceil(16) as u32, n.div_ceil(16) as u32),
            Block::xy(16, 16),
        );
        ports17::transpose_in_place::launch(&stream, config, n, &mut a).unwrap();
        assert_eq!(a.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn warp_aggregated_compaction_keeps_every_positive_element() {
    let n = 5000usize;
    let input: Vec<f32> = random_f32(n, 174).iter().map(|v| v - 0.3).collect();
    let mut expected: Vec<f32> = input.iter().copied().filter(|&v| v > 0.0).collect();
    expected.sort_by(f32::total_cmp);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let inp = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut count = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::for_len(n, 128);
        ports17::compact_warp_aggregated::launch(&stream, config, &inp, &mut out, &mut count)
            .unwrap();
        let kept = count.to_host(&stream).unwrap()[0] as usize;
        let mut got = out.to_host(&stream).unwrap()[..kept].to_vec();
        got.sort_by(f32::total_cmp);
        assert_eq!(got, expected, "{}", gpu.name());
    }
}
