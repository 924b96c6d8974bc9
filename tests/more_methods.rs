//! The rest of Rust's number methods that ports reach for: integer `div_euclid`, `div_ceil`,
//! `unsigned_abs`, `count_zeros`, `leading_ones`, `trailing_ones` at every width, and float
//! `sin_cos`, `log`, `rem_euclid`, `div_euclid`, `asinh`, `acosh`, `atanh`, against the same
//! methods on the host.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::TemplateArg;

/// One kernel per type: `div_euclid` and the bit counts of each pair, then `$extra` (a
/// method giving the unsigned type of the width).
macro_rules! int_kernels {
    ($($name:ident: $t:ty, $u:ty, |$x:ident, $y:ident| $extra:expr;)*) => {$(
        #[kernel]
        fn $name(a: &[$t], b: &[$t], quotients: &mut [$t], counts: &mut [u32], extra: &mut [$u]) {
            let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
            if i < a.len() {
                let ($x, $y) = (a[i], b[i]);
                quotients[i] = if $y != 0 { $x.div_euclid($y) } else { 0 };
                counts[i * 3] = $x.count_zeros();
                counts[i * 3 + 1] = $x.leading_ones();
                counts[i * 3 + 2] = $x.trailing_ones();
                extra[i] = $extra;
            }
        }
    )*};
}

int_kernels! {
    more_u8: u8, u8, |x, y| if y != 0 { x.div_ceil(y) } else { 0 };
    more_i8: i8, u8, |x, y| x.unsigned_abs();
    more_u16: u16, u16, |x, y| if y != 0 { x.div_ceil(y) } else { 0 };
    more_i32: i32, u32, |x, y| x.unsigned_abs();
    more_u32: u32, u32, |x, y| if y != 0 { x.div_ceil(y) } else { 0 };
    more_i64: i64, u64, |x, y| x.unsigned_abs();
    more_u64: u64, u64, |x, y| if y != 0 { x.div_ceil(y) } else { 0 };
}

/// Edge values (0, 1, the extremes and their neighbours, as bits each type truncates) and a
/// spread of others.
fn samples(n: usize, seed: u64) -> Vec<u64> {
    let edges: [u64; 10] = [
        0,
        1,
        2,
        3,
        7,
        0x7f,
        0x80,
        0x7fff,
        0x7fff_ffff,
        0x7fff_ffff_ffff_ffff,
    ];
    let mut state = seed | 1;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match i % 4 {
                0 => edges[i / 4 % edges.len()],
                1 => edges[i / 4 % edges.len()].wrapping_neg(),
                2 => state >> (state % 60),
                _ => state,
            }
        })
        .collect()
}

macro_rules! int_test {
    ($test:ident, $kernel:ident, $t:ty, $u:ty, |$x:ident, $y:ident| $extra:expr) => {
        #[test]
        fn $test() {
            let n = 400;
            let a: Vec<$t> = samples(n, 3).into_iter().map(|v| v as $t).collect();
            let b: Vec<$t> = samples(n, 5).into_iter().rev().map(|v| v as $t).collect();
            let mut quotients = Vec::new();
            let mut counts = Vec::new();
            let mut extra = Vec::new();
            for (&$x, &$y) in a.iter().zip(&b) {
                quotients.push(if $y != 0 {
                    $x.wrapping_div_euclid($y)
                } else {
                    0
                });
                counts.extend([$x.count_zeros(), $x.leading_ones(), $x.trailing_ones()]);
                extra.push($extra);
            }
            for gpu in backends() {
                let stream = gpu.default_stream();
                let da = DeviceBuffer::from_host(&stream, &a).unwrap();
                let db = DeviceBuffer::from_host(&stream, &b).unwrap();
                let mut q = DeviceBuffer::<$t>::zeroed(&stream, n).unwrap();
                let mut c = DeviceBuffer::<u32>::zeroed(&stream, n * 3).unwrap();
                let mut e = DeviceBuffer::<$u>::zeroed(&stream, n).unwrap();
                let config = LaunchConfig::for_len(n, 64);
                $kernel::launch(&stream, config, &da, &db, &mut q, &mut c, &mut e).unwrap();
                assert_eq!(q.to_host(&stream).unwrap(), quotients, "{}", gpu.name());
                assert_eq!(c.to_host(&stream).unwrap(), counts, "{}", gpu.name());
                assert_eq!(e.to_host(&stream).unwrap(), extra, "{}", gpu.name());
            }
        }
    };
}

int_test!(u8_methods, more_u8, u8, u8, |x, y| if y != 0 {
    x.div_ceil(y)
} else {
    0
});
int_test!(i8_methods, more_i8, i8, u8, |x, y| x.unsigned_abs());
int_test!(u16_methods, more_u16, u16, u16, |x, y| if y != 0 {
    x.div_ceil(y)
} else {
    0
});
int_test!(i32_methods, more_i32, i32, u32, |x, y| x.unsigned_abs());
int_test!(u32_methods, more_u32, u32, u32, |x, y| if y != 0 {
    x.div_ceil(y)
} else {
    0
});
int_test!(i64_methods, more_i64, i64, u64, |x, y| x.unsigned_abs());
int_test!(u64_methods, more_u64, u64, u64, |x, y| if y != 0 {
    x.div_ceil(y)
} else {
    0
});

