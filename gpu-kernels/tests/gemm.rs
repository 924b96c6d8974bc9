//! GEMM on whichever backend exists, against an f64 reference on the CPU: every transpose
//! combination, alpha and beta, both tile configurations, shapes that do not divide the tiles,
//! empty dimensions, wrong buffer lengths, the 16-bit inputs, and NVRTC compiling the kernels.

mod common;

use gpu_dsl_kernels::gemm::{gemm, gemm_f32_with_tiles, instantiations, Gemm, Tiles, Transpose};
use gpu_dsl_runtime::blas::Blas;
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{test_device, Backend, DeviceBuffer, Error, Stream};

/// Deterministic xorshift64 values uniform in [-1, 1), so failures reproduce.
fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

/// op(X)[i][p] of a row-major matrix stored `rows`×`cols` as used, or transposed.
fn element(x: &[f32], trans: Transpose, rows: usize, cols: usize, i: usize, p: usize) -> f64 {
    match trans {
        Transpose::No => x[i * cols + p] as f64,
        Transpose::Yes => x[p * rows + i] as f64,
    }
}

/// Checks `got` (C after the GEMM) element by element against `alpha·op(A)·op(B) + beta·C0`
/// computed in f64. Each element may be off by the worst-case error of an f32 dot product of
/// length k, 2(k + 2)·ε·(|alpha|·Σ|a·b| + |beta·c|): a dropped, repeated or misplaced term is
/// about Σ|a·b| / k for random data, well above it.
fn check(spec: &Gemm, a: &[f32], b: &[f32], c0: &[f32], got: &[f32], what: &str) {
    let (m, n, k) = (spec.m, spec.n, spec.k);
    assert_eq!(got.len(), m * n, "{what}");
    for i in 0..m {
        for j in 0..n {
            let (mut dot, mut magnitude) = (0.0f64, 0.0f64);
            for p in 0..k {
                let product =
                    element(a, spec.trans_a, m, k, i, p) * element(b, spec.trans_b, k, n, p, j);
                dot += product;
                magnitude += product.abs();
            }
            let old = if spec.beta == 0.0 {
                0.0
            } else {
                spec.beta as f64 * c0[i * n + j] as f64
            };
            let expected = spec.alpha as f64 * dot + old;
            let bound = 2.0
                * (k + 2) as f64
                * f32::EPSILON as f64
                * (spec.alpha.abs() as f64 * magnitude + old.abs())
                + 1e-30;
            let g = got[i * n + j] as f64;
            assert!(
                (g - expected).abs() <= bound,
                "{what} {spec:?}: C[{i}][{j}] = {g}, expected {expected} (bound {bound:e})"
            );
        }
    }
}

