//! Reductions on whichever backend exists, against Rust folds: sizes around a warp, a block and
//! a vector load, many blocks, every type and operation, the NaN policy, half-precision inputs,
//! bit-for-bit determinism, and NVRTC compiling every instantiation.

mod common;

use gpu_dsl_kernels::reduce::{
    self, instantiations, reduce, reduce_into, sum_bf16, sum_f16, ReduceOp, ReduceScratch,
};
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{test_device, DeviceBuffer, Error, Stream};

/// Around a warp (31..33), one block's first load (4097 = 16 * 256 + 1), odd tails of the
/// 4-element vector loads, and a grid-stride loop over many iterations (1 << 20).
const SIZES: [usize; 10] = [0, 1, 2, 3, 31, 32, 33, 1000, 4097, 1 << 20];

/// Deterministic xorshift64 words, so failures reproduce.
fn random_words(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect()
}

/// Uniform in [-1, 1).
fn random_f64(n: usize, seed: u64) -> Vec<f64> {
    random_words(n, seed)
        .iter()
        .map(|w| (w >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
        .collect()
}

fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    random_f64(n, seed).iter().map(|v| *v as f32).collect()
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    random_words(n, seed)
        .iter()
        .map(|w| (w >> 32) as u32)
        .collect()
}

fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    random_u32(n, seed).iter().map(|v| *v as i32).collect()
}

/// How far a float sum may be from the exact one, for inputs in [-scale, scale).
///
/// The kernel adds along chains of at most about n / 1024 + 40 additions (each thread's four
/// vector lanes, then the warp, block and partials trees), each rounding by at most `epsilon`
/// relative to its running sum. For random signs the running sums stay near `sqrt(n) * scale`
/// and the rounding errors cancel as a random walk, so the error is a small multiple of
/// `epsilon * sqrt(n) * scale`: with 170 ulps (1e-5 for f32) the bound is far above the errors
/// seen, while dropping or repeating a single element breaks it for every size here.
fn float_tolerance(n: usize, scale: f64, epsilon: f64) -> f64 {
    170.0 * epsilon * (n as f64).sqrt().max(1.0) * scale
}

fn check_float_sum(got: f64, exact: f64, n: usize, scale: f64, epsilon: f64, what: &str) {
    let tolerance = float_tolerance(n, scale, epsilon);
    assert!(
        (got - exact).abs() <= tolerance,
        "{what} n={n}: {got} vs exact {exact} (tolerance {tolerance:e})"
    );
}

#[test]
fn float_sums_match_a_wide_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for (i, n) in SIZES.into_iter().enumerate() {
        let scale = [1.0, 1e3, 1e-3][i % 3];
        let host: Vec<f32> = random_f32(n, 1 + i as u64)
            .iter()
            .map(|v| v * scale as f32)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let exact: f64 = host.iter().map(|v| *v as f64).sum();
        let got = reduce::sum(&stream, &x).unwrap() as f64;
        check_float_sum(got, exact, n, scale, f32::EPSILON as f64, "f32");

        let host: Vec<f64> = random_f64(n, 100 + i as u64)
            .iter()
            .map(|v| v * scale)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        // The reference itself rounds, by less than n * epsilon * scale ulps: compare against
        // its own tolerance plus the kernel's.
        let reference: f64 = host.iter().sum();
        let got = reduce::sum(&stream, &x).unwrap();
        check_float_sum(got, reference, n, 2.0 * scale, f64::EPSILON, "f64");
    }
}

/// Multiples of 1/8 below 2 in magnitude: every partial sum of up to 2^21 of them needs at
/// most 24 significant bits, so any order of addition gives the exact sum. A dropped, repeated
/// or misplaced element shows as an inequality.
#[test]
fn dyadic_f32_sums_are_exact_in_any_order() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in SIZES.into_iter().chain([3_000_017]) {
        let host: Vec<f32> = random_i32(n, n as u64 + 7)
            .iter()
            .map(|v| (v % 16) as f32 / 8.0)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let exact: f64 = host.iter().map(|v| *v as f64).sum();
        assert_eq!(reduce::sum(&stream, &x).unwrap() as f64, exact, "n={n}");
    }
}

