//! `for` loops over walks with more adapters, as Rust writes them: `.skip(a)` / `.take(b)`
//! (clamped to the length, as the adapters stop there), `.copied()` / `.cloned()`, and
//! `for_each` closures over `iter()`, `iter_mut()` and `zip`, zips of zips (`for ((a, b), c)
//! in x.iter().zip(y).zip(z.iter_mut())`), `.step_by(s)` over elements, and these walks
//! consumed (`x.iter().skip(1).take(3).sum()`, `x.iter().rev().map(..)`), on every backend at
//! hand, against the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// Each thread walks parts of `x` chosen by its index (some past the end) and scales its own
/// row of `rows` through `for_each`.
#[kernel]
fn walks(x: &[f32], rows: &mut [f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let mut s = 0.0f32;
    for v in x.iter().skip(i).take(3) {
        s += *v;
    }
    for (k, v) in x.iter().copied().enumerate() {
        s += v * (k % 3) as f32;
    }
    for (a, b) in x.iter().skip(i % 4).zip(x.iter().cloned()) {
        s -= a * b * 0.5;
    }
    for v in x.iter().take(i) {
        s += v * 0.25;
    }
    let row = &mut rows[i * 4..i * 4 + 4];
    row.iter_mut().for_each(|v| *v *= 2.0);
    row.iter_mut().zip(x.iter()).for_each(|(r, &v)| {
        *r += v;
    });
    x.iter().skip(i).for_each(|v| s += v * 0.125);
    out[i] = s;
}

fn walks_host(x: &[f32], rows: &mut [f32], i: usize) -> f32 {
    let mut s = 0.0f32;
    for v in x.iter().skip(i).take(3) {
        s += *v;
    }
    for (k, v) in x.iter().copied().enumerate() {
        s += v * (k % 3) as f32;
    }
    for (a, b) in x.iter().skip(i % 4).zip(x.iter().cloned()) {
        s -= a * b * 0.5;
    }
    for v in x.iter().take(i) {
        s += v * 0.25;
    }
    let row = &mut rows[i * 4..i * 4 + 4];
    row.iter_mut().for_each(|v| *v *= 2.0);
    row.iter_mut().zip(x.iter()).for_each(|(r, &v)| {
        *r += v;
    });
    x.iter().skip(i).for_each(|v| s += v * 0.125);
    s
}

#[test]
fn skip_take_copied_and_for_each_match_rust() {
    let n = 12;
    let x = random_f32(n, 12);
    let rows0 = random_f32(4 * n, 13);
    let mut rows_expected = rows0.clone();
    let expected: Vec<f32> = (0..n)
        .map(|i| walks_host(&x, &mut rows_expected, i))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut rows = DeviceBuffer::from_host(&stream, &rows0).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        walks::launch(
            &stream,
            LaunchConfig::for_len(n, 32),
            &dx,
            &mut rows,
            &mut out,
        )
        .unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        close(&rows.to_host(&stream).unwrap(), &rows_expected, 1e-6);
    }
}

/// `z = a * x + y` over three slices at once, written through the third side, then a sum over
/// three sides, each thread its own part of the arrays.
#[kernel]
fn zip3(a: f32, x: &[f32], y: &[f32], z: &mut [f32], sums: &mut [f32]) {
    let t = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if (t + 1) * 4 > z.len() {
        return;
    }
    let part = &mut z[t * 4..(t + 1) * 4];
    for ((xi, &yi), zi) in x[t * 4..].iter().zip(&y[t * 4..]).zip(part.iter_mut()) {
        *zi = a * xi + yi;
    }
    let mut weighted = 0.0f32;
    for (k, ((p, q), r)) in x.iter().zip(y.iter()).zip(x.iter().skip(1)).enumerate() {
        weighted += (p * q - r) * (k % 3) as f32;
    }
    sums[t] = weighted
        + x.iter()
            .zip(y)
            .zip(y.iter().skip(t))
            .map(|((p, q), r)| p * q + r)
            .sum::<f32>();
}

#[test]
fn zips_of_zips_match_rust() {
    let threads = 10;
    let n = threads * 4;
    let (x, y) = (random_f32(n, 1), random_f32(n, 2));
    let a = 1.5f32;
    let z_expected: Vec<f32> = x.iter().zip(&y).map(|(xi, yi)| a * xi + yi).collect();
    let sums_expected: Vec<f32> = (0..threads)
        .map(|t| {
            let mut weighted = 0.0f32;
            for (k, ((p, q), r)) in x.iter().zip(y.iter()).zip(x.iter().skip(1)).enumerate() {
                weighted += (p * q - r) * (k % 3) as f32;
            }
            weighted
                + x.iter()
                    .zip(&y)
                    .zip(y.iter().skip(t))
                    .map(|((p, q), r)| p * q + r)
                    .sum::<f32>()
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let dy = DeviceBuffer::from_host(&stream, &y).unwrap();
        let mut z = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut sums = DeviceBuffer::<f32>::zeroed(&stream, threads).unwrap();
        let config = LaunchConfig::for_len(threads, 32);
        zip3::launch(&stream, config, a, &dx, &dy, &mut z, &mut sums).unwrap();
        close(&z.to_host(&stream).unwrap(), &z_expected, 1e-6);
        close(&sums.to_host(&stream).unwrap(), &sums_expected, 1e-5);
    }
}

/// Every other element and every third (with its index), then the same walks consumed.
#[kernel]
fn strides(x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let mut s = 0.0f32;
    for v in x.iter().step_by(2) {
        s += *v;
    }
    for (k, &v) in x.iter().enumerate().step_by(i % 3 + 1) {
        s += v * k as f32;
    }
    let skipped: f32 = x.iter().skip(i).take(3).sum();
    let backwards = x.iter().rev().fold(0.0f32, |acc, &v| acc * 0.5 + v);
    let thirds = x.iter().step_by(3).map(|v| v * v).sum::<f32>();
    let late = x.iter().skip(i).filter(|&&v| v > 0.0).count();
    out[i] = s + skipped + backwards + thirds + late as f32;
}

fn strides_host(x: &[f32], i: usize) -> f32 {
    let mut s = 0.0f32;
    for v in x.iter().step_by(2) {
        s += *v;
    }
    for (k, &v) in x.iter().enumerate().step_by(i % 3 + 1) {
        s += v * k as f32;
    }
    let skipped: f32 = x.iter().skip(i).take(3).sum();
    let backwards = x.iter().rev().fold(0.0f32, |acc, &v| acc * 0.5 + v);
    let thirds = x.iter().step_by(3).map(|v| v * v).sum::<f32>();
    let late = x.iter().skip(i).filter(|&&v| v > 0.0).count();
    s + skipped + backwards + thirds + late as f32
}

#[test]
fn strides_and_consumed_walks_match_rust() {
    let n = 29;
    let x = random_f32(n, 29);
    let expected: Vec<f32> = (0..n + 3).map(|i| strides_host(&x, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n + 3).unwrap();
        strides::launch(&stream, LaunchConfig::for_len(n + 3, 32), &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn loop_walks_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&walks::KERNEL, &[]),
        (&zip3::KERNEL, &[]),
        (&strides::KERNEL, &[]),
    ]);
}
