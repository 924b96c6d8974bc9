//! Signatures as Rust writes them: `where` clauses on device functions and generic kernels,
//! and closure parameters typed `impl Fn(..) -> R`, on every backend at hand, against the same
//! code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// `f` applied twice.
#[device]
fn twice(x: f32, f: impl Fn(f32) -> f32) -> f32 {
    f(f(x))
}

/// The fold of `a` and `b` by `op`, its bounds in a `where` clause.
#[device]
fn combine<T, F>(a: T, b: T, op: F) -> T
where
    T: Number,
    F: Fn(T, T) -> T,
{
    op(a, b)
}

/// A generic kernel whose bound is in a `where` clause.
#[kernel]
fn scaled<T>(x: &[T], k: T, out: &mut [T])
where
    T: Float,
{
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < x.len() {
        out[i] = combine(x[i], k, |a, b| a * b + b);
    }
}

#[kernel]
fn closures(x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < x.len() {
        let shift = 0.5f32;
        out[i] = twice(x[i], |v| v * 0.5 + shift) + combine(x[i], 2.0, f32::max);
    }
}

#[test]
fn where_clauses_and_impl_fn_match_rust() {
    let n = 100;
    let x = random_f32(n, 5);
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| {
            let f = |v: f32| v * 0.5 + 0.5;
            f(f(v)) + v.max(2.0)
        })
        .collect();
    let scaled_expected: Vec<f32> = x.iter().map(|&v| v * 1.5 + 1.5).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        closures::launch(&stream, config, &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
        scaled::launch::<f32>(&stream, config, &dx, 1.5, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &scaled_expected, 1e-6);
    }
}

#[test]
fn signatures_compile_with_nvrtc() {
    use gpu_dsl::runtime::TemplateArg;
    assert_compiles_with_nvrtc(&[
        (&closures::KERNEL, &[]),
        (&scaled::KERNEL, &[TemplateArg::of::<f32>()]),
        (&scaled::KERNEL, &[TemplateArg::of::<f64>()]),
    ]);
}
