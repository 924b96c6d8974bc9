//! Generic kernels: `<T: Float>`, `<T: Number>`, `<T: Integer>`, `const N: usize` and `const B:
//! bool` become C++ templates, instantiated (and cached) per type and constant at launch; on the CPU backend,
//! one twin body per type the bound allows.

mod common;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{
    check_with_nvrtc, compile_to_ptx_generic, test_device, test_nvrtc, Kernel, TemplateArg,
};

#[kernel]
fn softplus<T: Float>(beta: T, x: &[T], y: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        let v = x[i] * beta;
        y[i] = if v > 20.0 {
            x[i]
        } else {
            (v.exp() + 1.0).ln() / beta
        };
    }
}

#[kernel]
fn axpy_number<T: Number>(a: T, x: &[T], y: &mut [T]) {
    for i in (global_idx().x..y.len()).step_by(grid_size().x) {
        y[i] = (a * x[i] + y[i] * 2).max(x[i].min(y[i]));
    }
}

#[kernel]
fn mix_bits<T: Integer>(x: &[T], y: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        y[i] = (x[i] << 3) ^ (x[i] >> 1) ^ x[i].max(7) / 3;
    }
}

/// A value's bits in a `u64` word and back, the second read an atomic load: the packing that a
/// one-word flag protocol (the scan's look-back) relies on.
#[kernel]
fn bits_round_trip<T: Number>(x: &[T], words: &mut [u64], y: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        words[i] = x[i].to_bits();
        y[i] = T::from_bits(words.atomic_load(i));
    }
}

/// A block sum whose block size is a const parameter: it sizes the shared memory.
#[kernel]
fn block_sums<const BLOCK: usize>(x: &[f32], out: &mut [f32]) {
    let partial = shared_array::<f32, BLOCK>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    partial[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut stride = BLOCK / 2;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = partial[0];
    }
}

/// The larger of two values or, `LARGER` false, the smaller, decided at compile time.
#[device]
fn pick<const LARGER: bool>(a: u32, b: u32) -> u32 {
    if LARGER {
        a.max(b)
    } else {
        a.min(b)
    }
}

/// Each pair's larger or smaller value by a `const bool` passed on to a device function (as
/// the CUDA samples' sorts take their direction as a template argument), the other one by
/// `!LARGER`, and the larger by a literal `true`.
#[kernel]
fn pick_pairs<const LARGER: bool>(a: &[u32], b: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < a.len() {
        let other = if !LARGER {
            pick::<true>(a[i], b[i])
        } else {
            pick::<false>(a[i], b[i])
        };
        out[3 * i] = pick::<LARGER>(a[i], b[i]);
        out[3 * i + 1] = other;
        out[3 * i + 2] = u32::from(LARGER);
    }
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0
        })
        .collect()
}

#[test]
fn every_instantiation_compiles_with_nvrtc() {
    if !test_nvrtc() {
        return;
    }
    let cases: [(&Kernel, Vec<TemplateArg>); 14] = [
        (&pick_pairs::KERNEL, vec![TemplateArg::Const(1)]),
        (&pick_pairs::KERNEL, vec![TemplateArg::Const(0)]),
        (&softplus::KERNEL, vec![TemplateArg::of::<f32>()]),
        (&softplus::KERNEL, vec![TemplateArg::of::<f64>()]),
        (&axpy_number::KERNEL, vec![TemplateArg::of::<i32>()]),
        (&axpy_number::KERNEL, vec![TemplateArg::of::<u64>()]),
        (&axpy_number::KERNEL, vec![TemplateArg::of::<f32>()]),
        (&mix_bits::KERNEL, vec![TemplateArg::of::<i64>()]),
        (&mix_bits::KERNEL, vec![TemplateArg::of::<u32>()]),
        (&mix_bits::KERNEL, vec![TemplateArg::of::<isize>()]),
        (&block_sums::KERNEL, vec![TemplateArg::Const(256)]),
        (&bits_round_trip::KERNEL, vec![TemplateArg::of::<i32>()]),
        (&bits_round_trip::KERNEL, vec![TemplateArg::of::<f32>()]),
        (&bits_round_trip::KERNEL, vec![TemplateArg::of::<f64>()]),
    ];
    for (kernel, args) in cases {
        for arch in [(8, 0), (9, 0)] {
            for checked in [false, true] {
                check_with_nvrtc(kernel, &args, arch, checked).unwrap_or_else(|e| {
                    panic!("{}<{args:?}> (sm_{}{}): {e}", kernel.name(), arch.0, arch.1)
                });
            }
        }
        let compiled = compile_to_ptx_generic(kernel, &args, (9, 0))
            .unwrap_or_else(|e| panic!("{}<{args:?}>: {e}\n{}", kernel.name(), kernel.source()));
        assert!(
            compiled.ptx.contains(&compiled.lowered_name),
            "{}",
            kernel.name()
        );
    }
}