#[test]
fn integer_sums_wrap_like_release_rust() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in SIZES {
        let host = random_i32(n, n as u64 + 11);
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let expected = host.iter().fold(0i32, |a, b| a.wrapping_add(*b));
        assert_eq!(reduce::sum(&stream, &x).unwrap(), expected, "i32 n={n}");

        let host = random_u32(n, n as u64 + 13);
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let expected = host.iter().fold(0u32, |a, b| a.wrapping_add(*b));
        assert_eq!(reduce::sum(&stream, &x).unwrap(), expected, "u32 n={n}");
    }
}

#[test]
fn min_and_max_of_every_type() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in SIZES.into_iter().filter(|n| *n > 0) {
        let seed = n as u64 + 17;
        // Mostly negative values, so that a minimum starting from 0 instead of the identity
        // would show.
        let floats: Vec<f32> = random_f32(n, seed).iter().map(|v| v * 1e6 - 5e5).collect();
        let x = DeviceBuffer::from_host(&stream, &floats).unwrap();
        let expected = floats.iter().fold(f32::INFINITY, |a, b| a.min(*b));
        assert_eq!(reduce::min(&stream, &x).unwrap(), expected, "f32 min n={n}");
        let expected = floats.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b));
        assert_eq!(reduce::max(&stream, &x).unwrap(), expected, "f32 max n={n}");

        let doubles: Vec<f64> = random_f64(n, seed).iter().map(|v| -v.abs()).collect();
        let x = DeviceBuffer::from_host(&stream, &doubles).unwrap();
        let expected = doubles.iter().fold(f64::INFINITY, |a, b| a.min(*b));
        assert_eq!(reduce::min(&stream, &x).unwrap(), expected, "f64 min n={n}");
        let expected = doubles.iter().fold(f64::NEG_INFINITY, |a, b| a.max(*b));
        assert_eq!(reduce::max(&stream, &x).unwrap(), expected, "f64 max n={n}");

        let ints: Vec<i32> = random_i32(n, seed)
            .iter()
            .map(|v| -(v >> 1).abs())
            .collect();
        let x = DeviceBuffer::from_host(&stream, &ints).unwrap();
        assert_eq!(
            reduce::min(&stream, &x).unwrap(),
            *ints.iter().min().unwrap(),
            "i32 min n={n}"
        );
        assert_eq!(
            reduce::max(&stream, &x).unwrap(),
            *ints.iter().max().unwrap(),
            "i32 max n={n}"
        );

        let uints = random_u32(n, seed);
        let x = DeviceBuffer::from_host(&stream, &uints).unwrap();
        assert_eq!(
            reduce::min(&stream, &x).unwrap(),
            *uints.iter().min().unwrap(),
            "u32 min n={n}"
        );
        assert_eq!(
            reduce::max(&stream, &x).unwrap(),
            *uints.iter().max().unwrap(),
            "u32 max n={n}"
        );
    }
}

#[test]
fn empty_input_gives_the_identity() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let f = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    assert_eq!(reduce::sum(&stream, &f).unwrap(), 0.0);
    assert_eq!(reduce::min(&stream, &f).unwrap(), f32::INFINITY);
    assert_eq!(reduce::max(&stream, &f).unwrap(), f32::NEG_INFINITY);
    let d = DeviceBuffer::<f64>::zeroed(&stream, 0).unwrap();
    assert_eq!(reduce::min(&stream, &d).unwrap(), f64::INFINITY);
    assert_eq!(reduce::max(&stream, &d).unwrap(), f64::NEG_INFINITY);
    let i = DeviceBuffer::<i32>::zeroed(&stream, 0).unwrap();
    assert_eq!(reduce::sum(&stream, &i).unwrap(), 0);
    assert_eq!(reduce::min(&stream, &i).unwrap(), i32::MAX);
    assert_eq!(reduce::max(&stream, &i).unwrap(), i32::MIN);
    let u = DeviceBuffer::<u32>::zeroed(&stream, 0).unwrap();
    assert_eq!(reduce::min(&stream, &u).unwrap(), u32::MAX);
    assert_eq!(reduce::max(&stream, &u).unwrap(), 0);
    assert_eq!(ReduceOp::Min.identity::<i32>(), i32::MAX);
    let h = DeviceBuffer::<f16>::zeroed(&stream, 0).unwrap();
    assert_eq!(sum_f16(&stream, &h).unwrap(), 0.0);
}

