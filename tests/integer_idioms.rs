//! Integer idioms ports reach for: `is_multiple_of` (which clippy suggests for `x % n == 0`)
//! and `next_multiple_of` at several widths, Rust's lossless conversions (`u64::from(x)`), and
//! integer logarithms and square roots (`n.ilog2()` for a scan's levels), byte literals
//! (`c == b'\n'`) and a byte's ASCII methods, and integers taken apart into bytes and put
//! back together (`let [r, g, b, a] = px.to_le_bytes()`, `u32::from_le_bytes(..)`), against the
//! same code on the host.

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;

/// `out[2i]` whether `a[i]` is a multiple of `b[i]` (0 only of 0), `out[2i + 1]` the next
/// multiple of `b[i]` from `a[i]` (for a nonzero `b[i]`).
macro_rules! multiple_kernels {
    ($($name:ident: $t:ty;)*) => {$(
        #[kernel]
        fn $name(a: &[$t], b: &[$t], out: &mut [$t]) {
            let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
            if i < a.len() {
                let (x, y) = (a[i], b[i]);
                out[2 * i] = x.is_multiple_of(y) as $t;
                out[2 * i + 1] = if y != 0 { x.next_multiple_of(y) } else { 0 };
            }
        }
    )*};
}

multiple_kernels! {
    multiples_u8: u8;
    multiples_u32: u32;
    multiples_u64: u64;
}

