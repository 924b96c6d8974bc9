//! Idioms of ports from CUDA samples written the way Rust writes them: a `#[device]` vector
//! type with its own `len` method beside slices' `len()`, `(a..b).contains(&x)` bounds tests
//! (clippy's advice for `a <= x && x < b`) and `matches!`, loops over array literals and
//! tuples (`for (dr, dc) in [(0, 1), (1, 0)]`), reversed element loops, `match` values
//! assigned, destructuring `let`s of arrays and structs, `const fn` device helpers, more of
//! `f32::consts` and the sign tests of floats, tuple assignments (`(a, b) = (b, a + b)`) and
//! lint attributes on loops, `fill` and `copy_from_slice`, and a slice's `get`, `first` and
//! `last` unwrapped (`x.get(i + 1).copied().unwrap_or(0.0)`), and arrays built by
//! `core::array::from_fn`, on every backend at hand, against the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// A 3-vector, as n-body and ray-tracing ports define it.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    /// The Euclidean length.
    pub fn len(&self) -> f32 {
        (self.x * self.x + self.y * self.y + self.z * self.z).sqrt()
    }

    /// This vector scaled to length 1 (or left as it is when it has none).
    pub fn normalized(self) -> Vec3 {
        let l = self.len();
        if l > 0.0 {
            Vec3 {
                x: self.x / l,
                y: self.y / l,
                z: self.z / l,
            }
        } else {
            self
        }
    }
}

/// Each point's length, the length of its normalized copy, and the slice's own length.
#[kernel]
fn lengths(points: &[Vec3], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < points.len() {
        let p = points[i];
        out[i] = p.len() + 10.0 * p.normalized().len() + points[i].len() * out.len() as f32;
    }
}

/// `n` points, the first at the origin (which has no direction).
fn points(n: usize) -> Vec<Vec3> {
    let v = random_f32(3 * n, 5);
    (0..n)
        .map(|i| {
            let k = if i == 0 { 0.0 } else { 1.0 };
            Vec3 {
                x: k * v[3 * i],
                y: k * v[3 * i + 1],
                z: k * v[3 * i + 2],
            }
        })
        .collect()
}

