//! `#[device]` functions called from kernels: in the same module, from another module by `use`,
//! by path, through a renamed import, and from each other.

mod common;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

mod activations {
    use gpu_dsl::prelude::*;

    #[device]
    pub fn sigmoid(x: f32) -> f32 {
        1.0 / (1.0 + (-x).exp())
    }

    #[device]
    pub fn leaky(x: f32, slope: f32) -> f32 {
        if x > 0.0 {
            return x;
        }
        x * slope
    }
}

use activations::leaky as leaky_relu;
use activations::sigmoid;

#[device]
fn squared(x: f32) -> f32 {
    x * x
}

/// Calls another device function and reads a slice passed down to it.
#[device]
fn weighted(weights: &[f32], i: usize, x: f32) -> f32 {
    squared(x) * weights[i % weights.len()]
}

#[device]
fn store_twice(out: &mut [f32], i: usize, v: f32) {
    out[i] = v + v;
}

#[kernel]
fn apply(x: &[f32], weights: &[f32], out: &mut [f32], out2: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        let v = sigmoid(x[i]) + leaky_relu(x[i], 0.1) + activations::leaky(-x[i], 0.5);
        out[i] = v + weighted(weights, i, x[i]);
        store_twice(out2, i, squared(x[i]));
    }
}

fn cpu(x: f32, w: f32) -> (f32, f32) {
    let sigmoid = 1.0 / (1.0 + (-x).exp());
    let leaky = |x: f32, s: f32| if x > 0.0 { x } else { x * s };
    let v = sigmoid + leaky(x, 0.1) + leaky(-x, 0.5);
    (v + x * x * w, 2.0 * x * x)
}

#[test]
fn device_functions_from_several_modules() {
    assert!(
        apply::SOURCE.contains("__device__ float sigmoid(float x);"),
        "{}",
        apply::SOURCE
    );
    assert!(
        apply::SOURCE.contains("__device__ void store_twice("),
        "{}",
        apply::SOURCE
    );
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 10_001;
    let host: Vec<f32> = (0..n).map(|i| (i as f32 - 5000.0) * 0.001).collect();
    let weights_host = [0.5f32, -1.0, 2.0];
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let weights = DeviceBuffer::from_host(&stream, &weights_host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut out2 = DeviceBuffer::zeroed(&stream, n).unwrap();
    apply::launch(
        &stream,
        LaunchConfig::for_len(n, 256),
        &x,
        &weights,
        &mut out,
        &mut out2,
    )
    .unwrap();
    let (out, out2) = (
        out.to_host(&stream).unwrap(),
        out2.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let (expected, expected2) = cpu(host[i], weights_host[i % 3]);
        assert!(
            (out[i] - expected).abs() < 1e-5,
            "i={i}: {} vs {expected}",
            out[i]
        );
        assert_eq!(out2[i], expected2, "i={i}");
    }
}

#[test]
fn compiles_with_nvrtc() {
    common::assert_compiles_with_nvrtc(&[(&apply::KERNEL, &[])]);
}