#[test]
fn float_kernels_for_f32_and_f64() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = random(10_000, 1);
    let x64 = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y64 = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    let config = LaunchConfig::for_len(host.len(), 256);
    softplus::launch::<f64>(&stream, config, 1.5, &x64, &mut y64).unwrap();
    let host32: Vec<f32> = host.iter().map(|v| *v as f32).collect();
    let x32 = DeviceBuffer::from_host(&stream, &host32).unwrap();
    let mut y32 = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    softplus::launch::<f32>(&stream, config, 1.5, &x32, &mut y32).unwrap();
    let (y64, y32) = (y64.to_host(&stream).unwrap(), y32.to_host(&stream).unwrap());
    for i in 0..host.len() {
        let v = host[i] * 1.5;
        let expected = if v > 20.0 {
            host[i]
        } else {
            (v.exp() + 1.0).ln() / 1.5
        };
        assert!(
            (y64[i] - expected).abs() < 1e-12 * expected.abs().max(1.0),
            "f64 {i}"
        );
        assert!(
            (y32[i] as f64 - expected).abs() < 1e-5 * expected.abs().max(1.0),
            "f32 {i}"
        );
    }
}

#[test]
fn number_and_integer_kernels() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 5000;
    let xi: Vec<i32> = random(n, 2).iter().map(|v| (v * 1e8) as i32).collect();
    let yi: Vec<i32> = random(n, 3).iter().map(|v| (v * 1e8) as i32).collect();
    let x = DeviceBuffer::from_host(&stream, &xi).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &yi).unwrap();
    let config = LaunchConfig::new(Grid::x(4), Block::x(128));
    axpy_number::launch::<i32>(&stream, config, -3, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        let expected = (-3i32)
            .wrapping_mul(xi[i])
            .wrapping_add(yi[i].wrapping_mul(2))
            .max(xi[i].min(yi[i]));
        assert_eq!(got[i], expected, "i32 {i}");
    }
    let xf: Vec<f32> = xi.iter().map(|v| *v as f32 * 1e-6).collect();
    let x = DeviceBuffer::from_host(&stream, &xf).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &xf).unwrap();
    axpy_number::launch::<f32>(&stream, config, 0.5, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        // 0.5 * x + 2 * x, then the larger of that and min(x, x) = x.
        let expected = (2.5 * xf[i]).max(xf[i]);
        assert!(
            (got[i] - expected).abs() <= 1e-6 * xf[i].abs().max(1.0),
            "f32 {i}"
        );
    }
    let xu: Vec<u64> = xi
        .iter()
        .map(|v| (*v as i64 as u64).wrapping_mul(0x9E37_79B9))
        .collect();
    let x = DeviceBuffer::from_host(&stream, &xu).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
    mix_bits::launch::<u64>(&stream, LaunchConfig::for_len(n, 128), &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        let v = xu[i];
        assert_eq!(got[i], (v << 3) ^ (v >> 1) ^ (v.max(7) / 3), "u64 {i}");
    }
    let xs: Vec<isize> = xu.iter().map(|v| *v as isize).collect();
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
    mix_bits::launch::<isize>(&stream, LaunchConfig::for_len(n, 128), &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        let v = xs[i];
        assert_eq!(got[i], (v << 3) ^ (v >> 1) ^ (v.max(7) / 3), "isize {i}");
    }
}

