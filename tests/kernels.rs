//! Kernels written with `#[kernel]`, launched on the GPU and compared with the same computation
//! on the CPU. Without a device each test prints `skipped: no CUDA device` and returns.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, Kernel, TemplateArg};

fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    random_f32(n, seed)
        .into_iter()
        .map(|v| (v * i32::MAX as f32) as i32)
        .collect()
}

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn saxpy_matches_cpu_at_odd_sizes() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in [1usize, 17, 255, 256, 257, 100_003] {
        let x_host = random_f32(n, 1);
        let y_host = random_f32(n, 2);
        let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
        let mut y = DeviceBuffer::from_host(&stream, &y_host).unwrap();
        saxpy::launch(&stream, LaunchConfig::for_len(n, 256), 1.5, &x, &mut y).unwrap();
        let got = y.to_host(&stream).unwrap();
        for i in 0..n {
            let expected = 1.5 * x_host[i] + y_host[i];
            assert!(
                (got[i] - expected).abs() <= 1e-6 * expected.abs().max(1.0),
                "n={n} i={i}: {} vs {expected}",
                got[i]
            );
        }
    }
}

#[kernel]
fn grid_stride_scale(a: f64, x: &mut [f64]) {
    for i in (global_idx().x..x.len()).step_by(grid_size().x) {
        x[i] *= a;
    }
}

#[test]
fn grid_stride_loop_covers_every_element_with_a_small_grid() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1_000_001;
    let host: Vec<f64> = random_f32(n, 3).into_iter().map(f64::from).collect();
    let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
    // 3 blocks of 64 threads: each thread visits thousands of elements.
    let config = LaunchConfig::new(Grid::x(3), Block::x(64));
    grid_stride_scale::launch(&stream, config, -2.0, &mut x).unwrap();
    let got = x.to_host(&stream).unwrap();
    for (i, (g, h)) in got.iter().zip(&host).enumerate() {
        assert_eq!(*g, -2.0 * h, "element {i}");
    }
}

#[kernel]
fn row_stats(m: &[f32], cols: usize, sums: &mut [f32], maxima: &mut [f32], firsts: &mut [i64]) {
    let row = global_idx().x;
    if row >= sums.len() {
        return;
    }
    let mut sum = 0.0;
    let mut best = f32::NEG_INFINITY;
    let mut first = -1i64;
    let mut c = 0;
    while c < cols {
        let v = m[row * cols + c];
        sum += v;
        best = best.max(v);
        if v > 0.5 && first < 0 {
            first = c as i64;
        }
        c += 1;
    }
    // Shadowing: a new `sum` from the old one.
    let sum = sum / cols as f32;
    sums[row] = sum;
    maxima[row] = best;
    firsts[row] = first;
}

#[test]
fn loops_shadowing_and_early_return() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (rows, cols) = (1000, 37);
    let m_host = random_f32(rows * cols, 4);
    let m = DeviceBuffer::from_host(&stream, &m_host).unwrap();
    let mut sums = DeviceBuffer::zeroed(&stream, rows).unwrap();
    let mut maxima = DeviceBuffer::zeroed(&stream, rows).unwrap();
    let mut firsts = DeviceBuffer::zeroed(&stream, rows).unwrap();
    // More threads than rows: the extra ones return early.
    let config = LaunchConfig::for_len(rows + 100, 128);
    row_stats::launch(
        &stream,
        config,
        &m,
        cols,
        &mut sums,
        &mut maxima,
        &mut firsts,
    )
    .unwrap();
    let (sums, maxima, firsts) = (
        sums.to_host(&stream).unwrap(),
        maxima.to_host(&stream).unwrap(),
        firsts.to_host(&stream).unwrap(),
    );
    for r in 0..rows {
        let row = &m_host[r * cols..(r + 1) * cols];
        let mut sum = 0.0f32;
        for v in row {
            sum += v;
        }
        let sum = sum / cols as f32;
        let best = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let first = row.iter().position(|v| *v > 0.5).map_or(-1, |c| c as i64);
        assert!(
            (sums[r] - sum).abs() < 1e-5,
            "row {r}: {} vs {sum}",
            sums[r]
        );
        assert_eq!(maxima[r], best, "row {r}");
        assert_eq!(firsts[r], first, "row {r}");
    }
}

