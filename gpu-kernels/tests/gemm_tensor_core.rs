//! The tensor-core GEMM on whichever backend exists, against an f64 product of the same
//! 16-bit inputs: every transpose combination, sizes off the tile grid, alpha and beta, k = 0,
//! bad lengths, and every instantiation compiling without local memory.

use gpu_dsl_kernels::gemm::tensor_core::{
    self, gemm_bf16_on, gemm_f16, gemm_f16_on, instantiations, Instructions,
};
use gpu_dsl_kernels::gemm::{Gemm, Transpose};
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{
    compile_to_ptx_generic, test_device, test_nvrtc, Backend, DeviceBuffer, Error, Gpu, Stream,
};

/// Deterministic uniform values in [-1, 1), so failures reproduce.
fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

const TRANSPOSES: [(Transpose, Transpose); 4] = [
    (Transpose::No, Transpose::No),
    (Transpose::No, Transpose::Yes),
    (Transpose::Yes, Transpose::No),
    (Transpose::Yes, Transpose::Yes),
];

/// The 16-bit types, as the tests need them.
trait Input: gpu_dsl_runtime::Scalar {
    fn round(x: f32) -> Self;
    fn wide(self) -> f64;
    fn gemm(
        stream: &Stream,
        spec: &Gemm,
        on: Instructions,
        a: &DeviceBuffer<Self>,
        b: &DeviceBuffer<Self>,
        c: &mut DeviceBuffer<f32>,
    ) -> gpu_dsl_runtime::Result<()>;
}

macro_rules! input {
    ($ty:ident, $gemm:ident) => {
        impl Input for $ty {
            fn round(x: f32) -> Self {
                $ty::from_f32(x)
            }
            fn wide(self) -> f64 {
                self.to_f64()
            }
            fn gemm(
                stream: &Stream,
                spec: &Gemm,
                on: Instructions,
                a: &DeviceBuffer<Self>,
                b: &DeviceBuffer<Self>,
                c: &mut DeviceBuffer<f32>,
            ) -> gpu_dsl_runtime::Result<()> {
                $gemm(stream, spec, on, a, b, c)
            }
        }
    };
}

input!(f16, gemm_f16_on);
input!(bf16, gemm_bf16_on);

fn spec(m: usize, n: usize, k: usize, t: (Transpose, Transpose), alpha: f32, beta: f32) -> Gemm {
    Gemm {
        m,
        n,
        k,
        trans_a: t.0,
        trans_b: t.1,
        alpha,
        beta,
        tf32: false,
    }
}

/// The instruction sets this device runs `spec` on: `mma.sync` everywhere, `wgmma` on Hopper
/// and on the CPU backend when every row of A and B is a multiple of 8 elements.
fn instruction_sets(gpu: &Gpu, spec: &Gemm) -> Vec<Instructions> {
    let lda = if spec.trans_a == Transpose::Yes {
        spec.m
    } else {
        spec.k
    };
    let ldb = if spec.trans_b == Transpose::Yes {
        spec.k
    } else {
        spec.n
    };
    let hopper = gpu.compute_capability() == (9, 0);
    if (gpu.backend() == Backend::Cpu || hopper) && lda % 8 == 0 && ldb % 8 == 0 {
        vec![Instructions::MmaSync, Instructions::Wgmma]
    } else {
        vec![Instructions::MmaSync]
    }
}

/// Runs `spec` on every instruction set of the device (see [`check_on`]).
fn check<T: Input>(stream: &Stream, spec: Gemm, seed: u64) {
    for on in instruction_sets(stream.gpu(), &spec) {
        check_on::<T>(stream, spec, on, seed);
    }
}

