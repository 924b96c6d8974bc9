//! The integers narrower than `int` (`i8`, `u8`, `i16`, `u16`): C++ promotes them to `int`, so
//! every result must be brought back to its width to match Rust. Each kernel computes a row of
//! results per element that the same expressions in plain Rust reproduce.

mod common;

use common::assert_compiles_with_nvrtc;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, TemplateArg};

/// Results per element in `bytes`.
const U8_RESULTS: usize = 16;

#[kernel]
fn bytes(a: &[u8], b: &[u8], k: u8, out: &mut [u8], counts: &mut [u32]) {
    let i = global_idx().x;
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let o = i * 16;
        out[o] = x + y;
        out[o + 1] = x - y;
        out[o + 2] = x * y;
        // Wrapped before the division, as in Rust.
        out[o + 3] = (x + y) / 2;
        out[o + 4] = (x << 3) >> 3;
        out[o + 5] = !x >> 4;
        out[o + 6] = (x & y) | (x ^ k);
        out[o + 7] = x.min(y).max(k);
        out[o + 8] = if y != 0 { x % y } else { u8::MAX };
        out[o + 9] = x.wrapping_mul(3).pow(2);
        let mut acc = 200u8;
        acc += x;
        acc <<= 1;
        out[o + 10] = acc;
        let class = match x {
            0 => 1,
            1..=9 => 2,
            255 => 3,
            _ => 4,
        };
        out[o + 11] = class;
        out[o + 12] = (x as f32 * 1.7) as u8;
        out[o + 13] = ((y as i32) - 300) as u8;
        out[o + 14] = if x > y { x - y } else { y - x };
        out[o + 15] = u8::MIN + (x >> 1) + (y >> 1);
        counts[i * 3] = x.count_ones();
        counts[i * 3 + 1] = x.leading_zeros();
        counts[i * 3 + 2] = y.trailing_zeros();
    }
}

fn bytes_cpu(x: u8, y: u8, k: u8) -> ([u8; U8_RESULTS], [u32; 3]) {
    let mut acc = 200u8.wrapping_add(x);
    acc = acc.wrapping_shl(1);
    let out = [
        x.wrapping_add(y),
        x.wrapping_sub(y),
        x.wrapping_mul(y),
        x.wrapping_add(y) / 2,
        x.wrapping_shl(3) >> 3,
        !x >> 4,
        (x & y) | (x ^ k),
        x.min(y).max(k),
        if y != 0 { x % y } else { u8::MAX },
        x.wrapping_mul(3).wrapping_pow(2),
        acc,
        match x {
            0 => 1,
            1..=9 => 2,
            255 => 3,
            _ => 4,
        },
        (x as f32 * 1.7) as u8,
        ((y as i32) - 300) as u8,
        x.abs_diff(y),
        (x >> 1) + (y >> 1),
    ];
    (out, [x.count_ones(), x.leading_zeros(), y.trailing_zeros()])
}

/// Results per element in `signed_bytes`.
const I8_RESULTS: usize = 14;

#[kernel]
fn signed_bytes(a: &[i8], b: &[i8], f: &[f32], out: &mut [i8], wide: &mut [i32]) {
    let i = global_idx().x;
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let o = i * 14;
        out[o] = x + y;
        out[o + 1] = x - y;
        out[o + 2] = x * y;
        out[o + 3] = -x;
        out[o + 4] = x.abs();
        out[o + 5] = x << 4;
        out[o + 6] = x >> 2;
        out[o + 7] = !x;
        out[o + 8] = if y != 0 && !(x == i8::MIN && y == -1) {
            x / y
        } else {
            i8::MIN
        };
        out[o + 9] = if y != 0 && y != -1 { x % y } else { 0 };
        out[o + 10] = f[i] as i8;
        out[o + 11] = (x as u8 >> 1) as i8;
        out[o + 12] = -128i8 + (x & 0x0f);
        out[o + 13] = x.max(-3).min(i8::MAX - 1);
        wide[i * 3] = x as i32 * 1000;
        wide[i * 3 + 1] = x.count_ones() as i32;
        wide[i * 3 + 2] = (x + y) as i32;
    }
}