/// Runs `spec` on random A, B and C with the given tiles and checks the result.
fn run_and_check(stream: &Stream, spec: &Gemm, tiles: Tiles, seed: u64) {
    let a_host = random(spec.m * spec.k, seed);
    let b_host = random(spec.k * spec.n, seed + 1);
    let c_host = random(spec.m * spec.n, seed + 2);
    let a = DeviceBuffer::from_host(stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(stream, &b_host).unwrap();
    let mut c = DeviceBuffer::from_host(stream, &c_host).unwrap();
    gemm_f32_with_tiles(stream, spec, &a, &b, &mut c, tiles).unwrap();
    let got = c.to_host(stream).unwrap();
    check(spec, &a_host, &b_host, &c_host, &got, &format!("{tiles:?}"));
}

/// Every shape with every transpose on the given tiles; shape `s` uses seeds from
/// `first_seed + 10·s`.
fn check_every_transpose(
    stream: &Stream,
    shapes: &[(usize, usize, usize)],
    tiles: Tiles,
    first_seed: u64,
) {
    for (s, &(m, n, k)) in shapes.iter().enumerate() {
        for spec in transposes(Gemm::new(m, n, k)) {
            run_and_check(stream, &spec, tiles, first_seed + 10 * s as u64);
        }
    }
}

/// The four combinations of transposes applied to `spec`.
fn transposes(spec: Gemm) -> [Gemm; 4] {
    [
        spec,
        spec.trans_a(),
        spec.trans_b(),
        spec.trans_a().trans_b(),
    ]
}

#[test]
fn small_tiles_match_the_reference_for_every_transpose() {
    let stream = test_device().default_stream();
    // Below, at and across the 32×32 tile and the 32-wide k-tile; multiples of 4 and not.
    let shapes = [
        (1, 1, 1),
        (17, 33, 65),
        (32, 32, 32),
        (64, 10, 128),
        (33, 31, 1),
        (5, 127, 40),
        (70, 3, 100),
    ];
    check_every_transpose(&stream, &shapes, Tiles::Small, 0);
}

#[test]
fn large_tiles_match_the_reference_for_every_transpose() {
    let stream = test_device().default_stream();
    // One full 128×128 tile with aligned rows (16-byte loads), then edges of every kind: partial
    // tiles, k not a multiple of the k-tile, k-tiles enough to go round the ring of buffers
    // twice, and odd leading dimensions that force the scalar loads.
    let shapes = [
        (128, 128, 16),
        (132, 136, 12),
        (136, 260, 100),
        (131, 129, 101),
        (129, 130, 17),
        (1, 127, 9),
        (17, 1, 3),
        // Nine block columns: a second group of tiles, grouped along rows or columns.
        (130, 1100, 20),
    ];
    check_every_transpose(&stream, &shapes, Tiles::Large, 100);
}

/// Small tiles with k split in slices whose partial products are summed afterwards: slices
/// that end inside a k-tile, a last slice shorter than the others, alpha and beta.
#[test]
fn split_k_matches_the_reference_for_every_transpose() {
    let stream = test_device().default_stream();
    let shapes = [(40, 33, 700), (5, 7, 256), (33, 2, 300)];
    for (s, (m, n, k)) in shapes.into_iter().enumerate() {
        for spec in transposes(Gemm::new(m, n, k).alpha(0.5).beta(-1.5)) {
            run_and_check(&stream, &spec, Tiles::SmallSplitK, 300 + 10 * s as u64);
        }
    }
    // Too short to split: one slice, the plain kernel.
    run_and_check(&stream, &Gemm::new(9, 9, 100), Tiles::SmallSplitK, 399);
}

#[test]
fn medium_tiles_match_the_reference_for_every_transpose() {
    let stream = test_device().default_stream();
    // As for the large tiles, around the 64×64 tile.
    let shapes = [
        (64, 64, 16),
        (68, 72, 12),
        (65, 66, 17),
        (1, 63, 9),
        (17, 1, 3),
    ];
    check_every_transpose(&stream, &shapes, Tiles::Medium, 200);
}

#[test]
fn alpha_and_beta_scale_the_product_and_the_old_c() {
    let stream = test_device().default_stream();
    for tiles in [Tiles::Small, Tiles::Medium, Tiles::Large] {
        for (alpha, beta) in [(2.5, 0.0), (1.0, 1.0), (-0.5, 0.75), (1.0, -2.0)] {
            for spec in transposes(Gemm::new(36, 40, 24).alpha(alpha).beta(beta)) {
                run_and_check(&stream, &spec, tiles, 7);
            }
            // Odd n: the scalar read-modify-write of C.
            run_and_check(
                &stream,
                &Gemm::new(9, 13, 5).alpha(alpha).beta(beta),
                tiles,
                8,
            );
        }
    }
}

/// Sizes in the thousands, where the automatic choice and the grid matter; on the CPU backend
/// only a thin slice of them, to keep the test fast.
#[test]
fn odd_sizes_in_the_thousands() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let shapes: &[(usize, usize, usize)] = if gpu.backend() == Backend::Cuda {
        &[
            (1000, 1000, 1000),
            (4097, 260, 129),
            (257, 4097, 31),
            (300, 200, 4097),
        ]
    } else {
        &[(1000, 3, 17), (2, 1000, 9), (3, 5, 1000)]
    };
    for (s, &(m, n, k)) in shapes.iter().enumerate() {
        for spec in transposes(Gemm::new(m, n, k).beta(0.5)) {
            run_and_check(&stream, &spec, Tiles::Auto, 1000 + s as u64);
        }
    }
}

/// The MNIST MLP's shapes (batch 64), through the public entry point.
#[test]
fn mlp_shapes() {
    let stream = test_device().default_stream();
    let specs = [
        Gemm::new(64, 128, 784),
        Gemm::new(64, 10, 128),
        Gemm::new(784, 128, 64).trans_a(),
        Gemm::new(64, 128, 10).trans_b(),
    ];
    for (s, spec) in specs.into_iter().enumerate() {
        run_and_check(&stream, &spec, Tiles::Auto, 2000 + s as u64);
    }
}