/// Min and max ignore NaN as `f32::min` does (only-NaN input gives the identity); a sum with a
/// NaN is NaN.
#[test]
fn nan_is_ignored_by_min_and_max() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in [1usize, 5, 33, 4097, 100_000] {
        let mut host = random_f32(n, n as u64 + 23);
        for i in (0..n).step_by(3) {
            host[i] = f32::NAN;
        }
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let min = host.iter().fold(f32::INFINITY, |a, b| a.min(*b));
        let max = host.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b));
        assert_eq!(reduce::min(&stream, &x).unwrap(), min, "f32 min n={n}");
        assert_eq!(reduce::max(&stream, &x).unwrap(), max, "f32 max n={n}");
        assert!(reduce::sum(&stream, &x).unwrap().is_nan(), "f32 sum n={n}");

        let host: Vec<f64> = host.iter().map(|v| *v as f64).collect();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        assert_eq!(
            reduce::min(&stream, &x).unwrap(),
            min as f64,
            "f64 min n={n}"
        );
        assert_eq!(
            reduce::max(&stream, &x).unwrap(),
            max as f64,
            "f64 max n={n}"
        );
        assert!(reduce::sum(&stream, &x).unwrap().is_nan(), "f64 sum n={n}");
    }
    let nans = DeviceBuffer::from_host(&stream, &[f32::NAN; 40]).unwrap();
    assert_eq!(reduce::min(&stream, &nans).unwrap(), f32::INFINITY);
    assert_eq!(reduce::max(&stream, &nans).unwrap(), f32::NEG_INFINITY);
}

/// Grids of up to 4096 blocks (733 for 3M elements) and of a single block, whatever the
/// device's multiprocessor count: the last-block election and the partials' fold.
#[test]
fn many_blocks_and_one_block() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 3_000_017;
    let dyadic: Vec<f32> = random_i32(n, 29)
        .iter()
        .map(|v| (v % 16) as f32 / 8.0)
        .collect();
    let ints = random_i32(n, 31);
    let exact: f64 = dyadic.iter().map(|v| *v as f64).sum();
    let x = DeviceBuffer::from_host(&stream, &dyadic).unwrap();
    let xi = DeviceBuffer::from_host(&stream, &ints).unwrap();
    for max_blocks in [4096, 1, 3] {
        let mut scratch = ReduceScratch::with_max_blocks(&stream, max_blocks).unwrap();
        let mut scratch_i = ReduceScratch::with_max_blocks(&stream, max_blocks).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, 1).unwrap();
        let mut out_i = DeviceBuffer::zeroed(&stream, 1).unwrap();
        reduce_into(&stream, &x, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
        assert_eq!(
            out.to_host(&stream).unwrap()[0] as f64,
            exact,
            "max_blocks {max_blocks}"
        );
        for (op, expected) in [
            (
                ReduceOp::Sum,
                ints.iter().fold(0i32, |a, b| a.wrapping_add(*b)),
            ),
            (ReduceOp::Min, *ints.iter().min().unwrap()),
            (ReduceOp::Max, *ints.iter().max().unwrap()),
        ] {
            reduce_into(&stream, &xi, op, &mut out_i, &mut scratch_i).unwrap();
            assert_eq!(
                out_i.to_host(&stream).unwrap()[0],
                expected,
                "{op:?} max_blocks {max_blocks}"
            );
        }
    }
}

