//! `load2`/`store2`: two elements in one access (CUDA's `float2`, `double2`, `uchar2`, ... and a
//! 4-byte pair of `f16`), beside the four-element `load4`/`store4`.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, TemplateArg};

/// Complex numbers stored as (re, im) pairs: one 8-byte access each way.
#[kernel]
fn complex_square(z: &[f32], out: &mut [f32]) {
    let i = global_idx().x * 2;
    if i + 2 <= z.len() {
        let c = z.load2(i);
        let squared = [c[0] * c[0] - c[1] * c[1], 2.0 * c[0] * c[1]];
        out.store2(i, squared);
    }
}

#[test]
fn float_pairs_in_one_access() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 2 * 777;
    let host = random_f32(n, 3);
    let z = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::for_len(n / 2, 128);
    complex_square::launch(&stream, config, &z, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for k in 0..n / 2 {
        let (re, im) = (host[2 * k], host[2 * k + 1]);
        let expected = [re * re - im * im, 2.0 * re * im];
        for j in 0..2 {
            let g = got[2 * k + j];
            assert!(
                (g - expected[j]).abs() <= 1e-6,
                "pair {k}: {g} vs {}",
                expected[j]
            );
        }
    }
}

/// Every width of pair: 16 bytes (`f64`, `u64`), 4 (`f16`, `i16`), 2 (`u8`).
#[kernel]
fn swap_pairs(
    d: &[f64],
    d_out: &mut [f64],
    w: &[u64],
    w_out: &mut [u64],
    h: &[f16],
    h_out: &mut [f16],
    s: &[i16],
    s_out: &mut [i16],
    b: &[u8],
    b_out: &mut [u8],
) {
    let i = global_idx().x * 2;
    if i + 2 <= d.len() {
        let v = d.load2(i);
        let d_swapped = [v[1], v[0]];
        d_out.store2(i, d_swapped);
        let v = w.load2(i);
        let w_swapped = [v[1], v[0] + 1];
        w_out.store2(i, w_swapped);
        let v = h.load2(i);
        let h_swapped = [v[1], v[0]];
        h_out.store2(i, h_swapped);
        let v = s.load2(i);
        let s_swapped = [v[1], v[0] - 1];
        s_out.store2(i, s_swapped);
        let v = b.load2(i);
        let b_swapped = [v[1], v[0] + 1];
        b_out.store2(i, b_swapped);
    }
}

#[test]
fn pairs_of_every_width() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 2 * 300;
    let d_host: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
    let w_host: Vec<u64> = (0..n).map(|i| (i as u64) << 40 | 3).collect();
    let h_host: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 * 0.25)).collect();
    let s_host: Vec<i16> = (0..n).map(|i| (i as i16).wrapping_mul(211)).collect();
    let b_host: Vec<u8> = (0..n).map(|i| (i * 13 % 256) as u8).collect();
    let d = DeviceBuffer::from_host(&stream, &d_host).unwrap();
    let w = DeviceBuffer::from_host(&stream, &w_host).unwrap();
    let h = DeviceBuffer::from_host(&stream, &h_host).unwrap();
    let s = DeviceBuffer::from_host(&stream, &s_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let mut d_out = DeviceBuffer::<f64>::zeroed(&stream, n).unwrap();
    let mut w_out = DeviceBuffer::<u64>::zeroed(&stream, n).unwrap();
    let mut h_out = DeviceBuffer::<f16>::zeroed(&stream, n).unwrap();
    let mut s_out = DeviceBuffer::<i16>::zeroed(&stream, n).unwrap();
    let mut b_out = DeviceBuffer::<u8>::zeroed(&stream, n).unwrap();
    swap_pairs::launch(
        &stream,
        LaunchConfig::for_len(n / 2, 64),
        &d,
        &mut d_out,
        &w,
        &mut w_out,
        &h,
        &mut h_out,
        &s,
        &mut s_out,
        &b,
        &mut b_out,
    )
    .unwrap();
    let d_got = d_out.to_host(&stream).unwrap();
    let w_got = w_out.to_host(&stream).unwrap();
    let h_got = h_out.to_host(&stream).unwrap();
    let s_got = s_out.to_host(&stream).unwrap();
    let b_got = b_out.to_host(&stream).unwrap();
    for k in (0..n).step_by(2) {
        assert_eq!(
            [d_got[k], d_got[k + 1]],
            [d_host[k + 1], d_host[k]],
            "f64 {k}"
        );
        assert_eq!(
            [w_got[k], w_got[k + 1]],
            [w_host[k + 1], w_host[k] + 1],
            "u64 {k}"
        );
        assert_eq!(
            [h_got[k], h_got[k + 1]],
            [h_host[k + 1], h_host[k]],
            "f16 {k}"
        );
        assert_eq!(
            [s_got[k], s_got[k + 1]],
            [s_host[k + 1], s_host[k].wrapping_sub(1)],
            "i16 {k}"
        );
        assert_eq!(
            [b_got[k], b_got[k + 1]],
            [b_host[k + 1], b_host[k].wrapping_add(1)],
            "u8 {k}"
        );
    }
}

/// A generic `T` moves as `rs_vec2<T>`.
#[kernel]
fn pair_sums<T: Number>(x: &[T], sums: &mut [T]) {
    let i = global_idx().x;
    if 2 * i + 2 <= x.len() {
        let v = x.load2(2 * i);
        sums[i] = v[0] + v[1];
    }
}

#[test]
fn generic_pairs() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<i32> = (0..512).map(|i| i * 3 - 700).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut sums = DeviceBuffer::<i32>::zeroed(&stream, 256).unwrap();
    pair_sums::launch::<i32>(&stream, LaunchConfig::for_len(256, 64), &x, &mut sums).unwrap();
    let got = sums.to_host(&stream).unwrap();
    for k in 0..256 {
        assert_eq!(got[k], host[2 * k] + host[2 * k + 1], "pair {k}");
    }
}

/// A pair reaching past the end is caught in checked mode, naming its second element.
#[kernel]
fn pair_at(x: &[f32], start: usize, out: &mut [f32]) {
    let v = x.load2(start);
    out[0] = v[0] + v[1];
}

#[test]
fn a_pair_past_the_end_is_a_kernel_panic() {
    let gpu = test_device();
    let stream = gpu.new_stream().unwrap();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(1)).checked(true);
    pair_at::launch(&stream, config, &x, 2, &mut out).unwrap();
    assert_eq!(out.to_host(&stream).unwrap(), vec![7.0]);
    pair_at::launch(&stream, config, &x, 6, &mut out).unwrap();
    let error = stream.synchronize().unwrap_err().to_string();
    assert!(error.contains("kernel `pair_at` panicked"), "{error}");
    assert!(error.contains("the len is 6 but the index is 7"), "{error}");
}

#[test]
fn pair_kernels_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&complex_square::KERNEL, &[]),
        (&swap_pairs::KERNEL, &[]),
        (&pair_at::KERNEL, &[]),
        (&pair_sums::KERNEL, &[TemplateArg::of::<i32>()]),
        (&pair_sums::KERNEL, &[TemplateArg::of::<f64>()]),
        (&pair_sums::KERNEL, &[TemplateArg::of::<u8>()]),
    ]);
}
