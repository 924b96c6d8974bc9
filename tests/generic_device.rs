//! Generic `#[device]` functions: bounded by `Float`, `Integer` or `Number`, with const
//! parameters, called from plain and generic kernels and from each other, instantiated by the
//! arguments' types, the expected result or a turbofish; each instantiation compared with a
//! plain Rust computation and compiled by NVRTC.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, TemplateArg};

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

/// The warp reduction: a generic value combined by a closure the caller passes.
#[device]
fn warp_reduce<T: Number, F: Fn(T, T) -> T>(value: T, op: F) -> T {
    let mut v = value;
    let mut offset = 16u32;
    while offset > 0 {
        v = op(v, shfl_down_sync(0xffff_ffff, v, offset));
        offset /= 2;
    }
    v
}

/// A closure bound naming concrete types, and a closure passed on to another function.
#[device]
fn apply_twice<F: Fn(f32) -> f32>(x: f32, f: F) -> f32 {
    let once = apply_once(x, f);
    f(once)
}

#[device]
fn apply_once<G: Fn(f32) -> f32>(x: f32, g: G) -> f32 {
    g(x)
}

/// A closure whose parameter types come from the bound, used inside a generic function.
#[device]
fn combine_with<T: Float>(a: T, b: T) -> T {
    let pick = |x: T, y: T| if x > y { x - y } else { y - x };
    pick(a, b) + warp_reduce(a, |p, q| p.max(q)) - warp_reduce(a, |p, q| p.max(q))
}

#[kernel]
fn closures(x: &[f32], hi: f32, out: &mut [f32], totals: &mut [f32], maxima: &mut [i32]) {
    let i = global_idx().x;
    let mut v = 0.0f32;
    if i < x.len() {
        // Annotated, capturing `hi` by copy.
        let scale = |x: f32| x * hi;
        // Inferred from its first call; a block body.
        let offset = |a, b| {
            let d = a - b;
            d * 0.5
        };
        let shifted = apply_twice(x[i], |t| t + hi);
        v = scale(x[i]) + offset(x[i], 1.0) + shifted + combine_with(x[i], hi);
        out[i] = v;
    }
    let total = warp_reduce(v, |a, b| a + b);
    let bits = (v * 1000.0) as i32;
    let most = warp_reduce(bits, |a: i32, b: i32| a.max(b));
    if lane_id() == 0 && i / 32 < totals.len() {
        totals[i / 32] = total;
        maxima[i / 32] = most;
    }
}

#[test]
fn closures_are_called_locally_and_passed_to_generic_functions() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 256;
    let hi = 1.5f32;
    let x = random_f32(n, 3);
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let mut totals = DeviceBuffer::<f32>::zeroed(&stream, n / 32).unwrap();
    let mut maxima = DeviceBuffer::<i32>::zeroed(&stream, n / 32).unwrap();
    let config = LaunchConfig::for_len(n, 64);
    closures::launch(&stream, config, &dx, hi, &mut out, &mut totals, &mut maxima).unwrap();
    let (out, totals, maxima) = (
        out.to_host(&stream).unwrap(),
        totals.to_host(&stream).unwrap(),
        maxima.to_host(&stream).unwrap(),
    );
    let expected: Vec<f32> = x
        .iter()
        .map(|&x| x * hi + (x - 1.0) * 0.5 + (x + 2.0 * hi) + (x - hi).abs())
        .collect();
    for i in 0..n {
        assert!(
            (out[i] - expected[i]).abs() < 1e-4,
            "{i}: {} vs {}",
            out[i],
            expected[i]
        );
    }
    for w in 0..n / 32 {
        let warp = &out[w * 32..w * 32 + 32];
        let sum: f32 = warp.iter().sum();
        assert!(
            (totals[w] - sum).abs() < 1e-3,
            "warp {w}: {} vs {sum}",
            totals[w]
        );
        let most = warp.iter().map(|v| (v * 1000.0) as i32).max().unwrap();
        assert_eq!(maxima[w], most, "warp {w}");
    }
}