fn sum_twice(stream: &Stream, x: &DeviceBuffer<f32>, max_blocks: u32) -> (u32, u32) {
    let mut scratch = ReduceScratch::with_max_blocks(stream, max_blocks).unwrap();
    let mut out = DeviceBuffer::zeroed(stream, 1).unwrap();
    reduce_into(stream, x, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
    let first = out.to_host(stream).unwrap()[0];
    // The same scratch again: the kernel left its counter at zero.
    reduce_into(stream, x, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
    let second = out.to_host(stream).unwrap()[0];
    (first.to_bits(), second.to_bits())
}

/// Float sums depend on the order of additions; the kernel's order is fixed by the length and
/// the grid, so repeated runs give the same bits whatever order blocks finish in.
#[test]
fn same_input_gives_the_same_bits() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in [4097usize, 1 << 20, 3_000_017] {
        let host: Vec<f32> = random_f32(n, n as u64 + 37)
            .iter()
            .map(|v| v * 1e4)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let default = reduce::sum(&stream, &x).unwrap().to_bits();
        for _ in 0..3 {
            assert_eq!(
                reduce::sum(&stream, &x).unwrap().to_bits(),
                default,
                "n={n}"
            );
        }
        for max_blocks in [733, 64] {
            let (first, second) = sum_twice(&stream, &x, max_blocks);
            assert_eq!(first, second, "n={n} max_blocks {max_blocks}");
            assert_eq!(
                (first, second),
                sum_twice(&stream, &x, max_blocks),
                "n={n} max_blocks {max_blocks}, fresh scratch"
            );
        }
    }
}

/// 16-bit inputs accumulate in `f32`: 2^17 ones sum to 131072, past both types' exact
/// integers (2048 and 256) and f16's largest finite value.
#[test]
fn half_precision_sums_accumulate_in_f32() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let ones = 1usize << 17;
    let x = DeviceBuffer::from_host(&stream, &vec![f16::ONE; ones]).unwrap();
    assert_eq!(sum_f16(&stream, &x).unwrap(), ones as f32);
    let x = DeviceBuffer::from_host(&stream, &vec![bf16::ONE; ones]).unwrap();
    assert_eq!(sum_bf16(&stream, &x).unwrap(), ones as f32);
    for n in SIZES {
        let values = random_f32(n, n as u64 + 41);
        let halves: Vec<f16> = values.iter().map(|v| f16::from_f32(*v)).collect();
        let exact: f64 = halves.iter().map(|v| v.to_f64()).sum();
        let x = DeviceBuffer::from_host(&stream, &halves).unwrap();
        let got = sum_f16(&stream, &x).unwrap() as f64;
        check_float_sum(got, exact, n, 1.0, f32::EPSILON as f64, "f16");

        let brains: Vec<bf16> = values.iter().map(|v| bf16::from_f32(*v)).collect();
        let exact: f64 = brains.iter().map(|v| v.to_f64()).sum();
        let x = DeviceBuffer::from_host(&stream, &brains).unwrap();
        let got = sum_bf16(&stream, &x).unwrap() as f64;
        check_float_sum(got, exact, n, 1.0, f32::EPSILON as f64, "bf16");
    }
}

#[test]
fn reduce_matches_the_named_functions() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = random_u32(1000, 43);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    assert_eq!(
        reduce(&stream, &x, ReduceOp::Max).unwrap(),
        reduce::max(&stream, &x).unwrap()
    );
    assert_eq!(
        reduce(&stream, &x, ReduceOp::Sum).unwrap(),
        reduce::sum(&stream, &x).unwrap()
    );
}

#[test]
fn bad_arguments_are_errors() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0]).unwrap();
    let mut scratch = ReduceScratch::new(&stream).unwrap();
    assert!(scratch.max_blocks() >= 1);
    let mut wide = DeviceBuffer::zeroed(&stream, 2).unwrap();
    match reduce_into(&stream, &x, ReduceOp::Sum, &mut wide, &mut scratch) {
        Err(Error::LengthMismatch {
            expected: 1,
            found: 2,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let mut empty = DeviceBuffer::zeroed(&stream, 0).unwrap();
    let h = DeviceBuffer::from_host(&stream, &[f16::ONE]).unwrap();
    match reduce::sum_f16_into(&stream, &h, &mut empty, &mut scratch) {
        Err(Error::LengthMismatch { found: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    match ReduceScratch::<f32>::with_max_blocks(&stream, 0) {
        Err(Error::InvalidLaunch(message)) => assert!(message.contains("between 1"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// Runs without a GPU: every instantiation the module launches compiles with NVRTC, without a
/// warning, for sm_80 and sm_90, checked and unchecked.
#[test]
fn every_instantiation_compiles_with_nvrtc() {
    let all = instantiations();
    // Three ops for each of f32, i32, u32 and f64, and the two 16-bit sums.
    assert_eq!(all.len(), 14);
    common::assert_instantiations_compile(&all);
}
