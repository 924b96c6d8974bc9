//! `for` loops over slices and arrays as Rust writes them (`for v in x.iter()`, `for &v in
//! x.iter()`, `for v in x`, `.enumerate()`, `*v`), which run as loops over indices, on every
//! backend at hand, against the same loops on the host.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// A 3-tap filter from a local array, then sums over a slice parameter in every form.
#[kernel]
fn element_loops(weights: &[f32], x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < out.len() {
        let taps = [0.25f32, 0.5, 0.25];
        let mut s = 0.0f32;
        for (k, t) in taps.iter().enumerate() {
            s += *t * x[(i + k) % x.len()];
        }
        for &w in weights.iter() {
            s += w * x[i];
        }
        for w in weights {
            s += *w * 0.5;
        }
        for (j, _) in weights.iter().enumerate() {
            s += j as f32;
        }
        let mut largest = 0.0f32;
        for (j, &w) in weights.iter().enumerate() {
            if j % 2 == 0 {
                continue;
            }
            largest = largest.max(w);
        }
        out[i] = s + largest;
    }
}

fn element_loops_host(weights: &[f32], x: &[f32], i: usize) -> f32 {
    let taps = [0.25f32, 0.5, 0.25];
    let mut s = 0.0f32;
    for (k, t) in taps.iter().enumerate() {
        s += *t * x[(i + k) % x.len()];
    }
    for &w in weights.iter() {
        s += w * x[i];
    }
    for w in weights {
        s += *w * 0.5;
    }
    for (j, _) in weights.iter().enumerate() {
        s += j as f32;
    }
    let mut largest = 0.0f32;
    for (j, &w) in weights.iter().enumerate() {
        if j % 2 == 0 {
            continue;
        }
        largest = largest.max(w);
    }
    s + largest
}

#[test]
fn loops_over_slices_and_arrays_match_rust() {
    let weights = random_f32(7, 81);
    let x = random_f32(100, 83);
    let expected: Vec<f32> = (0..x.len())
        .map(|i| element_loops_host(&weights, &x, i))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let w = DeviceBuffer::from_host(&stream, &weights).unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, x.len()).unwrap();
        let config = LaunchConfig::for_len(x.len(), 64);
        element_loops::launch(&stream, config, &w, &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn element_loops_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&element_loops::KERNEL, &[])]);
}