/// Closures that capture shared memory, a local array and a slice (read, and updated through
/// an atomic), with a unit result.
#[kernel]
fn closure_captures(x: &[f32], counts: &mut [u32], out: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    tile[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let weights = [0.5f32, 0.25];
    let neighbour = |k: usize| tile[(t + k) % 64] * weights[k % 2] + x[i % x.len()];
    let bump = |k: usize| {
        counts.atomic_add(k % counts.len(), 1);
    };
    // Never called: its body is still checked, and no C++ is written for it.
    let _unused = |k: usize| tile[k % 64];
    if i < x.len() {
        out[i] = neighbour(1) + neighbour(2);
        bump(i);
    }
}

#[test]
fn closures_capture_shared_memory_arrays_and_slices() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 256;
    let x = random_f32(n, 4);
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut counts = DeviceBuffer::<u32>::zeroed(&stream, 10).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::for_len(n, 64);
    closure_captures::launch(&stream, config, &dx, &mut counts, &mut out).unwrap();
    let (counts, out) = (
        counts.to_host(&stream).unwrap(),
        out.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let (block, t) = (i / 64 * 64, i % 64);
        let neighbour = |k: usize| x[block + (t + k) % 64] * [0.5, 0.25][k % 2] + x[i];
        let expected = neighbour(1) + neighbour(2);
        assert!(
            (out[i] - expected).abs() < 1e-5,
            "{i}: {} vs {expected}",
            out[i]
        );
    }
    for (k, count) in counts.iter().enumerate() {
        assert_eq!(
            *count as usize,
            (0..n).filter(|i| i % 10 == k).count(),
            "{k}"
        );
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

/// A generic kernel and the generic device functions it calls, for `f16` and `bf16`: arithmetic
/// rounds after each operation and float methods compute in `f32`, as the `half` crate's do.
#[kernel]
fn half_softplus<T: Float>(beta: T, x: &[T], y: &mut [T], warp_totals: &mut [T]) {
    let i = global_idx().x;
    let v = if i < x.len() { x[i] } else { x[0] - x[0] };
    if i < x.len() {
        let scaled = lerp(v, v * beta, 0.5);
        y[i] = (scaled.exp() + 1.0).ln() / beta + (i % 3) as T;
    }
    let total = warp_reduce(v, |a, b| a + b);
    if lane_id() == 0 && i / 32 < warp_totals.len() {
        warp_totals[i / 32] = total;
    }
}

/// `ulp` is the half type's relative precision: `exp` and `ln` run in `f32` on both backends,
/// and CUDA's may differ from Rust's in the last `f32` bit, which can move a rounding.
fn half_softplus_on<H>(from_f32: fn(f32) -> H, to_f32: fn(H) -> f32, ulp: f32)
where
    H: gpu_dsl::runtime::Float
        + std::ops::Add<Output = H>
        + std::ops::Sub<Output = H>
        + std::ops::Mul<Output = H>
        + std::ops::Div<Output = H>
        + std::fmt::Debug
        + PartialEq,
{
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 128;
    let x: Vec<H> = random_f32(n, 5).into_iter().map(from_f32).collect();
    let beta = from_f32(1.5);
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut y = DeviceBuffer::<H>::zeroed(&stream, n).unwrap();
    let mut totals = DeviceBuffer::<H>::zeroed(&stream, n / 32).unwrap();
    let config = LaunchConfig::for_len(n, 64);
    half_softplus::launch::<H>(&stream, config, beta, &dx, &mut y, &mut totals).unwrap();
    let (y, totals) = (
        y.to_host(&stream).unwrap(),
        totals.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        // Each operation rounded to the half type, as `half` (and the kernel) computes.
        let v = x[i];
        let scaled = v + (v * beta - v) * from_f32(0.5);
        let e = from_f32(to_f32(scaled).exp()) + from_f32(1.0);
        let expected = from_f32(to_f32(e).ln()) / beta + from_f32((i % 3) as f32);
        let (got, want) = (to_f32(y[i]), to_f32(expected));
        assert!(
            (got - want).abs() <= 2.0 * ulp * want.abs().max(1.0),
            "{i}: {got} vs {want}"
        );
    }
    for (w, total) in totals.iter().enumerate() {
        // The shuffle tree's order: lane l adds lane l + 16, then + 8, ...
        let mut lanes: Vec<H> = x[w * 32..w * 32 + 32].to_vec();
        let mut offset = 16;
        while offset > 0 {
            for l in 0..32 {
                if l + offset < 32 {
                    lanes[l] = lanes[l] + lanes[l + offset];
                }
            }
            offset /= 2;
        }
        assert_eq!(*total, lanes[0], "warp {w}");
    }
}

#[test]
fn generic_code_instantiates_with_f16_and_bf16() {
    half_softplus_on::<f16>(f16::from_f32, f16::to_f32, 1.0 / 1024.0);
    half_softplus_on::<bf16>(bf16::from_f32, bf16::to_f32, 1.0 / 128.0);
}

/// A block sum through shared memory: each instantiation has its own array, on both backends.
#[device]
fn block_sum<T: Number>(value: T) -> T {
    let partial = shared_array::<T, 64>();
    let t = thread_idx().x as usize;
    partial[t] = value;
    sync_threads();
    let mut total = partial[0];
    for k in 1..64 {
        total += partial[k];
    }
    sync_threads();
    total
}

#[kernel]
fn two_block_sums(x: &[f32], sums: &mut [f32], wide: &mut [f64]) {
    let i = global_idx().x;
    let v = if i < x.len() { x[i] } else { 0.0 };
    let narrow = block_sum(v);
    let double = block_sum(v as f64 * 2.0);
    if thread_idx().x == 0 {
        sums[block_idx().x as usize] = narrow;
        wide[block_idx().x as usize] = double;
    }
}

#[test]
fn each_instantiation_has_its_own_shared_memory() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let x = random_f32(256, 6);
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let mut wide = DeviceBuffer::<f64>::zeroed(&stream, 4).unwrap();
    let config = LaunchConfig::for_len(256, 64);
    two_block_sums::launch(&stream, config, &dx, &mut sums, &mut wide).unwrap();
    let (sums, wide) = (
        sums.to_host(&stream).unwrap(),
        wide.to_host(&stream).unwrap(),
    );
    for b in 0..4 {
        let block = &x[b * 64..b * 64 + 64];
        let narrow = block.iter().fold(0.0f32, |a, v| a + v);
        let double = block.iter().fold(0.0f64, |a, v| a + *v as f64 * 2.0);
        assert_eq!(sums[b], narrow, "block {b}");
        assert!(
            (wide[b] - double).abs() < 1e-9,
            "block {b}: {} vs {double}",
            wide[b]
        );
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
        (&closures::KERNEL, &[]),
        (&closure_captures::KERNEL, &[]),
        (&two_block_sums::KERNEL, &[]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<f16>()]),
        (&generic_caller::KERNEL, &[TemplateArg::of::<bf16>()]),
        (&half_softplus::KERNEL, &[TemplateArg::of::<f16>()]),
        (&half_softplus::KERNEL, &[TemplateArg::of::<bf16>()]),
        (&half_softplus::KERNEL, &[TemplateArg::of::<f32>()]),
    ]);
}