#[kernel]
fn integer_semantics(a: &[i32], b: &[i32], out: &mut [i32], shifts: &mut [u32], wide: &mut [i64]) {
    let i = global_idx().x;
    if i < a.len() {
        // Wrapping, as release Rust.
        out[i] = a[i] * 3 + b[i] - a[i].abs() + (-b[i]);
        shifts[i] = (a[i] as u32) << (b[i] as u32) ^ (b[i] as u32 >> 33);
        wide[i] = (a[i] as i64) * (b[i] as i64) % 1_000_003 + a[i].pow(3) as i64;
    }
}

#[test]
fn integer_arithmetic_wraps_like_rust() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 4096;
    let mut a_host = random_i32(n, 5);
    let b_host = random_i32(n, 6);
    a_host[0] = i32::MIN;
    a_host[1] = i32::MAX;
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut shifts = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut wide = DeviceBuffer::zeroed(&stream, n).unwrap();
    integer_semantics::launch(
        &stream,
        LaunchConfig::for_len(n, 256),
        &a,
        &b,
        &mut out,
        &mut shifts,
        &mut wide,
    )
    .unwrap();
    let (out, shifts, wide) = (
        out.to_host(&stream).unwrap(),
        shifts.to_host(&stream).unwrap(),
        wide.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let (x, y) = (a_host[i], b_host[i]);
        let expected = x
            .wrapping_mul(3)
            .wrapping_add(y)
            .wrapping_sub(x.wrapping_abs())
            .wrapping_add(y.wrapping_neg());
        assert_eq!(out[i], expected, "i={i} a={x} b={y}");
        let expected_shift = (x as u32).wrapping_shl(y as u32) ^ (y as u32).wrapping_shr(33);
        assert_eq!(shifts[i], expected_shift, "i={i}");
        let expected_wide =
            (x as i64 * y as i64 % 1_000_003).wrapping_add(x.wrapping_pow(3) as i64);
        assert_eq!(wide[i], expected_wide, "i={i}");
    }
}

#[kernel]
fn casts(x: &[f32], to_i32: &mut [i32], to_u32: &mut [u32], to_u64: &mut [u64], back: &mut [f64]) {
    let i = global_idx().x;
    if i < x.len() {
        to_i32[i] = x[i] as i32;
        to_u32[i] = x[i] as u32;
        to_u64[i] = (x[i] as f64 * 1e10) as u64;
        back[i] = (x[i] as i64) as f64 + (x[i] > 0.0) as i32 as f64;
    }
}

/// Casts of floats that cannot be NaN (clamped by `max`/`min`, which drop a NaN operand),
/// converted without the NaN test, and a float clamped to an index by `min`.
#[kernel]
fn clamped_casts(
    x: &[f32],
    n: usize,
    to_i32: &mut [i32],
    to_u32: &mut [u32],
    to_index: &mut [u32],
) {
    let i = global_idx().x;
    if i < x.len() {
        let low = x[i].max(-5.0e9);
        let both = x[i].min(7.0e9).max(0.25);
        to_i32[i] = low as i32;
        to_u32[i] = (both as u32).wrapping_add(x[i].max(1.0) as u32 / 2);
        let at = (both as usize).min(n - 1);
        to_index[i] = (at as u32).wrapping_add((x[i] as usize).min(n - 1) as u32);
    }
}

#[test]
// `clamp` keeps a NaN, where the kernel's `min` and `max` drop it.
#[allow(clippy::manual_clamp)]
fn clamped_float_casts_saturate_like_rust() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut host = random_f32(500, 11)
        .into_iter()
        .map(|v| v * 1e10)
        .collect::<Vec<_>>();
    host.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e9,
        -3.0e9,
        0.9,
        77.5,
    ]);
    let count = host.len();
    for n in [1usize, 100, 5_000_000_000] {
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let mut to_i32 = DeviceBuffer::zeroed(&stream, count).unwrap();
        let mut to_u32 = DeviceBuffer::zeroed(&stream, count).unwrap();
        let mut to_index = DeviceBuffer::zeroed(&stream, count).unwrap();
        clamped_casts::launch(
            &stream,
            LaunchConfig::for_len(count, 128),
            &x,
            n,
            &mut to_i32,
            &mut to_u32,
            &mut to_index,
        )
        .unwrap();
        let (a, b, c) = (
            to_i32.to_host(&stream).unwrap(),
            to_u32.to_host(&stream).unwrap(),
            to_index.to_host(&stream).unwrap(),
        );
        for i in 0..count {
            let v = host[i];
            let both = v.min(7.0e9).max(0.25);
            assert_eq!(a[i], v.max(-5.0e9) as i32, "{v} (n {n})");
            assert_eq!(
                b[i],
                (both as u32).wrapping_add(v.max(1.0) as u32 / 2),
                "{v} (n {n})"
            );
            let at =
                ((both as usize).min(n - 1) as u32).wrapping_add((v as usize).min(n - 1) as u32);
            assert_eq!(c[i], at, "{v} (n {n})");
        }
    }
}

