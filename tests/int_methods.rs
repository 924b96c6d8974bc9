//! Rust's integer methods in kernels (`rem_euclid`, `abs_diff`, rotations, bit and byte
//! reversal, wrapping shifts and negation, `signum`, powers of two) and `cmp::min`/`max`, at
//! every width, against the same methods on the host, edge values included; and `match` arms
//! of ranges with an open end (`0..`, `..=-2`).

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;

/// Writes `$ops` applied to each pair `(a[i], b[i])` (unsigned and signed receivers differ in
/// the methods they have) into `out`, one kernel per type.
macro_rules! int_kernels {
    ($($name:ident: $t:ty, $u:ty, [$($extra:tt)*];)*) => {$(
        #[kernel]
        fn $name(a: &[$t], b: &[$t], shift: &[u32], out: &mut [$t], diffs: &mut [$u]) {
            let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
            if i < a.len() {
                let (x, y, n) = (a[i], b[i], shift[i]);
                let o = i * 10;
                out[o] = if y != 0 { x.rem_euclid(y) } else { 0 };
                out[o + 1] = x.rotate_left(n);
                out[o + 2] = x.rotate_right(n);
                out[o + 3] = x.wrapping_shl(n);
                out[o + 4] = x.wrapping_shr(n);
                out[o + 5] = x.wrapping_neg();
                out[o + 6] = x.reverse_bits();
                out[o + 7] = x.swap_bytes();
                out[o + 8] = core::cmp::min(x, y).wrapping_add(std::cmp::max(x, y));
                out[o + 9] = $($extra)*;
                diffs[i] = x.abs_diff(y);
            }
        }
    )*};
}

int_kernels! {
    ops_u8: u8, u8, [if x.is_power_of_two() { x.next_power_of_two() } else { x.next_power_of_two().wrapping_add(1) }];
    ops_i16: i16, u16, [x.signum()];
    ops_u32: u32, u32, [x.next_power_of_two() ^ (x.is_power_of_two() as u32)];
    ops_i32: i32, u32, [x.signum()];
    ops_u64: u64, u64, [x.next_power_of_two()];
    ops_i64: i64, u64, [x.signum()];
}

/// The host's version of each kernel, from the same expressions.
macro_rules! int_expected {
    ($t:ty, $a:expr, $b:expr, $shift:expr, |$x:ident, $y:ident| $extra:expr) => {{
        let mut out = Vec::new();
        let mut diffs = Vec::new();
        for ((&$x, &$y), &n) in $a.iter().zip($b.iter()).zip($shift.iter()) {
            out.extend([
                if $y != 0 {
                    $x.wrapping_rem_euclid($y)
                } else {
                    0
                },
                $x.rotate_left(n),
                $x.rotate_right(n),
                $x.wrapping_shl(n),
                $x.wrapping_shr(n),
                $x.wrapping_neg(),
                $x.reverse_bits(),
                $x.swap_bytes(),
                $x.min($y).wrapping_add($x.max($y)),
                $extra,
            ]);
            diffs.push($x.abs_diff($y));
        }
        (out, diffs)
    }};
}

/// Edge values and a spread of others, as `u64` bits each type truncates.
fn samples(n: usize, seed: u64) -> Vec<u64> {
    let edges: [u64; 14] = [
        0,
        1,
        2,
        3,
        7,
        8,
        127,
        128,
        255,
        256,
        0x7fff,
        0x8000,
        0xffff,
        0x7fff_ffff,
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
                _ => state,
            }
        })
        .collect()
}