#[test]
fn empty_dimensions() {
    let stream = test_device().default_stream();
    // m or n zero: nothing to do, nothing read.
    for (m, n, k) in [(0, 5, 3), (4, 0, 3), (0, 0, 0)] {
        let a = DeviceBuffer::<f32>::zeroed(&stream, m * k).unwrap();
        let b = DeviceBuffer::<f32>::zeroed(&stream, k * n).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, m * n).unwrap();
        gemm(&stream, &Gemm::new(m, n, k), &a, &b, &mut c).unwrap();
        assert!(c.to_host(&stream).unwrap().is_empty());
    }
    // k zero: C = beta·C, and beta = 0 overwrites even NaN.
    let a = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    let b = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    let mut c = DeviceBuffer::from_host(&stream, &[1.0f32, -2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    gemm(&stream, &Gemm::new(2, 3, 0).beta(0.5), &a, &b, &mut c).unwrap();
    assert_eq!(c.to_host(&stream).unwrap(), [0.5, -1.0, 1.5, 2.0, 2.5, 3.0]);
    c.copy_from_host(&stream, &[f32::NAN; 6]).unwrap();
    gemm(&stream, &Gemm::new(2, 3, 0), &a, &b, &mut c).unwrap();
    assert_eq!(c.to_host(&stream).unwrap(), [0.0; 6]);
}

/// With beta = 0, C is written without being read, so NaN in it does not leak into the result.
#[test]
fn beta_zero_does_not_read_c() {
    let stream = test_device().default_stream();
    for tiles in [Tiles::Small, Tiles::Medium, Tiles::Large] {
        for (m, n, k) in [(8, 8, 8), (7, 9, 3)] {
            let a = DeviceBuffer::from_host(&stream, &vec![1.0f32; m * k]).unwrap();
            let b = DeviceBuffer::from_host(&stream, &vec![2.0f32; k * n]).unwrap();
            let mut c = DeviceBuffer::from_host(&stream, &vec![f32::NAN; m * n]).unwrap();
            gemm_f32_with_tiles(&stream, &Gemm::new(m, n, k), &a, &b, &mut c, tiles).unwrap();
            let expected = vec![2.0 * k as f32; m * n];
            assert_eq!(
                c.to_host(&stream).unwrap(),
                expected,
                "{tiles:?} {m}x{n}x{k}"
            );
        }
    }
}

#[test]
fn wrong_lengths_are_errors() {
    let stream = test_device().default_stream();
    let buffer = |len| DeviceBuffer::<f32>::zeroed(&stream, len).unwrap();
    let spec = Gemm::new(3, 4, 5);
    let cases = [
        (buffer(14), buffer(20), buffer(12), "A", 15, 14),
        (buffer(15), buffer(21), buffer(12), "B", 20, 21),
        (buffer(15), buffer(20), buffer(0), "C", 12, 0),
    ];
    for (a, b, mut c, what, expected_len, found_len) in cases {
        match gemm(&stream, &spec, &a, &b, &mut c) {
            Err(Error::LengthMismatch {
                what: message,
                expected,
                found,
            }) => {
                assert!(message.contains(what), "{message}");
                assert_eq!((expected, found), (expected_len, found_len), "{message}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    // The transposed shapes hold as many elements: the same buffers fit.
    let (a, b, mut c) = (buffer(15), buffer(20), buffer(12));
    gemm(&stream, &spec.trans_a().trans_b(), &a, &b, &mut c).unwrap();
    // A shape whose element count overflows is an error, not a panic.
    let huge = Gemm::new(usize::MAX, 2, 2);
    assert!(matches!(
        gemm(&stream, &huge, &a, &b, &mut c),
        Err(Error::InvalidLaunch(_))
    ));
}

/// The 16-bit inputs, against the same reference computed from their f32 values.
#[test]
fn half_precision_inputs() {
    let stream = test_device().default_stream();
    for spec in transposes(Gemm::new(19, 21, 35).alpha(0.5).beta(1.5)) {
        let a32: Vec<f32> = random(spec.m * spec.k, 5)
            .iter()
            .map(|v| f16::from_f32(*v).to_f32())
            .collect();
        let b32: Vec<f32> = random(spec.k * spec.n, 6)
            .iter()
            .map(|v| f16::from_f32(*v).to_f32())
            .collect();
        let c0 = random(spec.m * spec.n, 7);
        let a: Vec<f16> = a32.iter().map(|v| f16::from_f32(*v)).collect();
        let b: Vec<f16> = b32.iter().map(|v| f16::from_f32(*v)).collect();
        let (a, b) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut c = DeviceBuffer::from_host(&stream, &c0).unwrap();
        gemm(&stream, &spec, &a, &b, &mut c).unwrap();
        check(&spec, &a32, &b32, &c0, &c.to_host(&stream).unwrap(), "f16");

        // bf16 values are exact in f32 as well.
        let a32: Vec<f32> = a32.iter().map(|v| bf16::from_f32(*v).to_f32()).collect();
        let b32: Vec<f32> = b32.iter().map(|v| bf16::from_f32(*v).to_f32()).collect();
        let a: Vec<bf16> = a32.iter().map(|v| bf16::from_f32(*v)).collect();
        let b: Vec<bf16> = b32.iter().map(|v| bf16::from_f32(*v)).collect();
        let (a, b) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut c = DeviceBuffer::from_host(&stream, &c0).unwrap();
        gemm(&stream, &spec, &a, &b, &mut c).unwrap();
        check(&spec, &a32, &b32, &c0, &c.to_host(&stream).unwrap(), "bf16");
    }
}

/// cuBLAS through the runtime's row-major wrapper gives what the reference does, for every
/// transpose: checks the wrapper's operand swap. Without a GPU, the wrapper refuses.
#[test]
fn cublas_reference_agrees() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let blas = match Blas::new(&stream) {
        Ok(blas) => blas,
        Err(Error::CudaOnly { .. }) => {
            assert_eq!(gpu.backend(), Backend::Cpu);
            return;
        }
        Err(Error::NoCublas) => {
            eprintln!("cublas_reference_agrees: skipped: cuBLAS not found");
            return;
        }
        Err(other) => panic!("{other}"),
    };
    for spec in transposes(Gemm::new(67, 45, 33).alpha(1.5).beta(-0.5)) {
        let a_host = random(spec.m * spec.k, 40);
        let b_host = random(spec.k * spec.n, 41);
        let c_host = random(spec.m * spec.n, 42);
        let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let mut c = DeviceBuffer::from_host(&stream, &c_host).unwrap();
        blas.sgemm_row_major(&(&spec).into(), &a, &b, &mut c)
            .unwrap();
        check(
            &spec,
            &a_host,
            &b_host,
            &c_host,
            &c.to_host(&stream).unwrap(),
            "sgemm",
        );
        let mut c = DeviceBuffer::from_host(&stream, &c_host).unwrap();
        blas.gemm_ex_row_major(&(&spec).into(), &a, &b, &mut c)
            .unwrap();
        check(
            &spec,
            &a_host,
            &b_host,
            &c_host,
            &c.to_host(&stream).unwrap(),
            "gemm_ex",
        );
    }
}

/// Runs without a GPU: every GEMM kernel instantiation compiles with NVRTC, without a warning,
/// for sm_80 and sm_90, checked and unchecked.
#[test]
fn gemm_kernels_compile_with_nvrtc() {
    let all = instantiations();
    // The 128×128 and 64×64 kernels for each of the four transpose combinations, the 32×32
    // kernel, the 16-bit kernels (each transpose combination) with their padding copies and the
    // beta-only scaling.
    assert!(all.len() >= 12, "{}", all.len());
    common::assert_instantiations_compile(&all);
}

/// A split-k shape reuses its scratch across calls, with the same result as a fresh one.
#[test]
fn scratch_is_reused_across_calls() {
    use gpu_dsl_kernels::gemm::{gemm, gemm_with_scratch, Gemm, GemmScratch};
    let gpu = gpu_dsl_runtime::test_device();
    let stream = gpu.default_stream();
    // Few tiles of C and a long k: the shape the small configuration splits.
    let (m, n, k) = (8, 8, 1024);
    let values = |len: usize, seed: usize| -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 37 + seed * 11) % 17) as f32 / 17.0 - 0.5)
            .collect()
    };
    let a = gpu_dsl_runtime::DeviceBuffer::from_host(&stream, &values(m * k, 1)).unwrap();
    let b = gpu_dsl_runtime::DeviceBuffer::from_host(&stream, &values(k * n, 2)).unwrap();
    let spec = Gemm::new(m, n, k);
    let mut expected = gpu_dsl_runtime::DeviceBuffer::zeroed(&stream, m * n).unwrap();
    gemm(&stream, &spec, &a, &b, &mut expected).unwrap();
    let expected = expected.to_host(&stream).unwrap();
    let mut scratch = GemmScratch::new();
    for _ in 0..3 {
        let mut c = gpu_dsl_runtime::DeviceBuffer::zeroed(&stream, m * n).unwrap();
        gemm_with_scratch(&stream, &spec, &a, &b, &mut c, &mut scratch).unwrap();
        assert_eq!(c.to_host(&stream).unwrap(), expected);
    }
}