#[test]
fn float_to_int_casts_saturate_like_rust() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut host = random_f32(1000, 7)
        .into_iter()
        .map(|v| v * 1e10)
        .collect::<Vec<_>>();
    host.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e9,
        -3.0e9,
        -0.9,
        0.9,
        2.5,
        -2.5,
    ]);
    let n = host.len();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut to_i32 = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut to_u32 = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut to_u64 = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut back = DeviceBuffer::zeroed(&stream, n).unwrap();
    casts::launch(
        &stream,
        LaunchConfig::for_len(n, 128),
        &x,
        &mut to_i32,
        &mut to_u32,
        &mut to_u64,
        &mut back,
    )
    .unwrap();
    let (a, b, c, d) = (
        to_i32.to_host(&stream).unwrap(),
        to_u32.to_host(&stream).unwrap(),
        to_u64.to_host(&stream).unwrap(),
        back.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let v = host[i];
        assert_eq!(a[i], v as i32, "{v} as i32");
        assert_eq!(b[i], v as u32, "{v} as u32");
        assert_eq!(c[i], (v as f64 * 1e10) as u64, "{v} as u64");
        let expected = (v as i64) as f64 + (v > 0.0) as i32 as f64;
        assert!(d[i] == expected, "{v}: {} vs {expected}", d[i]);
    }
}

#[kernel]
fn math(x: &[f32], out: &mut [f32], flags: &mut [u32]) {
    let i = global_idx().x;
    if i < x.len() {
        let v = x[i];
        let relu = if v > 0.0 { v } else { 0.0 };
        let sig = 1.0 / (1.0 + (-v).exp());
        let a = v.abs().sqrt() + v.tanh() + (v * v + 1.0).ln() + v.sin() * v.cos();
        let b = v.mul_add(2.0, 1.0).min(1.5).max(-1.5) + v.powi(3) + v.clamp(-0.25, 0.25);
        let c = f32::consts::PI * v.floor() + v.ceil() + v.round() + v.signum() + f32::sqrt(2.0);
        out[i] = relu + sig + a + b + c;
        flags[i] = (v.is_nan() as u32) | ((v > 0.5) as u32) << 1;
    }
}

// Mirrors the kernel, which exercises `min` and `max` separately.
#[allow(clippy::manual_clamp)]
fn math_cpu(v: f32) -> (f32, u32) {
    let relu = if v > 0.0 { v } else { 0.0 };
    let sig = 1.0 / (1.0 + (-v).exp());
    let a = v.abs().sqrt() + v.tanh() + (v * v + 1.0).ln() + v.sin() * v.cos();
    let b = v.mul_add(2.0, 1.0).min(1.5).max(-1.5) + v.powi(3) + v.clamp(-0.25, 0.25);
    let c = std::f32::consts::PI * v.floor() + v.ceil() + v.round() + v.signum() + 2.0f32.sqrt();
    let flags = (v.is_nan() as u32) | ((v > 0.5) as u32) << 1;
    (relu + sig + a + b + c, flags)
}

#[test]
fn math_methods_match_std_within_float_tolerance() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut host: Vec<f32> = random_f32(10_000, 8).into_iter().map(|v| v * 4.0).collect();
    host.extend([0.0, -0.0, 0.5, -0.5, 1.5, f32::NAN]);
    let n = host.len();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut flags = DeviceBuffer::zeroed(&stream, n).unwrap();
    math::launch(
        &stream,
        LaunchConfig::for_len(n, 256),
        &x,
        &mut out,
        &mut flags,
    )
    .unwrap();
    let (out, flags) = (
        out.to_host(&stream).unwrap(),
        flags.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let (expected, expected_flags) = math_cpu(host[i]);
        assert_eq!(flags[i], expected_flags, "flags of {}", host[i]);
        if expected.is_nan() {
            assert!(
                out[i].is_nan(),
                "{} should give NaN, got {}",
                host[i],
                out[i]
            );
        } else {
            // CUDA's libdevice functions are within a few ulp of std's.
            let tolerance = 1e-5 * expected.abs().max(1.0);
            assert!(
                (out[i] - expected).abs() <= tolerance,
                "x={}: {} vs {expected}",
                host[i],
                out[i]
            );
        }
    }
}

