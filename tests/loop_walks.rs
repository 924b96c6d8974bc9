//! `for` loops over walks with more adapters, as Rust writes them: `.skip(a)` / `.take(b)`
//! (clamped to the length, as the adapters stop there), `.copied()` / `.cloned()`, and
//! `for_each` closures over `iter()`, `iter_mut()` and `zip`, on every backend at hand, against
//! the same code run as plain Rust.

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

#[test]
fn loop_walks_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&walks::KERNEL, &[])]);
}