fn signed_bytes_cpu(x: i8, y: i8, f: f32) -> ([i8; I8_RESULTS], [i32; 3]) {
    let out = [
        x.wrapping_add(y),
        x.wrapping_sub(y),
        x.wrapping_mul(y),
        x.wrapping_neg(),
        x.wrapping_abs(),
        x.wrapping_shl(4),
        x >> 2,
        !x,
        if y != 0 && !(x == i8::MIN && y == -1) {
            x / y
        } else {
            i8::MIN
        },
        if y != 0 && y != -1 { x % y } else { 0 },
        f as i8,
        (x as u8 >> 1) as i8,
        -128i8 + (x & 0x0f),
        x.clamp(-3, i8::MAX - 1),
    ];
    let wide = [
        x as i32 * 1000,
        x.count_ones() as i32,
        x.wrapping_add(y) as i32,
    ];
    (out, wide)
}

/// Results per element in `shorts`.
const SHORT_RESULTS: usize = 8;

#[kernel]
fn shorts(a: &[u16], b: &[i16], f: &[f64], out: &mut [u16], signed: &mut [i16]) {
    let i = global_idx().x;
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let o = i * 4;
        out[o] = x * x + 7;
        out[o + 1] = (x << 9) >> 9;
        out[o + 2] = f[i] as u16;
        out[o + 3] = (x as u32 + 70000u32) as u16;
        signed[o] = y * y - 3;
        signed[o + 1] = y << 12;
        signed[o + 2] = f[i] as i16;
        signed[o + 3] = (x as i16).wrapping_add(y) ^ i16::MIN;
    }
}

fn shorts_cpu(x: u16, y: i16, f: f64) -> [i32; SHORT_RESULTS] {
    [
        x.wrapping_mul(x).wrapping_add(7) as i32,
        (x.wrapping_shl(9) >> 9) as i32,
        f as u16 as i32,
        (x as u32 + 70000) as u16 as i32,
        y.wrapping_mul(y).wrapping_sub(3) as i32,
        y.wrapping_shl(12) as i32,
        f as i16 as i32,
        ((x as i16).wrapping_add(y) ^ i16::MIN) as i32,
    ]
}

/// Generic code instantiated with a small integer wraps at that integer's width.
#[kernel]
fn generic_wrap<T: Integer>(x: &[T], y: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        let v = x[i];
        y[i * 4] = (v + v + v) / (T::from_bits(2) + T::from_bits(1));
        y[i * 4 + 1] = (v << 5) >> 5;
        y[i * 4 + 2] = !v & (v * v);
        y[i * 4 + 3] = T::from_bits(v.trailing_zeros() as u64);
    }
}

/// Every byte value against every one of a few partners.
fn byte_inputs() -> (Vec<u8>, Vec<u8>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in 0..=255u8 {
        for y in [0u8, 1, 2, 7, 128, 200, 255, x.wrapping_mul(37)] {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

#[test]
fn u8_arithmetic_wraps_at_eight_bits() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (a_host, b_host) = byte_inputs();
    let n = a_host.len();
    let k = 0x5au8;
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let mut out = DeviceBuffer::<u8>::zeroed(&stream, n * U8_RESULTS).unwrap();
    let mut counts = DeviceBuffer::<u32>::zeroed(&stream, n * 3).unwrap();
    let config = LaunchConfig::for_len(n, 128);
    bytes::launch(&stream, config, &a, &b, k, &mut out, &mut counts).unwrap();
    let out = out.to_host(&stream).unwrap();
    let counts = counts.to_host(&stream).unwrap();
    for i in 0..n {
        let (expected, expected_counts) = bytes_cpu(a_host[i], b_host[i], k);
        assert_eq!(
            &out[i * U8_RESULTS..(i + 1) * U8_RESULTS],
            &expected,
            "x {} y {}",
            a_host[i],
            b_host[i]
        );
        assert_eq!(
            &counts[i * 3..i * 3 + 3],
            &expected_counts,
            "x {}",
            a_host[i]
        );
    }
}

#[test]
fn i8_arithmetic_casts_and_methods() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (a_bytes, b_bytes) = byte_inputs();
    let a_host: Vec<i8> = a_bytes.iter().map(|&v| v as i8).collect();
    let b_host: Vec<i8> = b_bytes.iter().map(|&v| v as i8).collect();
    let n = a_host.len();
    let specials = [f32::NAN, 1e9, -1e9, 127.9, -128.9, -0.5, 3.99];
    let f_host: Vec<f32> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                specials[i / 5 % specials.len()]
            } else {
                (i as f32 - n as f32 / 2.0) * 0.37
            }
        })
        .collect();
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let f = DeviceBuffer::from_host(&stream, &f_host).unwrap();
    let mut out = DeviceBuffer::<i8>::zeroed(&stream, n * I8_RESULTS).unwrap();
    let mut wide = DeviceBuffer::<i32>::zeroed(&stream, n * 3).unwrap();
    let config = LaunchConfig::for_len(n, 128);
    signed_bytes::launch(&stream, config, &a, &b, &f, &mut out, &mut wide).unwrap();
    let out = out.to_host(&stream).unwrap();
    let wide = wide.to_host(&stream).unwrap();
    for i in 0..n {
        let (expected, expected_wide) = signed_bytes_cpu(a_host[i], b_host[i], f_host[i]);
        let got = &out[i * I8_RESULTS..(i + 1) * I8_RESULTS];
        assert_eq!(
            got, &expected,
            "x {} y {} f {}",
            a_host[i], b_host[i], f_host[i]
        );
        assert_eq!(&wide[i * 3..i * 3 + 3], &expected_wide, "x {}", a_host[i]);
    }
}