#[test]
fn const_parameter_sizes_shared_memory() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<f32> = random(100_000, 4).iter().map(|v| *v as f32).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    for block in [64usize, 512] {
        let blocks = host.len().div_ceil(block);
        let mut out = DeviceBuffer::zeroed(&stream, blocks).unwrap();
        let config = LaunchConfig::for_len(host.len(), block as u32);
        match block {
            64 => block_sums::launch::<64>(&stream, config, &x, &mut out).unwrap(),
            _ => block_sums::launch::<512>(&stream, config, &x, &mut out).unwrap(),
        }
        let got = out.to_host(&stream).unwrap();
        for (b, chunk) in host.chunks(block).enumerate() {
            let expected: f64 = chunk.iter().map(|v| *v as f64).sum();
            assert!(
                (got[b] as f64 - expected).abs() < 1e-3,
                "block {block}, #{b}"
            );
        }
    }
}

#[test]
fn const_bool_parameter_picks_at_compile_time() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let a: Vec<u32> = random(1000, 5)
        .iter()
        .map(|v| (v.abs() * 1e3) as u32)
        .collect();
    let b: Vec<u32> = random(1000, 6)
        .iter()
        .map(|v| (v.abs() * 1e3) as u32)
        .collect();
    let (ab, bb) = (
        DeviceBuffer::from_host(&stream, &a).unwrap(),
        DeviceBuffer::from_host(&stream, &b).unwrap(),
    );
    let config = LaunchConfig::for_len(a.len(), 128);
    for larger in [true, false] {
        let mut out = DeviceBuffer::zeroed(&stream, 3 * a.len()).unwrap();
        if larger {
            pick_pairs::launch::<true>(&stream, config, &ab, &bb, &mut out).unwrap();
        } else {
            pick_pairs::launch::<false>(&stream, config, &ab, &bb, &mut out).unwrap();
        }
        let got = out.to_host(&stream).unwrap();
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let (big, small) = (*x.max(y), *x.min(y));
            let expected = if larger {
                [big, small, 1]
            } else {
                [small, big, 0]
            };
            assert_eq!(got[3 * i..3 * i + 3], expected, "larger {larger}, pair {i}");
        }
    }
}

#[test]
fn type_parameter_bits_are_zero_extended_and_round_trip() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let config = LaunchConfig::for_len(4, 32);
    let xi = [-1i32, 0, 7, i32::MIN];
    let x = DeviceBuffer::from_host(&stream, &xi).unwrap();
    let mut words = DeviceBuffer::zeroed(&stream, 4).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, 4).unwrap();
    bits_round_trip::launch::<i32>(&stream, config, &x, &mut words, &mut y).unwrap();
    let expected: Vec<u64> = xi.iter().map(|v| *v as u32 as u64).collect();
    assert_eq!(words.to_host(&stream).unwrap(), expected);
    assert_eq!(y.to_host(&stream).unwrap(), xi);
    let xf = [-1.5f32, 0.0, f32::MIN_POSITIVE, f32::INFINITY];
    let x = DeviceBuffer::from_host(&stream, &xf).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, 4).unwrap();
    bits_round_trip::launch::<f32>(&stream, config, &x, &mut words, &mut y).unwrap();
    let expected: Vec<u64> = xf.iter().map(|v| v.to_bits() as u64).collect();
    assert_eq!(words.to_host(&stream).unwrap(), expected);
    assert_eq!(y.to_host(&stream).unwrap(), xf);
    let xd = [-1.5f64, 1e300, f64::MIN_POSITIVE, -0.0];
    let x = DeviceBuffer::from_host(&stream, &xd).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, 4).unwrap();
    bits_round_trip::launch::<f64>(&stream, config, &x, &mut words, &mut y).unwrap();
    let expected: Vec<u64> = xd.iter().map(|v| v.to_bits()).collect();
    assert_eq!(words.to_host(&stream).unwrap(), expected);
    let got: Vec<u64> = y
        .to_host(&stream)
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(got, expected);
}