#[kernel]
fn every_scalar_type(
    a: i32,
    b: u32,
    c: i64,
    d: u64,
    e: usize,
    f: f32,
    g: f64,
    flag: bool,
    out: &mut [f64],
) {
    let i = global_idx().x;
    if i < out.len() {
        let base = a as f64 + b as f64 + c as f64 + d as f64 + e as f64 + f as f64 + g;
        out[i] = if flag { base + i as f64 } else { -base };
    }
}

#[test]
fn every_scalar_parameter_type_reaches_the_kernel() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut out = DeviceBuffer::zeroed(&stream, 10).unwrap();
    let config = LaunchConfig::for_len(10, 32);
    let base =
        -7.0 + 4_000_000_000.0 + -(1i64 << 40) as f64 + (1u64 << 50) as f64 + 12345.0 + 0.25 + 1e-3;
    every_scalar_type::launch(
        &stream,
        config,
        -7,
        4_000_000_000,
        -(1 << 40),
        1 << 50,
        12345,
        0.25,
        1e-3,
        true,
        &mut out,
    )
    .unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, base + i as f64);
    }
    every_scalar_type::launch(
        &stream,
        config,
        -7,
        4_000_000_000,
        -(1 << 40),
        1 << 50,
        12345,
        0.25,
        1e-3,
        false,
        &mut out,
    )
    .unwrap();
    assert!(out.to_host(&stream).unwrap().iter().all(|v| *v == -base));
}

#[kernel]
fn transpose(width: u32, height: u32, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x * block_dim().x + thread_idx().x;
    let y = global_idx().y as u32;
    if x < width && y < height {
        output[(x * height + y) as usize] = input[(y * width + x) as usize];
    }
}

#[test]
fn two_dimensional_indices() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (w, h) = (333u32, 129u32);
    let host = random_f32((w * h) as usize, 9);
    let input = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut output = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    let block = Block::xy(32, 8);
    let grid = Grid::xy(w.div_ceil(32), h.div_ceil(8));
    transpose::launch(
        &stream,
        LaunchConfig::new(grid, block),
        w,
        h,
        &input,
        &mut output,
    )
    .unwrap();
    let got = output.to_host(&stream).unwrap();
    for y in 0..h as usize {
        for x in 0..w as usize {
            assert_eq!(
                got[x * h as usize + y],
                host[y * w as usize + x],
                "({x}, {y})"
            );
        }
    }
}

#[test]
fn invalid_launch_configuration_is_an_error_not_a_cuda_code() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32; 4]).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, 4).unwrap();
    let too_many_threads = LaunchConfig::new(Grid::x(1), Block::x(2048));
    let error = saxpy::launch(&stream, too_many_threads, 1.0, &x, &mut y).unwrap_err();
    assert!(matches!(error, gpu_dsl::Error::InvalidLaunch(_)), "{error}");
    assert!(error.to_string().contains("1024"), "{error}");
}

#[test]
fn library_map_kernels() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 3_000_017;
    let x_host = random_f32(n, 10);
    let y_host = random_f32(n, 11);
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &y_host).unwrap();
    gpu_dsl::kernels::map::saxpy(&stream, 0.5, &x, &mut y).unwrap();
    gpu_dsl::kernels::map::scale(&stream, 4.0, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        let expected = 0.5f32.mul_add(x_host[i], y_host[i]) * 4.0;
        assert_eq!(got[i], expected, "i={i}");
    }
    let short = DeviceBuffer::from_host(&stream, &[1.0f32; 3]).unwrap();
    let error = gpu_dsl::kernels::map::saxpy(&stream, 1.0, &short, &mut y).unwrap_err();
    assert!(
        matches!(error, gpu_dsl::Error::LengthMismatch { .. }),
        "{error}"
    );
}

/// Every kernel of this file, for the NVRTC check below.
const KERNELS: &[&Kernel] = &[
    &saxpy::KERNEL,
    &grid_stride_scale::KERNEL,
    &row_stats::KERNEL,
    &integer_semantics::KERNEL,
    &casts::KERNEL,
    &math::KERNEL,
    &every_scalar_type::KERNEL,
    &transpose::KERNEL,
];

/// Runs without a GPU: the generated CUDA compiles with NVRTC, without a warning.
#[test]
fn every_kernel_compiles_with_nvrtc() {
    let mut all: Vec<&Kernel> = KERNELS.to_vec();
    all.extend(gpu_dsl::kernels::all_kernels());
    let cases: Vec<(&Kernel, &[TemplateArg])> = all.into_iter().map(|k| (k, &[][..])).collect();
    assert_compiles_with_nvrtc(&cases);
}