#[test]
fn sixteen_bit_arithmetic_and_saturating_casts() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 4096;
    let a_host: Vec<u16> = (0..n).map(|i| (i as u16).wrapping_mul(40503)).collect();
    let b_host: Vec<i16> = (0..n)
        .map(|i| (i as u16).wrapping_mul(7919) as i16)
        .collect();
    let specials = [f64::NAN, 1e12, -1e12, 65535.5, -32768.7, 32767.9, -0.9];
    let f_host: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                specials[i / 3 % specials.len()]
            } else {
                (i as f64 - 1000.0) * 23.7
            }
        })
        .collect();
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let f = DeviceBuffer::from_host(&stream, &f_host).unwrap();
    let mut out = DeviceBuffer::<u16>::zeroed(&stream, n * 4).unwrap();
    let mut signed = DeviceBuffer::<i16>::zeroed(&stream, n * 4).unwrap();
    shorts::launch(
        &stream,
        LaunchConfig::for_len(n, 256),
        &a,
        &b,
        &f,
        &mut out,
        &mut signed,
    )
    .unwrap();
    let out = out.to_host(&stream).unwrap();
    let signed = signed.to_host(&stream).unwrap();
    for i in 0..n {
        let expected = shorts_cpu(a_host[i], b_host[i], f_host[i]);
        let got: Vec<i32> = out[i * 4..i * 4 + 4]
            .iter()
            .map(|&v| v as i32)
            .chain(signed[i * 4..i * 4 + 4].iter().map(|&v| v as i32))
            .collect();
        assert_eq!(
            got, expected,
            "x {} y {} f {}",
            a_host[i], b_host[i], f_host[i]
        );
    }
}

#[test]
fn generic_kernels_instantiate_with_small_integers() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let x_host: Vec<u8> = (0..=255).collect();
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let mut y = DeviceBuffer::<u8>::zeroed(&stream, 256 * 4).unwrap();
    generic_wrap::launch::<u8>(&stream, LaunchConfig::for_len(256, 64), &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for (i, &v) in x_host.iter().enumerate() {
        let expected = [
            v.wrapping_mul(3) / 3,
            v.wrapping_shl(5) >> 5,
            !v & v.wrapping_mul(v),
            v.trailing_zeros() as u8,
        ];
        assert_eq!(&got[i * 4..i * 4 + 4], &expected, "u8 {v}");
    }

    let mut x_host: Vec<i16> = (0..1000).map(|i| (i * 97 - 48_000) as i16).collect();
    x_host[0] = 0;
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let mut y = DeviceBuffer::<i16>::zeroed(&stream, x_host.len() * 4).unwrap();
    let config = LaunchConfig::for_len(x_host.len(), 64);
    generic_wrap::launch::<i16>(&stream, config, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for (i, &v) in x_host.iter().enumerate() {
        let expected = [
            v.wrapping_mul(3) / 3,
            v.wrapping_shl(5) >> 5,
            !v & v.wrapping_mul(v),
            v.trailing_zeros() as i16,
        ];
        assert_eq!(&got[i * 4..i * 4 + 4], &expected, "i16 {v}");
    }
}

/// RGBA pixels, four bytes in one access each way: inverted colour, alpha kept.
#[kernel]
fn invert_rgba(pixels: &[u8], out: &mut [u8], gray: &mut [u8]) {
    let p = global_idx().x;
    if p * 4 < pixels.len() {
        let px = pixels.load4(p * 4);
        let inverted = [255 - px[0], 255 - px[1], 255 - px[2], px[3]];
        out.store4(p * 4, inverted);
        let sum = px[0] as u32 * 77 + px[1] as u32 * 150 + px[2] as u32 * 29;
        gray[p] = (sum >> 8) as u8;
    }
}

#[test]
fn packed_bytes_move_four_at_a_time() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1000;
    let pixels_host: Vec<u8> = (0..n * 4).map(|i| (i * 31 % 256) as u8).collect();
    let pixels = DeviceBuffer::from_host(&stream, &pixels_host).unwrap();
    let mut out = DeviceBuffer::<u8>::zeroed(&stream, n * 4).unwrap();
    let mut gray = DeviceBuffer::<u8>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::for_len(n, 128);
    invert_rgba::launch(&stream, config, &pixels, &mut out, &mut gray).unwrap();
    let out = out.to_host(&stream).unwrap();
    let gray = gray.to_host(&stream).unwrap();
    for p in 0..n {
        let px = &pixels_host[p * 4..p * 4 + 4];
        assert_eq!(
            &out[p * 4..p * 4 + 4],
            &[255 - px[0], 255 - px[1], 255 - px[2], px[3]],
            "pixel {p}"
        );
        let sum = px[0] as u32 * 77 + px[1] as u32 * 150 + px[2] as u32 * 29;
        assert_eq!(gray[p], (sum >> 8) as u8, "pixel {p}");
    }
}