/// The float methods, eight results per element.
#[kernel]
fn float_methods<T: Float>(a: &[T], b: &[T], out: &mut [T]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        let (s, c) = (x * y).sin_cos();
        let o = i * 8;
        out[o] = s;
        out[o + 1] = c;
        out[o + 2] = (x.abs() + 0.5).log(y.abs() + 1.5);
        out[o + 3] = x.rem_euclid(y);
        out[o + 4] = x.div_euclid(y);
        out[o + 5] = x.asinh();
        out[o + 6] = (x.abs() + 1.0).acosh();
        out[o + 7] = (x / (x.abs() + 1.0)).atanh();
    }
}

fn float_expected(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for (&x, &y) in a.iter().zip(b) {
        let (s, c) = (x * y).sin_cos();
        out.extend([
            s,
            c,
            (x.abs() + 0.5).log(y.abs() + 1.5),
            x.rem_euclid(y),
            x.div_euclid(y),
            x.asinh(),
            (x.abs() + 1.0).acosh(),
            (x / (x.abs() + 1.0)).atanh(),
        ]);
    }
    out
}

#[test]
fn float_methods_match_rust() {
    let a: Vec<f64> = (0..200).map(|i| (i as f64 - 100.0) * 0.37).collect();
    let b: Vec<f64> = (0..200)
        .map(|i| {
            if i % 2 == 0 {
                1.5 + i as f64 * 0.01
            } else {
                -2.25
            }
        })
        .collect();
    let expected = float_expected(&a, &b);
    let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let expected32: Vec<f32> = float_expected(
        &a32.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        &b32.iter().map(|&v| v as f64).collect::<Vec<_>>(),
    )
    .iter()
    .map(|&v| v as f32)
    .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let config = LaunchConfig::for_len(a.len(), 64);
        let (da, db) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut out = DeviceBuffer::<f64>::zeroed(&stream, a.len() * 8).unwrap();
        float_methods::launch::<f64>(&stream, config, &da, &db, &mut out).unwrap();
        let ours = out.to_host(&stream).unwrap();
        for (i, (x, e)) in ours.iter().zip(&expected).enumerate() {
            assert!(
                (x - e).abs() <= 1e-9 * (1.0 + e.abs()),
                "{}: element {i}: {x} against {e}",
                gpu.name()
            );
        }
        let (da, db) = (
            DeviceBuffer::from_host(&stream, &a32).unwrap(),
            DeviceBuffer::from_host(&stream, &b32).unwrap(),
        );
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, a.len() * 8).unwrap();
        float_methods::launch::<f32>(&stream, config, &da, &db, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected32, 1e-4);
    }
}

#[test]
fn more_methods_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&more_u8::KERNEL, &[]),
        (&more_i8::KERNEL, &[]),
        (&more_u16::KERNEL, &[]),
        (&more_i32::KERNEL, &[]),
        (&more_u32::KERNEL, &[]),
        (&more_i64::KERNEL, &[]),
        (&more_u64::KERNEL, &[]),
        (&float_methods::KERNEL, &[TemplateArg::of::<f32>()]),
        (&float_methods::KERNEL, &[TemplateArg::of::<f64>()]),
    ]);
}

/// A counter whose draws change it, as a random generator's do.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Turns {
    pub count: u32,
}

#[device]
impl Turns {
    /// The next angle: a quarter turn more than the last.
    pub fn next_angle(&mut self) -> f32 {
        self.count += 1;
        self.count as f32 * core::f32::consts::FRAC_PI_2
    }
}

/// `sin_cos` of a value drawn by a `&mut self` method: one draw, both parts of one angle.
#[kernel]
fn sin_cos_of_a_draw(start: &[u32], sines: &mut [f32], cosines: &mut [f32], ends: &mut [u32]) {
    let i = global_idx().x;
    if i < start.len() {
        let mut turns = Turns { count: start[i] };
        let (s, c) = (0.5 * turns.next_angle()).sin_cos();
        sines[i] = s;
        cosines[i] = c;
        ends[i] = turns.count;
    }
}

#[test]
fn sin_cos_of_a_method_with_effects_draws_once() {
    assert_compiles_with_nvrtc(&[(&sin_cos_of_a_draw::KERNEL, &[])]);
    // Drawn twice, the sine would be of one angle and the cosine of the next.
    let source = sin_cos_of_a_draw::SOURCE;
    let body = &source[source.find("void sin_cos_of_a_draw").unwrap_or(0)..];
    let draws = source.matches("Turns__next_angle(turns)").count();
    assert_eq!(draws, 1, "{body}");
    let start: Vec<u32> = (0..37).collect();
    let (mut sines, mut cosines, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    for &s in &start {
        let angle = 0.5 * ((s + 1) as f32 * core::f32::consts::FRAC_PI_2);
        sines.push(angle.sin());
        cosines.push(angle.cos());
        ends.push(s + 1);
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let st = DeviceBuffer::from_host(&stream, &start).unwrap();
        let mut s = DeviceBuffer::<f32>::zeroed(&stream, start.len()).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, start.len()).unwrap();
        let mut e = DeviceBuffer::<u32>::zeroed(&stream, start.len()).unwrap();
        let config = LaunchConfig::for_len(start.len(), 32);
        sin_cos_of_a_draw::launch(&stream, config, &st, &mut s, &mut c, &mut e).unwrap();
        close(&s.to_host(&stream).unwrap(), &sines, 1e-4);
        close(&c.to_host(&stream).unwrap(), &cosines, 1e-4);
        assert_eq!(e.to_host(&stream).unwrap(), ends, "{}", gpu.name());
    }
}
