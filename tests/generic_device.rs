//! Generic `#[device]` functions: bounded by `Float`, `Integer` or `Number`, with const
//! parameters, called from plain and generic kernels and from each other, instantiated by the
//! arguments' types, the expected result or a turbofish; each instantiation compared with a
//! plain Rust computation and compiled by NVRTC.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu::prelude::*;
use gpu::runtime::{test_device, TemplateArg};

#[device]
fn square<T: Number>(x: T) -> T {
    x * x
}

/// Calls another generic function with its own parameter.
#[device]
fn sum_of_squares<T: Number>(a: T, b: T) -> T {
    square(a) + square(b)
}

#[device]
fn lerp<T: Float>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

/// A generic slice parameter.
#[device]
fn window_sum<T: Number>(x: &[T], start: usize, count: usize) -> T {
    let mut total = x[start];
    for k in 1..count {
        if start + k < x.len() {
            total += x[start + k];
        }
    }
    total
}

/// A const parameter, given by the caller's turbofish.
#[device]
fn scaled<const K: usize>(x: u32) -> u32 {
    x * K as u32
}

/// A result type the arguments do not fix: the turbofish or the expected type does.
#[device]
fn zero_like<T: Integer>(x: u32) -> T {
    (x - x) as T
}

/// A warp reduction of a generic value through a shuffle.
#[device]
fn warp_sum<T: Number>(value: T) -> T {
    let mut v = value;
    let mut offset = 16u32;
    while offset > 0 {
        v += shfl_down_sync(0xffff_ffff, v, offset);
        offset /= 2;
    }
    v
}

#[kernel]
fn plain_caller(x: &[f32], n: &[u32], out: &mut [f32], out_n: &mut [u32], out_i: &mut [i64]) {
    let i = global_idx().x;
    if i < x.len() {
        out[i] = sum_of_squares(x[i], 0.5) + lerp(x[i], 1.0, 0.25) + window_sum(x, i, 3);
        let zero: u32 = zero_like(n[i]);
        out_n[i] = square(n[i] % 1000) + scaled::<3>(n[i] % 1000) + zero;
        out_i[i] = square(n[i] as i64 % 1000) + zero_like::<i64>(n[i]);
    }
}

#[kernel]
fn generic_caller<T: Number>(x: &[T], out: &mut [T], warp_totals: &mut [T]) {
    let i = global_idx().x;
    let v = if i < x.len() { x[i] } else { x[0] - x[0] };
    if i < x.len() {
        out[i] = sum_of_squares::<T>(v, v) + square(window_sum(x, i, 2));
    }
    let total = warp_sum(v);
    if lane_id() == 0 && i / 32 < warp_totals.len() {
        warp_totals[i / 32] = total;
    }
}

#[kernel]
fn const_caller<const K: usize>(n: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < n.len() {
        out[i] = scaled::<K>(n[i]) + scaled::<10>(1);
    }
}

#[test]
fn a_plain_kernel_instantiates_by_argument_result_and_turbofish() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1000;
    let x = random_f32(n, 1);
    let nums: Vec<u32> = (0..n as u32)
        .map(|k| k.wrapping_mul(2_654_435_761))
        .collect();
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let dn = DeviceBuffer::from_host(&stream, &nums).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let mut out_n = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    let mut out_i = DeviceBuffer::<i64>::zeroed(&stream, n).unwrap();
    plain_caller::launch(
        &stream,
        LaunchConfig::for_len(n, 128),
        &dx,
        &dn,
        &mut out,
        &mut out_n,
        &mut out_i,
    )
    .unwrap();
    let (out, out_n, out_i) = (
        out.to_host(&stream).unwrap(),
        out_n.to_host(&stream).unwrap(),
        out_i.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let window: f32 = (i..(i + 3).min(n)).map(|k| x[k]).sum();
        let expected = x[i] * x[i] + 0.25 + x[i] + (1.0 - x[i]) * 0.25 + window;
        assert!(
            (out[i] - expected).abs() < 1e-4,
            "{i}: {} vs {expected}",
            out[i]
        );
        let m = nums[i] % 1000;
        assert_eq!(out_n[i], m * m + m * 3, "{i}");
        assert_eq!(out_i[i], (m as i64) * (m as i64), "{i}");
    }
}

#[test]
fn a_generic_kernel_passes_its_type_parameter_on() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 256;
    let x = random_f32(n, 2);
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let mut totals = DeviceBuffer::<f32>::zeroed(&stream, n / 32).unwrap();
    let config = LaunchConfig::for_len(n, 64);
    generic_caller::launch::<f32>(&stream, config, &dx, &mut out, &mut totals).unwrap();
    let (out, totals) = (
        out.to_host(&stream).unwrap(),
        totals.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let window: f32 = (i..(i + 2).min(n)).map(|k| x[k]).sum();
        let expected = 2.0 * x[i] * x[i] + window * window;
        assert!(
            (out[i] - expected).abs() < 1e-4,
            "{i}: {} vs {expected}",
            out[i]
        );
    }
    for (w, total) in totals.iter().enumerate() {
        let expected: f32 = x[w * 32..w * 32 + 32].iter().sum();
        assert!(
            (total - expected).abs() < 1e-4,
            "warp {w}: {total} vs {expected}"
        );
    }

    let xi: Vec<i32> = (0..n as i32).map(|k| k * 7 - 300).collect();
    let dx = DeviceBuffer::from_host(&stream, &xi).unwrap();
    let mut out = DeviceBuffer::<i32>::zeroed(&stream, n).unwrap();
    let mut totals = DeviceBuffer::<i32>::zeroed(&stream, n / 32).unwrap();
    generic_caller::launch::<i32>(&stream, config, &dx, &mut out, &mut totals).unwrap();
    let (out, totals) = (
        out.to_host(&stream).unwrap(),
        totals.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let window: i32 = (i..(i + 2).min(n)).map(|k| xi[k]).sum();
        assert_eq!(out[i], 2 * xi[i] * xi[i] + window * window, "{i}");
    }
    for (w, total) in totals.iter().enumerate() {
        assert_eq!(
            *total,
            xi[w * 32..w * 32 + 32].iter().sum::<i32>(),
            "warp {w}"
        );
    }
}

#[test]
fn const_parameters_pass_on_through_turbofish() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let nums: Vec<u32> = (0..300).collect();
    let dn = DeviceBuffer::from_host(&stream, &nums).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, nums.len()).unwrap();
    let config = LaunchConfig::for_len(nums.len(), 128);
    const_caller::launch::<5>(&stream, config, &dn, &mut out).unwrap();
    let out = out.to_host(&stream).unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, nums[i] * 5 + 10, "{i}");
    }
}

#[test]
fn every_instantiation_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&plain_caller::KERNEL, &[]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<f32>()]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<i32>()]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<u64>()]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<f64>()]),
        (&const_caller::KERNEL, &[TemplateArg::Const(5)]),
    ]);
}