/// Shuffles move small integers at their own type.
#[kernel]
fn shuffle_small(x: &[i16], bytes: &[u8], out: &mut [i16], out_bytes: &mut [u8]) {
    let i = global_idx().x;
    let v = x[i];
    let b = bytes[i];
    let mut sum = v;
    let mut offset = 16u32;
    while offset > 0 {
        sum += shfl_xor_sync(0xffff_ffff, sum, offset);
        offset /= 2;
    }
    out[i] = sum;
    out_bytes[i] = shfl_sync(0xffff_ffff, b, 31 - lane_id()) + 1;
}

#[test]
fn shuffles_of_small_integers() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 128;
    let x_host: Vec<i16> = (0..n).map(|i| (i as i16 - 60).wrapping_mul(700)).collect();
    let bytes_host: Vec<u8> = (0..n).map(|i| (i * 7 % 256) as u8).collect();
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let bytes = DeviceBuffer::from_host(&stream, &bytes_host).unwrap();
    let mut out = DeviceBuffer::<i16>::zeroed(&stream, n).unwrap();
    let mut out_bytes = DeviceBuffer::<u8>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::x(2), Block::x(64));
    shuffle_small::launch(&stream, config, &x, &bytes, &mut out, &mut out_bytes).unwrap();
    let out = out.to_host(&stream).unwrap();
    let out_bytes = out_bytes.to_host(&stream).unwrap();
    for i in 0..n {
        let warp = i / 32 * 32;
        let total = x_host[warp..warp + 32]
            .iter()
            .fold(0i16, |a, &b| a.wrapping_add(b));
        assert_eq!(out[i], total, "lane {i}");
        let source = warp + 31 - i % 32;
        assert_eq!(out_bytes[i], bytes_host[source].wrapping_add(1), "lane {i}");
    }
}

/// Small scalars by value, beside wider ones: the kernel ABI passes each at its own size.
#[kernel]
fn small_scalars(a: i8, b: u8, c: i16, d: u16, e: u32, out: &mut [i64]) {
    out[0] = a as i64;
    out[1] = b as i64;
    out[2] = c as i64;
    out[3] = d as i64;
    out[4] = e as i64;
}

#[test]
fn small_scalars_reach_the_kernel() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::<i64>::zeroed(&stream, 5).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(1));
    small_scalars::launch(
        &stream,
        config,
        -100,
        250,
        -30_000,
        65_000,
        4_000_000_000,
        &mut out,
    )
    .unwrap();
    assert_eq!(
        out.to_host(&stream).unwrap(),
        vec![-100, 250, -30_000, 65_000, 4_000_000_000]
    );
}

#[test]
fn small_integer_kernels_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&bytes::KERNEL, &[]),
        (&signed_bytes::KERNEL, &[]),
        (&shorts::KERNEL, &[]),
        (&small_scalars::KERNEL, &[]),
        (&invert_rgba::KERNEL, &[]),
        (&shuffle_small::KERNEL, &[]),
        (&generic_wrap::KERNEL, &[TemplateArg::of::<u8>()]),
        (&generic_wrap::KERNEL, &[TemplateArg::of::<i8>()]),
        (&generic_wrap::KERNEL, &[TemplateArg::of::<u16>()]),
        (&generic_wrap::KERNEL, &[TemplateArg::of::<i16>()]),
        (&generic_wrap::KERNEL, &[TemplateArg::of::<u32>()]),
    ]);
}