/// Runs `spec` on random inputs and compares every element of C with an f64 reference.
///
/// The tensor cores multiply the 16-bit inputs exactly and add in f32, about k/16 + 16
/// roundings along each sum; with random signs the errors cancel as a random walk, so they stay
/// far below `4 ε sqrt(k) Σ|a b|` (ε the f32 epsilon), while a misplaced fragment or a dropped
/// tile is off by a sizeable fraction of `Σ|a b|`.
fn check_on<T: Input>(stream: &Stream, spec: Gemm, on: Instructions, seed: u64) {
    let Gemm { m, n, k, .. } = spec;
    let a: Vec<T> = random_f32(m * k, seed).into_iter().map(T::round).collect();
    let b: Vec<T> = random_f32(k * n, seed + 1)
        .into_iter()
        .map(T::round)
        .collect();
    let c0 = random_f32(m * n, seed + 2);
    let a_at = |i: usize, p: usize| match spec.trans_a {
        Transpose::No => a[i * k + p].wide(),
        Transpose::Yes => a[p * m + i].wide(),
    };
    let b_at = |p: usize, j: usize| match spec.trans_b {
        Transpose::No => b[p * n + j].wide(),
        Transpose::Yes => b[j * k + p].wide(),
    };
    let da = DeviceBuffer::from_host(stream, &a).unwrap();
    let db = DeviceBuffer::from_host(stream, &b).unwrap();
    let mut dc = DeviceBuffer::from_host(stream, &c0).unwrap();
    T::gemm(stream, &spec, on, &da, &db, &mut dc).unwrap();
    let got = dc.to_host(stream).unwrap();
    for i in 0..m {
        for j in 0..n {
            let (mut sum, mut sum_abs) = (0.0f64, 0.0f64);
            for p in 0..k {
                let product = a_at(i, p) * b_at(p, j);
                sum += product;
                sum_abs += product.abs();
            }
            let beta_c = f64::from(spec.beta) * f64::from(c0[i * n + j]);
            let expected = f64::from(spec.alpha) * sum + beta_c;
            let tolerance = 4.0
                * f64::from(f32::EPSILON)
                * (k as f64).sqrt().max(1.0)
                * (f64::from(spec.alpha.abs()) * sum_abs + beta_c.abs())
                + 1e-30;
            let error = (f64::from(got[i * n + j]) - expected).abs();
            assert!(
                error <= tolerance,
                "{spec:?} on {on:?}: C[{i}][{j}] = {} but expected {expected} (error {error:e} > {tolerance:e})",
                got[i * n + j]
            );
        }
    }
}

/// Every layout of both types on one shape that needs the padding copy for the operands whose
/// contiguous dimension (17 or 19) is not a multiple of 8 and reads the others in place (k = 24,
/// a partial k tile).
#[test]
fn every_layout_matches_the_f64_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for (index, t) in TRANSPOSES.into_iter().enumerate() {
        check::<f16>(&stream, spec(17, 19, 24, t, 1.0, 0.0), index as u64);
        check::<bf16>(&stream, spec(17, 19, 24, t, 1.0, 0.0), index as u64 + 10);
    }
}

/// Sizes around and off the 128×256×64 tile (several blocks each way, partial tiles, 1 and odd
/// sizes, more k tiles than pipeline stages), each in a different layout; on a GPU every size in
/// every layout, up to 1000 and 4097.
#[test]
fn odd_sizes_match_the_f64_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let on_gpu = gpu.backend() == Backend::Cuda;
    let mut shapes = vec![
        (1, 1, 1),
        (17, 17, 17),
        (127, 33, 40),
        (130, 264, 24),
        (9, 10, 300),
        // Rows of multiples of 8 (wgmma), every dimension off the tile grid.
        (200, 520, 136),
    ];
    if on_gpu {
        shapes.extend([
            (127, 127, 127),
            (1000, 1000, 1000),
            (1000, 17, 1),
            (256, 512, 64),
            (4097, 300, 72),
            // More 128×256 tiles (9 × 17) than an H100 has multiprocessors: blocks of the
            // Hopper kernel take several each.
            (1100, 4100, 72),
        ]);
    }
    for (index, (m, n, k)) in shapes.into_iter().enumerate() {
        let layouts = if on_gpu {
            &TRANSPOSES[..]
        } else {
            &TRANSPOSES[index % 4..index % 4 + 1]
        };
        for &t in layouts {
            // The CPU backend alternates the types, to keep its run short.
            if on_gpu || index % 2 == 0 {
                check::<f16>(&stream, spec(m, n, k, t, 1.0, 0.0), index as u64 * 10 + 100);
            }
            if on_gpu || index % 2 == 1 {
                check::<bf16>(&stream, spec(m, n, k, t, 1.0, 0.0), index as u64 * 10 + 105);
            }
        }
    }
}

#[test]
fn alpha_and_beta_scale_the_product_and_c() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for (index, t) in TRANSPOSES.into_iter().enumerate() {
        if index % 2 == 0 {
            check::<f16>(&stream, spec(40, 70, 24, t, 1.5, -0.5), 200);
        } else {
            check::<bf16>(&stream, spec(40, 70, 24, t, -2.0, 0.25), 300);
        }
    }
}

#[test]
fn big_sizes_on_a_gpu() {
    let gpu = test_device();
    if gpu.backend() != Backend::Cuda {
        return;
    }
    let stream = gpu.default_stream();
    check::<f16>(&stream, spec(4097, 4097, 256, TRANSPOSES[0], 1.0, 1.0), 400);
    check::<bf16>(&stream, spec(300, 257, 4097, TRANSPOSES[2], 1.0, 0.0), 500);
}

