//! Sorting small local windows, as median filters do: `sort_unstable()` of bytes,
//! `sort_by(|a, b| a.partial_cmp(b).unwrap())` of floats (a NaN panics as in Rust),
//! `total_cmp` and descending orders, on every backend at hand, against the same code run as
//! plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, random_f32};
use gpu_dsl::prelude::*;

/// A 3x3 median of bytes, each window sorted whole.
#[kernel]
fn median3x3(img: &[u8], w: usize, h: usize, out: &mut [u8]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= w * h {
        return;
    }
    let (x, y) = (i % w, i / w);
    let mut window = [0u8; 9];
    let mut k = 0;
    for dy in 0..3 {
        for dx in 0..3 {
            let xx = (x + dx).saturating_sub(1).min(w - 1);
            let yy = (y + dy).saturating_sub(1).min(h - 1);
            window[k] = img[yy * w + xx];
            k += 1;
        }
    }
    window.sort_unstable();
    out[i] = window[4];
}

fn median3x3_host(img: &[u8], w: usize, h: usize, i: usize) -> u8 {
    let (x, y) = (i % w, i / w);
    let mut window = [0u8; 9];
    let mut k = 0;
    for dy in 0..3 {
        for dx in 0..3 {
            let xx = (x + dx).saturating_sub(1).min(w - 1);
            let yy = (y + dy).saturating_sub(1).min(h - 1);
            window[k] = img[yy * w + xx];
            k += 1;
        }
    }
    window.sort_unstable();
    window[4]
}

/// Windows of 5 floats in three orders: ascending by `partial_cmp`, descending by it, and by
/// `total_cmp` (which puts -0.0 before 0.0), each summarised by weights.
#[kernel]
fn float_orders(x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i + 5 > x.len() {
        return;
    }
    let mut up = [0.0f32; 5];
    up.copy_from_slice(&x[i..i + 5]);
    let mut down = up;
    let mut total = up;
    up.sort_by(|a, b| a.partial_cmp(b).unwrap());
    down.sort_unstable_by(|a, b| b.partial_cmp(a).unwrap());
    total.sort_by(|a, b| a.total_cmp(b));
    let mut s = 0.0f32;
    for k in 0..5 {
        s += (k as f32 + 1.0) * up[k] - 0.5 * (k as f32) * down[k];
        s += if total[k].is_sign_negative() {
            k as f32 * 0.25
        } else {
            0.0
        };
    }
    out[i] = s;
}

fn float_orders_host(x: &[f32], i: usize) -> f32 {
    let mut up = [0.0f32; 5];
    up.copy_from_slice(&x[i..i + 5]);
    let mut down = up;
    let mut total = up;
    up.sort_by(|a, b| a.partial_cmp(b).unwrap());
    down.sort_unstable_by(|a, b| b.partial_cmp(a).unwrap());
    total.sort_by(|a, b| a.total_cmp(b));
    let mut s = 0.0f32;
    for k in 0..5 {
        s += (k as f32 + 1.0) * up[k] - 0.5 * (k as f32) * down[k];
        s += if total[k].is_sign_negative() {
            k as f32 * 0.25
        } else {
            0.0
        };
    }
    s
}

#[test]
fn median_filter_matches_rust() {
    let (w, h) = (23, 17);
    let img: Vec<u8> = random_f32(w * h, 9)
        .iter()
        .map(|v| ((v + 1.0) * 127.5) as u8)
        .collect();
    let expected: Vec<u8> = (0..w * h).map(|i| median3x3_host(&img, w, h, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dimg = DeviceBuffer::from_host(&stream, &img).unwrap();
        let mut out = DeviceBuffer::<u8>::zeroed(&stream, w * h).unwrap();
        let config = LaunchConfig::for_len(w * h, 64);
        median3x3::launch(&stream, config, &dimg, w, h, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn float_sorts_match_rust_and_a_nan_panics() {
    // Repeated values, signed zeros: the orders differ on them.
    let mut x: Vec<f32> = random_f32(60, 10)
        .iter()
        .map(|v| (v * 4.0).round() / 2.0)
        .collect();
    x[7] = 0.0;
    x[9] = -0.0;
    let n = x.len() - 4;
    let expected: Vec<f32> = (0..n).map(|i| float_orders_host(&x, i)).collect();
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 32);
        float_orders::launch(&stream, config, &dx, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        let mut with_nan = x.clone();
        with_nan[3] = f32::NAN;
        let dx = DeviceBuffer::from_host(&stream, &with_nan).unwrap();
        float_orders::launch(&stream, config, &dx, &mut out).unwrap();
        let err = stream.synchronize().expect_err("a NaN has no order");
        let message = common::panic_message(&err);
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

#[test]
fn median_filter_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&median3x3::KERNEL, &[]), (&float_orders::KERNEL, &[])]);
}