/// Pairs with small and zero divisors, multiples and not, below half the type's range so no
/// next multiple overflows.
fn pairs(max: u64) -> (Vec<u64>, Vec<u64>) {
    let half = max / 2;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in [0, 1, 2, 3, 7, 8, 12, 63, 64, 100, half - 1, half] {
        for y in [0, 1, 2, 3, 4, 5, 8, 16, 60, half / 3, half] {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

macro_rules! check_multiples {
    ($kernel:ident, $t:ty) => {{
        let (a, b) = pairs(<$t>::MAX as u64);
        let a: Vec<$t> = a.iter().map(|&v| v as $t).collect();
        let b: Vec<$t> = b.iter().map(|&v| v as $t).collect();
        let mut expected = Vec::new();
        for (&x, &y) in a.iter().zip(&b) {
            expected.push(x.is_multiple_of(y) as $t);
            expected.push(if y != 0 { x.next_multiple_of(y) } else { 0 });
        }
        for gpu in backends() {
            let stream = gpu.default_stream();
            let da = DeviceBuffer::from_host(&stream, &a).unwrap();
            let db = DeviceBuffer::from_host(&stream, &b).unwrap();
            let mut out = DeviceBuffer::<$t>::zeroed(&stream, 2 * a.len()).unwrap();
            let config = LaunchConfig::for_len(a.len(), 64);
            $kernel::launch(&stream, config, &da, &db, &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            assert_eq!(got, expected, "{} {}", stringify!($t), gpu.name());
        }
    }};
}

#[test]
fn multiples_match_rust() {
    check_multiples!(multiples_u8, u8);
    check_multiples!(multiples_u32, u32);
    check_multiples!(multiples_u64, u64);
}

/// Conversions by `From`: a widening product, a byte as a float and as an index, an `i32`
/// and an `f32` widened, a flag counted.
#[kernel]
fn conversions(a: &[u32], bytes: &[u8], s: &[i32], f: &[f32], table: &[f64], out: &mut [f64]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < a.len() {
        let wide = u64::from(a[i]) * u64::from(a[(i + 1) % a.len()]);
        let level = f32::from(bytes[i]) / 255.0;
        let looked = table[usize::from(bytes[i]) % table.len()];
        let signed = i64::from(s[i]) * 3_000_000_000;
        let flag = u32::from(s[i] > 0) + u32::from(bytes[i]);
        out[i] = (wide % 1_000_003) as f64
            + f64::from(level)
            + looked
            + signed as f64
            + f64::from(f[i])
            + f64::from(flag);
    }
}

#[test]
fn lossless_conversions_match_rust() {
    let n = 300;
    let a: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
    let s: Vec<i32> = (0..n as i32).map(|i| (i - 150) * 1_000_003).collect();
    let f: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 40.0).collect();
    let table: Vec<f64> = (0..17).map(|k| k as f64 * 1.5).collect();
    let expected: Vec<f64> = (0..n)
        .map(|i| {
            let wide = u64::from(a[i]) * u64::from(a[(i + 1) % n]);
            let level = f32::from(bytes[i]) / 255.0;
            let looked = table[usize::from(bytes[i]) % table.len()];
            let signed = i64::from(s[i]) * 3_000_000_000;
            let flag = u32::from(s[i] > 0) + u32::from(bytes[i]);
            (wide % 1_000_003) as f64
                + f64::from(level)
                + looked
                + signed as f64
                + f64::from(f[i])
                + f64::from(flag)
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &bytes).unwrap();
        let ds = DeviceBuffer::from_host(&stream, &s).unwrap();
        let df = DeviceBuffer::from_host(&stream, &f).unwrap();
        let dt = DeviceBuffer::from_host(&stream, &table).unwrap();
        let mut out = DeviceBuffer::<f64>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        conversions::launch(&stream, config, &da, &db, &ds, &df, &dt, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// `ilog2`, `ilog10` and `isqrt` of every width's values, packed into a `u64` each.
#[kernel]
fn roots(a: &[u64], b: &[i32], c: &[u8], out: &mut [u64]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < a.len() {
        let (x, y, z) = (a[i], b[i], c[i]);
        out[i] = u64::from(x.ilog2())
            | u64::from(x.ilog10()) << 8
            | x.isqrt() << 16
            | u64::from(y.ilog2()) << 48
            | u64::from(y.ilog10()) << 56
            | u64::from(z.isqrt()) << 60;
    }
}

fn roots_host(x: u64, y: i32, z: u8) -> u64 {
    u64::from(x.ilog2())
        | u64::from(x.ilog10()) << 8
        | x.isqrt() << 16
        | u64::from(y.ilog2()) << 48
        | u64::from(y.ilog10()) << 56
        | u64::from(z.isqrt()) << 60
}

#[test]
fn integer_logarithms_and_roots_match_rust() {
    // Powers of 2 and 10 and their neighbours, squares and their neighbours, the extremes.
    let mut a: Vec<u64> = vec![1, 2, 3, 9, 10, 11, 99, 100, 101, u64::MAX, u64::MAX - 1];
    for k in [3u64, 10, 31, 32, 33, 63] {
        a.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    for r in [3u64, 1_000, 65_535, 4_294_967_295] {
        a.extend([r * r - 1, r * r, r * r + 1]);
    }
    let n = a.len();
    let b: Vec<i32> = (0..n as i32)
        .map(|k| (k.wrapping_mul(97_531) % 2_000_000_000).abs().max(1))
        .collect();
    let c: Vec<u8> = (0..n).map(|k| (k * 23 % 256) as u8).collect();
    let expected: Vec<u64> = (0..n).map(|k| roots_host(a[k], b[k], c[k])).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let dc = DeviceBuffer::from_host(&stream, &c).unwrap();
        let mut out = DeviceBuffer::<u64>::zeroed(&stream, n).unwrap();
        roots::launch(
            &stream,
            LaunchConfig::for_len(n, 64),
            &da,
            &db,
            &dc,
            &mut out,
        )
        .unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn logarithm_of_zero_panics_as_rust_does() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let da = DeviceBuffer::from_host(&stream, &[0u64]).unwrap();
        let db = DeviceBuffer::from_host(&stream, &[5i32]).unwrap();
        let dc = DeviceBuffer::from_host(&stream, &[1u8]).unwrap();
        let mut out = DeviceBuffer::<u64>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::for_len(1, 32).checked(true);
        roots::launch(&stream, config, &da, &db, &dc, &mut out).unwrap();
        let err = stream.synchronize().expect_err("0 has no logarithm");
        let message = common::panic_message(&err);
        assert_eq!(message, "argument of integer logarithm must be positive");
    }
}

/// Per line of text (its start in `starts`): the words, digits and the first byte after
/// a `#`, compared with byte literals.
#[kernel]
fn line_stats(text: &[u8], starts: &[u32], out: &mut [u32]) {
    let l = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if l + 1 >= starts.len() {
        return;
    }
    let (mut words, mut digits, mut tagged) = (0u32, 0u32, 0u32);
    let mut in_word = false;
    for k in starts[l] as usize..starts[l + 1] as usize {
        let c = text[k];
        let space = c == b' ' || c == b'\t' || c == b'\n';
        if !space && !in_word {
            words += 1;
        }
        in_word = !space;
        if (b'0'..=b'9').contains(&c) {
            digits += 1;
        }
        if c == b'#' && k + 1 < text.len() {
            tagged = u32::from(text[k + 1].wrapping_sub(b'a'));
        }
    }
    // The same classes by the ASCII methods, and the case of the line's first byte turned.
    let (mut letters, mut spaces, mut upper) = (0u32, 0u32, 0u32);
    for k in starts[l] as usize..starts[l + 1] as usize {
        let c = text[k];
        letters += c.is_ascii_alphabetic() as u32 + 2 * c.is_ascii_alphanumeric() as u32;
        spaces += c.is_ascii_whitespace() as u32 + 3 * c.is_ascii_digit() as u32;
        upper += c.is_ascii_uppercase() as u32 + 5 * c.is_ascii_lowercase() as u32;
    }
    let first = text[starts[l] as usize];
    let turned = u32::from(first.to_ascii_uppercase()) + u32::from(first.to_ascii_lowercase());
    out[l] = words | digits << 8 | tagged << 16;
    out[l] ^= (letters + spaces * 7 + upper * 13 + turned * 17) << 20;
}

#[test]
fn byte_literals_match_rust() {
    let text = b"one Two  three\n#x 42 is 6*7\nNo digits here #a\r\n\t tabs\tand 1 2 3\n".to_vec();
    let mut starts = vec![0u32];
    for (k, &c) in text.iter().enumerate() {
        if c == b'\n' {
            starts.push(k as u32 + 1);
        }
    }
    let expected: Vec<u32> = starts
        .windows(2)
        .map(|w| {
            let (mut words, mut digits, mut tagged) = (0u32, 0u32, 0u32);
            let mut in_word = false;
            for k in w[0] as usize..w[1] as usize {
                let c = text[k];
                let space = c == b' ' || c == b'\t' || c == b'\n';
                if !space && !in_word {
                    words += 1;
                }
                in_word = !space;
                if c.is_ascii_digit() {
                    digits += 1;
                }
                if c == b'#' && k + 1 < text.len() {
                    tagged = u32::from(text[k + 1].wrapping_sub(b'a'));
                }
            }
            let (mut letters, mut spaces, mut upper) = (0u32, 0u32, 0u32);
            for &c in &text[w[0] as usize..w[1] as usize] {
                letters += c.is_ascii_alphabetic() as u32 + 2 * c.is_ascii_alphanumeric() as u32;
                spaces += c.is_ascii_whitespace() as u32 + 3 * c.is_ascii_digit() as u32;
                upper += c.is_ascii_uppercase() as u32 + 5 * c.is_ascii_lowercase() as u32;
            }
            let first = text[w[0] as usize];
            let turned =
                u32::from(first.to_ascii_uppercase()) + u32::from(first.to_ascii_lowercase());
            (words | digits << 8 | tagged << 16)
                ^ ((letters + spaces * 7 + upper * 13 + turned * 17) << 20)
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dt = DeviceBuffer::from_host(&stream, &text).unwrap();
        let ds = DeviceBuffer::from_host(&stream, &starts).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, starts.len() - 1).unwrap();
        let config = LaunchConfig::for_len(starts.len(), 32);
        line_stats::launch(&stream, config, &dt, &ds, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// RGBA pixels packed in `u32`s: channels swapped, a gray level, and a 64-bit word put
/// together from bytes both ways.
#[kernel]
fn pixels(px: &[u32], out: &mut [u32], wide: &mut [u64]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= px.len() {
        return;
    }
    let [r, g, b, a] = px[i].to_le_bytes();
    let gray = ((u32::from(r) * 77 + u32::from(g) * 150 + u32::from(b) * 29) >> 8) as u8;
    out[i] = u32::from_le_bytes([b, g, r, a]) ^ u32::from_be_bytes([gray, gray, gray, 255]);
    let [hi, lo] = (px[i] as u16).to_be_bytes();
    let bytes = [r, g, b, a, hi, lo, gray, 7];
    wide[i] = u64::from_le_bytes(bytes) ^ u64::from_be_bytes(bytes).rotate_left(7);
}

#[test]
fn bytes_of_integers_match_rust() {
    let px: Vec<u32> = (0..200u32).map(|k| k.wrapping_mul(2_654_435_761)).collect();
    let mut expected = Vec::new();
    let mut expected_wide = Vec::new();
    for &p in &px {
        let [r, g, b, a] = p.to_le_bytes();
        let gray = ((u32::from(r) * 77 + u32::from(g) * 150 + u32::from(b) * 29) >> 8) as u8;
        expected
            .push(u32::from_le_bytes([b, g, r, a]) ^ u32::from_be_bytes([gray, gray, gray, 255]));
        let [hi, lo] = (p as u16).to_be_bytes();
        let bytes = [r, g, b, a, hi, lo, gray, 7];
        expected_wide.push(u64::from_le_bytes(bytes) ^ u64::from_be_bytes(bytes).rotate_left(7));
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &px).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, px.len()).unwrap();
        let mut wide = DeviceBuffer::<u64>::zeroed(&stream, px.len()).unwrap();
        let config = LaunchConfig::for_len(px.len(), 64);
        pixels::launch(&stream, config, &dp, &mut out, &mut wide).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        assert_eq!(
            wide.to_host(&stream).unwrap(),
            expected_wide,
            "{}",
            gpu.name()
        );
    }
}

#[test]
fn integer_idioms_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&pixels::KERNEL, &[]),
        (&line_stats::KERNEL, &[]),
        (&roots::KERNEL, &[]),
        (&conversions::KERNEL, &[]),
        (&multiples_u8::KERNEL, &[]),
        (&multiples_u32::KERNEL, &[]),
        (&multiples_u64::KERNEL, &[]),
    ]);
}