#[test]
fn beta_zero_ignores_nan_in_c_and_k_zero_scales_c() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let a = DeviceBuffer::from_host(&stream, &[f16::ONE; 64]).unwrap();
    let b = DeviceBuffer::from_host(&stream, &[f16::ONE; 64]).unwrap();
    let empty = DeviceBuffer::<f16>::zeroed(&stream, 0).unwrap();
    let product = spec(8, 8, 8, TRANSPOSES[0], 2.0, 0.0);
    for on in instruction_sets(&gpu, &product) {
        let mut c = DeviceBuffer::from_host(&stream, &[f32::NAN; 64]).unwrap();
        gemm_f16_on(&stream, &product, on, &a, &b, &mut c).unwrap();
        assert_eq!(c.to_host(&stream).unwrap(), vec![16.0; 64], "{on:?}");
        let mut c = DeviceBuffer::from_host(&stream, &[1.0f32, -2.0, 3.0, 4.5]).unwrap();
        let scale = spec(2, 2, 0, TRANSPOSES[3], 7.0, 2.0);
        gemm_f16_on(&stream, &scale, on, &empty, &empty, &mut c).unwrap();
        assert_eq!(c.to_host(&stream).unwrap(), vec![2.0, -4.0, 6.0, 9.0]);
        let clear = spec(2, 2, 0, TRANSPOSES[0], 7.0, 0.0);
        gemm_f16_on(&stream, &clear, on, &empty, &empty, &mut c).unwrap();
        assert_eq!(c.to_host(&stream).unwrap(), vec![0.0; 4]);
    }
    // The default runs any shape; wgmma asked for rows off 16 bytes is an error.
    let six = DeviceBuffer::from_host(&stream, &[f16::ONE; 6]).unwrap();
    let mut c = DeviceBuffer::from_host(&stream, &[f32::NAN; 4]).unwrap();
    let odd = spec(2, 2, 3, TRANSPOSES[1], 1.0, 0.0);
    gemm_f16(&stream, &odd, &six, &six, &mut c).unwrap();
    assert_eq!(c.to_host(&stream).unwrap(), vec![3.0; 4]);
    let refused = gemm_f16_on(&stream, &odd, Instructions::Wgmma, &six, &six, &mut c);
    assert!(
        matches!(refused, Err(Error::InvalidLaunch(_))),
        "{refused:?}"
    );
}

#[test]
fn wrong_lengths_are_errors() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let a = DeviceBuffer::<bf16>::zeroed(&stream, 6).unwrap();
    let b = DeviceBuffer::<bf16>::zeroed(&stream, 5).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let err = gemm_bf16_on(
        &stream,
        &spec(2, 2, 3, TRANSPOSES[1], 1.0, 0.0),
        Instructions::Auto,
        &a,
        &b,
        &mut c,
    );
    assert!(
        matches!(
            err,
            Err(Error::LengthMismatch {
                expected: 6,
                found: 5,
                ..
            })
        ),
        "{err:?}"
    );
    let huge = spec(usize::MAX, 2, 3, TRANSPOSES[0], 1.0, 0.0);
    assert!(gemm_bf16_on(&stream, &huge, Instructions::Wgmma, &a, &a, &mut c).is_err());
}

/// The unchecked sm_90 PTX of every instantiation keeps the accumulators and fragments in
/// registers: no local memory. (The GEMM module's NVRTC test compiles each for sm_80 and sm_90,
/// checked and unchecked.)
#[test]
fn no_instantiation_uses_local_memory() {
    let all = instantiations();
    assert_eq!(all.len(), 24);
    let module: Vec<String> = gpu_dsl_kernels::gemm::instantiations()
        .iter()
        .map(|(k, args)| format!("{}{args:?}", k.name()))
        .collect();
    for (kernel, args) in &all {
        let name = format!("{}{args:?}", kernel.name());
        assert!(
            module.contains(&name),
            "{name} missing from gemm::instantiations()"
        );
    }
    let listed: Vec<&str> = gpu_dsl_kernels::all_kernels()
        .iter()
        .map(|k| k.name())
        .collect();
    for kernel in tensor_core::KERNELS {
        assert!(listed.contains(&kernel.name()), "{}", kernel.name());
    }
    if !test_nvrtc() {
        return;
    }
    for (kernel, args) in &all {
        let ptx = compile_to_ptx_generic(kernel, args, (9, 0))
            .unwrap_or_else(|e| panic!("{}{args:?} (sm_90): {e}", kernel.name()))
            .ptx;
        assert!(
            !ptx.contains(".local"),
            "{}{args:?} uses local memory",
            kernel.name()
        );
    }
}