macro_rules! int_test {
    ($test:ident, $kernel:ident, $t:ty, $u:ty, |$x:ident, $y:ident| $extra:expr) => {
        #[test]
        fn $test() {
            let n = 300;
            let a: Vec<$t> = samples(n, 3).into_iter().map(|v| v as $t).collect();
            let b: Vec<$t> = samples(n, 5).into_iter().rev().map(|v| v as $t).collect();
            let shift: Vec<u32> = samples(n, 7)
                .into_iter()
                .map(|v| (v % 200) as u32)
                .collect();
            let (expected, expected_diffs) = int_expected!($t, a, b, shift, |$x, $y| $extra);
            for gpu in backends() {
                let stream = gpu.default_stream();
                let da = DeviceBuffer::from_host(&stream, &a).unwrap();
                let db = DeviceBuffer::from_host(&stream, &b).unwrap();
                let ds = DeviceBuffer::from_host(&stream, &shift).unwrap();
                let mut out = DeviceBuffer::<$t>::zeroed(&stream, n * 10).unwrap();
                let mut diffs = DeviceBuffer::<$u>::zeroed(&stream, n).unwrap();
                let config = LaunchConfig::for_len(n, 64);
                $kernel::launch(&stream, config, &da, &db, &ds, &mut out, &mut diffs).unwrap();
                assert_eq!(out.to_host(&stream).unwrap(), expected);
                assert_eq!(diffs.to_host(&stream).unwrap(), expected_diffs);
            }
        }
    };
}

int_test!(u8_methods, ops_u8, u8, u8, |x, y| if x.is_power_of_two() {
    x.checked_next_power_of_two().unwrap_or(0)
} else {
    x.checked_next_power_of_two().unwrap_or(0).wrapping_add(1)
});
int_test!(i16_methods, ops_i16, i16, u16, |x, y| x.signum());
int_test!(u32_methods, ops_u32, u32, u32, |x, y| x
    .checked_next_power_of_two()
    .unwrap_or(0)
    ^ (x.is_power_of_two() as u32));
int_test!(i32_methods, ops_i32, i32, u32, |x, y| x.signum());
int_test!(u64_methods, ops_u64, u64, u64, |x, y| x
    .checked_next_power_of_two()
    .unwrap_or(0));
int_test!(i64_methods, ops_i64, i64, u64, |x, y| x.signum());

/// Classifies each neighbour index as Rodinia's CFD does (a cell, a wall, the far field),
/// with ranges open at one end, and each `u32` by a range open at the top.
#[kernel]
fn open_ranges(nb: &[i32], u: &[u32], out: &mut [i32]) {
    let i = global_idx().x;
    if i < nb.len() {
        let kind = match nb[i] {
            0.. => 1,
            -1 => 2,
            ..=-2 => 3,
        };
        let size = match u[i] {
            ..10 => 10,
            10..1000 => 20,
            1000.. => 30,
        };
        out[i] = kind + size;
    }
}

#[test]
fn match_arms_of_ranges_open_at_one_end() {
    let nb: Vec<i32> = (0..400).map(|i| (i % 50) * 3 - 70).collect();
    let u: Vec<u32> = (0..400u32).map(|i| (i * 97 % 400).pow(2) / 20).collect();
    let expected: Vec<i32> = nb
        .iter()
        .zip(&u)
        .map(|(&n, &v)| {
            let kind = if n >= 0 {
                1
            } else if n == -1 {
                2
            } else {
                3
            };
            let size = if v < 10 {
                10
            } else if v < 1000 {
                20
            } else {
                30
            };
            kind + size
        })
        .collect();
    // Every arm of both matches is taken.
    for arm in 1..=3 {
        assert!(
            expected.iter().any(|v| v % 10 == arm),
            "no neighbour kind {arm}"
        );
        assert!(expected.iter().any(|v| v / 10 == arm), "no size {arm}");
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dnb = DeviceBuffer::from_host(&stream, &nb).unwrap();
        let du = DeviceBuffer::from_host(&stream, &u).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, nb.len()).unwrap();
        let config = LaunchConfig::for_len(nb.len(), 64);
        open_ranges::launch(&stream, config, &dnb, &du, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&open_ranges::KERNEL, &[]),
        (&ops_u8::KERNEL, &[]),
        (&ops_i16::KERNEL, &[]),
        (&ops_u32::KERNEL, &[]),
        (&ops_i32::KERNEL, &[]),
        (&ops_u64::KERNEL, &[]),
        (&ops_i64::KERNEL, &[]),
    ]);
}