#[test]
fn a_type_with_a_len_method_matches_rust() {
    let n = 200;
    let pts = points(n);
    let expected: Vec<f32> = pts
        .iter()
        .map(|p| p.len() + 10.0 * p.normalized().len() + p.len() * n as f32)
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &pts).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        lengths::launch(&stream, LaunchConfig::for_len(n, 64), &dp, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

/// What a stencil does at a cell, as a kernel parameter.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u32)]
pub enum Edge {
    Clamp = 0,
    Wrap = 1,
    Zero = 2,
}

/// A 5-point stencil on a `w`-wide grid whose neighbours are tested with `contains`, and
/// classes of values by `matches!`.
#[kernel]
fn bounded_stencil(edge: Edge, w: i32, h: i32, x: &[i32], out: &mut [i32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if !(0..x.len()).contains(&i) {
        return;
    }
    let (r, c) = (i as i32 / w, i as i32 % w);
    let mut s = 0i32;
    for (dr, dc) in [(0i32, 0i32), (-1, 0), (1, 0), (0, -1), (0, 1)] {
        let (nr, nc) = (r + dr, c + dc);
        if (0..h).contains(&nr) && (0..w).contains(&nc) {
            s += x[(nr * w + nc) as usize];
        } else if matches!(edge, Edge::Clamp | Edge::Wrap) {
            s += x[i] / 2;
        }
    }
    let v = x[i];
    let class = matches!(v, 0 | 7..=9) as i32
        + 2 * matches!(v, -5..=-1 if v % 2 == 0) as i32
        + 4 * (..-50).contains(&v) as i32
        + 8 * (50..=60).contains(&v) as i32
        + 16 * (70..).contains(&v) as i32;
    out[i] = s * 32 + class;
}

fn bounded_stencil_host(edge: Edge, w: i32, h: i32, x: &[i32], i: usize) -> i32 {
    let (r, c) = (i as i32 / w, i as i32 % w);
    let mut s = 0i32;
    for (dr, dc) in [(0i32, 0i32), (-1, 0), (1, 0), (0, -1), (0, 1)] {
        let (nr, nc) = (r + dr, c + dc);
        if (0..h).contains(&nr) && (0..w).contains(&nc) {
            s += x[(nr * w + nc) as usize];
        } else if matches!(edge, Edge::Clamp | Edge::Wrap) {
            s += x[i] / 2;
        }
    }
    let v = x[i];
    let class = matches!(v, 0 | 7..=9) as i32
        + 2 * matches!(v, -5..=-1 if v % 2 == 0) as i32
        + 4 * (..-50).contains(&v) as i32
        + 8 * (50..=60).contains(&v) as i32
        + 16 * (70..).contains(&v) as i32;
    s * 32 + class
}

#[test]
fn range_contains_and_matches_match_rust() {
    let (w, h) = (13, 11);
    let n = (w * h) as usize;
    let x: Vec<i32> = random_f32(n, 3)
        .iter()
        .map(|v| (v * 100.0) as i32)
        .collect();
    for edge in [Edge::Clamp, Edge::Wrap, Edge::Zero] {
        let expected: Vec<i32> = (0..n)
            .map(|i| bounded_stencil_host(edge, w, h, &x, i))
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::<i32>::zeroed(&stream, n).unwrap();
            // More threads than cells: the `contains` guard stops the rest.
            let config = LaunchConfig::for_len(n + 40, 64);
            bounded_stencil::launch(&stream, config, edge, w, h, &dx, &mut out).unwrap();
            assert_eq!(
                out.to_host(&stream).unwrap(),
                expected,
                "{edge:?} {}",
                gpu.name()
            );
        }
    }
}

/// Loops over array literals and arrays of tuples, walked forward and back, and `match`
/// values assigned.
#[kernel]
fn loop_forms(x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let n = x.len();
    let mut s = 0.0f32;
    for (k, w) in [0.25f32, 0.5, 0.25].iter().enumerate() {
        s += w * x[(i + k) % n];
    }
    let taps = [(1usize, 0.5f32), (2, -0.25), (5, 0.125)];
    for &(offset, w) in taps.iter() {
        s += w * x[(i + offset) % n];
    }
    for (k, (offset, w)) in taps.iter().enumerate() {
        s += w * k as f32 * x[(i + offset * 3) % n];
    }
    let window = &x[i % (n - 4)..i % (n - 4) + 4];
    for (k, &v) in window.iter().enumerate().rev() {
        s = s * 0.75 + v * k as f32;
    }
    for v in window.iter().rev() {
        s = s * 0.5 - *v;
    }
    out[i] = match i % 3 {
        0 => s,
        1 => -s,
        _ => s * 2.0,
    };
    out[i] += match i % 2 {
        0 => 1.0,
        _ => 0.5,
    };
}

fn loop_forms_host(x: &[f32], i: usize) -> f32 {
    let n = x.len();
    let mut s = 0.0f32;
    for (k, w) in [0.25f32, 0.5, 0.25].iter().enumerate() {
        s += w * x[(i + k) % n];
    }
    let taps = [(1usize, 0.5f32), (2, -0.25), (5, 0.125)];
    for &(offset, w) in taps.iter() {
        s += w * x[(i + offset) % n];
    }
    for (k, (offset, w)) in taps.iter().enumerate() {
        s += w * k as f32 * x[(i + offset * 3) % n];
    }
    let window = &x[i % (n - 4)..i % (n - 4) + 4];
    for (k, &v) in window.iter().enumerate().rev() {
        s = s * 0.75 + v * k as f32;
    }
    for v in window.iter().rev() {
        s = s * 0.5 - *v;
    }
    let mut out = match i % 3 {
        0 => s,
        1 => -s,
        _ => s * 2.0,
    };
    out += match i % 2 {
        0 => 1.0,
        _ => 0.5,
    };
    out
}

#[test]
fn loops_over_literals_and_tuples_match_rust() {
    let n = 150;
    let x = random_f32(n, 11);
    let expected: Vec<f32> = (0..n).map(|i| loop_forms_host(&x, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        loop_forms::launch(&stream, LaunchConfig::for_len(n, 64), &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

/// A range as a tuple struct.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Span(pub f32, pub f32);

/// The cross product of two 3-vectors given as arrays.
#[device]
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Arrays, structs and tuple structs taken apart by `let`.
#[kernel]
fn destructure(points: &[Vec3], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i + 1 >= points.len() {
        return;
    }
    let Vec3 { x, y, z: depth } = points[i];
    let Vec3 { x: nx, .. } = points[i + 1];
    let [cx, mut cy, _] = cross([x, y, depth], [nx, 1.0, 0.5]);
    cy *= 2.0;
    let Span(lo, hi) = if cx < cy { Span(cx, cy) } else { Span(cy, cx) };
    out[i] = lo * 3.0 + hi + depth;
}

fn destructure_host(points: &[Vec3], i: usize) -> f32 {
    let Vec3 { x, y, z: depth } = points[i];
    let Vec3 { x: nx, .. } = points[i + 1];
    let [cx, mut cy, _] = cross_host([x, y, depth], [nx, 1.0, 0.5]);
    cy *= 2.0;
    let Span(lo, hi) = if cx < cy { Span(cx, cy) } else { Span(cy, cx) };
    lo * 3.0 + hi + depth
}

fn cross_host(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[test]
fn destructuring_lets_match_rust() {
    let n = 120;
    let pts = points(n);
    let mut expected: Vec<f32> = (0..n - 1).map(|i| destructure_host(&pts, i)).collect();
    expected.push(0.0);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &pts).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        destructure::launch(&stream, LaunchConfig::for_len(n, 64), &dp, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

/// Blocks of `b` covering `n`, as a `const fn` helper.
#[device]
const fn div_up(n: u32, b: u32) -> u32 {
    (n + b - 1) / b
}

/// The cumulative normal distribution by the Abramowitz-Stegun polynomial, as the
/// Black-Scholes sample computes it, with the sign tests and constants it reaches for.
#[kernel]
fn normal_cdf(x: &[f32], out: &mut [f32], blocks: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let d = x[i];
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k
        * (0.319_381_53
            + k * (-0.356_563_78 + k * (1.781_477_9 + k * (-1.821_256 + k * 1.330_274_4))));
    let pdf =
        (-0.5 * d * d).exp() * core::f32::consts::FRAC_2_SQRT_PI * 0.5 * f32::consts::FRAC_1_SQRT_2;
    let tail = pdf * poly;
    let cdf = if d.is_sign_negative() {
        tail
    } else {
        1.0 - tail
    };
    let turn = std::f32::consts::FRAC_PI_4 * f32::consts::FRAC_1_PI + f32::consts::LOG10_2;
    out[i] = cdf + turn * d.is_sign_positive() as u32 as f32;
    blocks[i] = div_up(i as u32 * 37, 16);
}

fn normal_cdf_host(d: f32) -> f32 {
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k
        * (0.319_381_53
            + k * (-0.356_563_78 + k * (1.781_477_9 + k * (-1.821_256 + k * 1.330_274_4))));
    let pdf = (-0.5 * d * d).exp()
        * std::f32::consts::FRAC_2_SQRT_PI
        * 0.5
        * std::f32::consts::FRAC_1_SQRT_2;
    let tail = pdf * poly;
    let cdf = if d.is_sign_negative() {
        tail
    } else {
        1.0 - tail
    };
    let turn =
        std::f32::consts::FRAC_PI_4 * std::f32::consts::FRAC_1_PI + std::f32::consts::LOG10_2;
    cdf + turn * d.is_sign_positive() as u32 as f32
}

#[test]
fn normal_cdf_matches_rust() {
    let mut x: Vec<f32> = random_f32(200, 21).iter().map(|v| v * 4.0).collect();
    // The signs of zero and of NaN are bits the tests read.
    x.extend([0.0, -0.0, f32::NAN, -f32::NAN]);
    let n = x.len();
    let expected: Vec<f32> = x.iter().map(|&d| normal_cdf_host(d)).collect();
    let blocks_expected: Vec<u32> = (0..n as u32).map(|i| (i * 37).div_ceil(16)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut blocks = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        normal_cdf::launch(&stream, config, &dx, &mut out, &mut blocks).unwrap();
        let got = out.to_host(&stream).unwrap();
        close(&got[..n - 2], &expected[..n - 2], 1e-5);
        assert!(got[n - 2].is_nan() && got[n - 1].is_nan(), "{}", gpu.name());
        assert_eq!(blocks.to_host(&stream).unwrap(), blocks_expected);
    }
}

/// Fibonacci pairs by tuple assignment, a swap the same way, and a loop under a lint
/// attribute.
#[kernel]
fn pairs(x: &[u32], out: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let (mut a, mut b) = (0u32, 1u32);
    for _ in 0..x[i] % 50 {
        (a, b) = (b, a.wrapping_add(b));
    }
    let [mut lo, mut hi]: [u32; 2] = [x[i] % 7, x[i] % 5];
    if lo > hi {
        (lo, hi) = (hi, lo);
    }
    let mut window = [0u32; 4];
    #[allow(clippy::needless_range_loop)]
    for k in 0..4 {
        window[k] = x[(i + k) % x.len()];
    }
    let (_, last) = (a, window[3]);
    out[i] = a ^ b.rotate_left(3) ^ (lo * 10 + hi) ^ window[0].wrapping_mul(last);
}

fn pairs_host(x: &[u32], i: usize) -> u32 {
    let (mut a, mut b) = (0u32, 1u32);
    for _ in 0..x[i] % 50 {
        (a, b) = (b, a.wrapping_add(b));
    }
    let [mut lo, mut hi]: [u32; 2] = [x[i] % 7, x[i] % 5];
    if lo > hi {
        (lo, hi) = (hi, lo);
    }
    let mut window = [0u32; 4];
    #[allow(clippy::needless_range_loop)]
    for k in 0..4 {
        window[k] = x[(i + k) % x.len()];
    }
    let (_, last) = (a, window[3]);
    a ^ b.rotate_left(3) ^ (lo * 10 + hi) ^ window[0].wrapping_mul(last)
}

#[test]
fn tuple_assignments_match_rust() {
    let n = 90;
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let expected: Vec<u32> = (0..n).map(|i| pairs_host(&x, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        pairs::launch(&stream, LaunchConfig::for_len(n, 64), &dx, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// Rows of 8 filled and copied into: a local array filled, a part of the input copied into
/// another, the output row filled, then parts of it copied over (`short` copies 3 elements
/// into 4, which panics as Rust does).
#[kernel]
fn fills(x: &[f32], short: bool, out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if (i + 1) * 8 > out.len() || i + 4 > x.len() {
        return;
    }
    let mut acc = [1.0f32; 4];
    acc.fill(x[i] * 2.0);
    let mut copy = [0.0f32; 4];
    if short {
        copy.copy_from_slice(&x[i..i + 3]);
    } else {
        copy.copy_from_slice(&x[i..i + 4]);
    }
    let row = &mut out[i * 8..(i + 1) * 8];
    row.fill(-1.0);
    row[1..5].copy_from_slice(&acc);
    out[i * 8 + 5..i * 8 + 7].fill(copy[3]);
    out[i * 8 + 7] += copy.iter().sum::<f32>();
}

fn fills_host(x: &[f32], out: &mut [f32], i: usize) {
    let mut acc = [1.0f32; 4];
    acc.fill(x[i] * 2.0);
    let mut copy = [0.0f32; 4];
    copy.copy_from_slice(&x[i..i + 4]);
    let row = &mut out[i * 8..(i + 1) * 8];
    row.fill(-1.0);
    row[1..5].copy_from_slice(&acc);
    out[i * 8 + 5..i * 8 + 7].fill(copy[3]);
    out[i * 8 + 7] += copy.iter().sum::<f32>();
}

#[test]
fn fill_and_copy_from_slice_match_rust() {
    let rows = 40;
    let x = random_f32(rows + 3, 8);
    let mut expected = vec![0.0f32; rows * 8];
    for i in 0..rows {
        fills_host(&x, &mut expected, i);
    }
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, rows * 8).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        fills::launch(&stream, config, &dx, false, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
        fills::launch(&stream, config, &dx, true, &mut out).unwrap();
        let err = stream.synchronize().expect_err("3 elements do not fill 4");
        let message = common::panic_message(&err);
        assert_eq!(
            message,
            "source slice length (3) does not match destination slice length (4)"
        );
    }
}

/// A 1-D stencil whose neighbours past either end read as 0 through `get`, with the ends
/// of the row read by `first` and `last`; `probe` reads one element by `get(..).unwrap()`.
#[kernel]
fn edges(x: &[f32], probe: usize, out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let left = x.get(i.wrapping_sub(1)).copied().unwrap_or(0.0);
    let right = *x.get(i + 1).unwrap_or(&0.0);
    let far = x.get(i * 2 % (x.len() + 3)).cloned().unwrap_or(-1.0);
    let ends = x.first().copied().unwrap_or(0.0) - *x.last().unwrap();
    out[i] = 0.25 * left + 0.5 * x[i] + 0.25 * right + far * 0.125 + ends;
    if i == 0 {
        out[0] += *x.get(probe).unwrap();
    }
}

/// Neighbours read by `if let Some(..) = x.get(..)`, as a statement, an `else if`, a value.
#[kernel]
fn if_let_edges(x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let mut s = x[i];
    if let Some(&left) = x.get(i.wrapping_sub(1)) {
        s += left * 0.5;
    }
    if i.is_multiple_of(2) {
        s -= 1.0;
    } else if let Some(right) = x.get(i + 1) {
        s += *right * 0.25;
    } else {
        s += 100.0;
    }
    let far = if let Some(v) = x.get(i * 3).copied() {
        v * 2.0
    } else {
        -1.0
    };
    out[i] = s + far;
}

fn if_let_edges_host(x: &[f32], i: usize) -> f32 {
    let mut s = x[i];
    if let Some(&left) = x.get(i.wrapping_sub(1)) {
        s += left * 0.5;
    }
    if i.is_multiple_of(2) {
        s -= 1.0;
    } else if let Some(right) = x.get(i + 1) {
        s += *right * 0.25;
    } else {
        s += 100.0;
    }
    let far = if let Some(v) = x.get(i * 3).copied() {
        v * 2.0
    } else {
        -1.0
    };
    s + far
}

#[test]
fn if_let_some_get_matches_rust() {
    let n = 41;
    let x = random_f32(n, 41);
    let expected: Vec<f32> = (0..n).map(|i| if_let_edges_host(&x, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        if_let_edges::launch(&stream, LaunchConfig::for_len(n, 32), &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

fn edges_host(x: &[f32], i: usize) -> f32 {
    let left = x.get(i.wrapping_sub(1)).copied().unwrap_or(0.0);
    let right = *x.get(i + 1).unwrap_or(&0.0);
    let far = x.get(i * 2 % (x.len() + 3)).cloned().unwrap_or(-1.0);
    let ends = x.first().copied().unwrap_or(0.0) - *x.last().unwrap();
    0.25 * left + 0.5 * x[i] + 0.25 * right + far * 0.125 + ends
}

#[test]
fn slice_get_first_last_match_rust() {
    let n = 70;
    let x = random_f32(n, 17);
    let mut expected: Vec<f32> = (0..n).map(|i| edges_host(&x, i)).collect();
    expected[0] += x[5];
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 32);
        edges::launch(&stream, config, &dx, 5, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
        // Past the end, `unwrap` panics as Rust's does.
        edges::launch(&stream, config, &dx, n, &mut out).unwrap();
        let err = stream.synchronize().expect_err("element n is missing");
        let message = common::panic_message(&err);
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

/// A 5-tap Gaussian whose weights `array::from_fn` computes, normalised, then applied.
#[kernel]
fn gauss5(x: &[f32], sigma: f32, out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let w: [f32; 5] = core::array::from_fn(|k| {
        let d = k as f32 - 2.0;
        (-d * d / (2.0 * sigma * sigma)).exp()
    });
    let total: f32 = w.iter().sum();
    let taps: [usize; 5] = std::array::from_fn(|k| (i + x.len() + k - 2) % x.len());
    let mut s = 0.0f32;
    for (wk, &t) in w.iter().zip(taps.iter()) {
        s += wk / total * x[t];
    }
    out[i] = s;
}

fn gauss5_host(x: &[f32], sigma: f32, i: usize) -> f32 {
    let w: [f32; 5] = core::array::from_fn(|k| {
        let d = k as f32 - 2.0;
        (-d * d / (2.0 * sigma * sigma)).exp()
    });
    let total: f32 = w.iter().sum();
    let taps: [usize; 5] = std::array::from_fn(|k| (i + x.len() + k - 2) % x.len());
    let mut s = 0.0f32;
    for (wk, &t) in w.iter().zip(taps.iter()) {
        s += wk / total * x[t];
    }
    s
}

#[test]
fn arrays_from_fn_match_rust() {
    let n = 64;
    let x = random_f32(n, 64);
    let expected: Vec<f32> = (0..n).map(|i| gauss5_host(&x, 1.3, i)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        gauss5::launch(&stream, LaunchConfig::for_len(n, 32), &dx, 1.3, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn port_idioms_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&lengths::KERNEL, &[]),
        (&bounded_stencil::KERNEL, &[]),
        (&loop_forms::KERNEL, &[]),
        (&destructure::KERNEL, &[]),
        (&normal_cdf::KERNEL, &[]),
        (&pairs::KERNEL, &[]),
        (&fills::KERNEL, &[]),
        (&edges::KERNEL, &[]),
        (&gauss5::KERNEL, &[]),
        (&if_let_edges::KERNEL, &[]),
    ]);
}
