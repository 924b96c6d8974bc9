//! The opt-in TF32 GEMM (`Gemm::allow_tf32`) on the CPU backend and on the GPU when there is
//! one: every transpose combination, tails of m, n and k, several blocks and more k-tiles than
//! stages, alpha and beta, shapes the TF32 kernel cannot take (which stay exact `f32`), and the
//! default staying exact `f32`. Each element of C is compared with an f64 product, of the
//! TF32-truncated inputs with a tight bound where the TF32 kernel runs, and of the inputs as
//! given with the documented looser bound. First, one `wgmma_m64n8k8_tf32` on its own.

use gpu_dsl_kernels::gemm::{gemm, Gemm, Transpose};
use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::cpu::to_tf32;
use gpu_dsl_runtime::{test_device, Backend, Block, DeviceBuffer, Gpu, Grid, LaunchConfig, Stream};

/// Deterministic uniform values in [-1, 1) with all 24 bits of precision used, so that TF32
/// truncation changes almost every one of them.
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

/// The CPU backend, and the GPU when the test machine has one.
fn devices() -> Vec<Gpu> {
    let device = test_device();
    if device.backend() == Backend::Cpu {
        vec![device]
    } else {
        vec![Gpu::cpu(), device]
    }
}

/// The row strides of A and B as stored.
fn strides(spec: &Gemm) -> (usize, usize) {
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
    (lda, ldb)
}

/// Whether `gemm` runs `spec` on the TF32 kernel on `gpu`: asked for, on Hopper or the CPU
/// backend, rows of A and B 16-byte aligned (as `Gemm::allow_tf32` documents).
fn runs_tf32(gpu: &Gpu, spec: &Gemm) -> bool {
    let (lda, ldb) = strides(spec);
    let device = gpu.backend() == Backend::Cpu || gpu.compute_capability() == (9, 0);
    spec.tf32 && device && lda % 4 == 0 && ldb % 4 == 0
}

/// What a run gave, with the f64 references for each element of C.
struct Outcome {
    got: Vec<f32>,
    /// alpha·Σ a·b + beta·c of the inputs as given.
    exact: Vec<f64>,
    /// The same of the TF32-truncated inputs.
    truncated: Vec<f64>,
    /// |alpha|·Σ|a·b| + |beta·c|: the scale of each element's rounding errors.
    scale: Vec<f64>,
    k: usize,
}

/// Runs `spec` on `stream` with random inputs (C's old value NaN when beta is 0, which must
/// not be read) and computes the references.
fn run(stream: &Stream, spec: Gemm, seed: u64) -> Outcome {
    let Gemm { m, n, k, .. } = spec;
    let a = random_f32(m * k, seed);
    let b = random_f32(k * n, seed + 1);
    let c0 = if spec.beta == 0.0 {
        vec![f32::NAN; m * n]
    } else {
        random_f32(m * n, seed + 2)
    };
    let a_at = |i: usize, p: usize| match spec.trans_a {
        Transpose::No => a[i * k + p],
        Transpose::Yes => a[p * m + i],
    };
    let b_at = |p: usize, j: usize| match spec.trans_b {
        Transpose::No => b[p * n + j],
        Transpose::Yes => b[j * k + p],
    };
    let da = DeviceBuffer::from_host(stream, &a).unwrap();
    let db = DeviceBuffer::from_host(stream, &b).unwrap();
    let mut dc = DeviceBuffer::from_host(stream, &c0).unwrap();
    gemm(stream, &spec, &da, &db, &mut dc).unwrap();
    let got = dc.to_host(stream).unwrap();
    let (alpha, beta) = (f64::from(spec.alpha), f64::from(spec.beta));
    let mut outcome = Outcome {
        got,
        exact: Vec::new(),
        truncated: Vec::new(),
        scale: Vec::new(),
        k,
    };
    for i in 0..m {
        for j in 0..n {
            let (mut exact, mut truncated, mut sum_abs) = (0.0f64, 0.0f64, 0.0f64);
            for p in 0..k {
                let (x, y) = (a_at(i, p), b_at(p, j));
                exact += f64::from(x) * f64::from(y);
                truncated += f64::from(to_tf32(x)) * f64::from(to_tf32(y));
                sum_abs += (f64::from(x) * f64::from(y)).abs();
            }
            let old = if beta == 0.0 {
                0.0
            } else {
                beta * f64::from(c0[i * n + j])
            };
            outcome.exact.push(alpha * exact + old);
            outcome.truncated.push(alpha * truncated + old);
            outcome.scale.push(alpha.abs() * sum_abs + old.abs());
        }
    }
    outcome
}

impl Outcome {
    /// The bound on `f32` rounding: the products of TF32 values are exact in `f32`, and the
    /// k additions (plus alpha and beta) round with random signs, far below
    /// `4 ε sqrt(k + 2) · scale`.
    fn f32_bound(&self, at: usize) -> f64 {
        4.0 * f64::from(f32::EPSILON) * ((self.k + 2) as f64).sqrt() * self.scale[at]
    }

    /// Panics naming the first element farther than `bound(at)` from `reference`.
    fn assert_near(&self, what: &str, reference: &[f64], bound: impl Fn(usize) -> f64) {
        for (at, (&got, &expected)) in self.got.iter().zip(reference).enumerate() {
            let error = (f64::from(got) - expected).abs();
            assert!(
                error <= bound(at),
                "{what}: element {at} is {got}, expected {expected} (error {error:e}, bound {:e})",
                bound(at)
            );
        }
    }

    /// Whether some element is farther from the exact product than `f32` rounding explains.
    fn shows_tf32(&self) -> bool {
        (0..self.got.len())
            .any(|at| (f64::from(self.got[at]) - self.exact[at]).abs() > self.f32_bound(at))
    }
}

/// Runs `spec` with TF32 allowed on every device and checks C: on the TF32 kernel, within
/// `f32` rounding of the truncated inputs' product, within the documented `2^-9 Σ|a·b|` of the
/// exact one, and visibly not exact `f32`; elsewhere (a shape the kernel cannot take, a GPU
/// that is not Hopper) within `f32` rounding of the exact product.
fn check(spec: Gemm, seed: u64) {
    let spec = spec.allow_tf32();
    for gpu in devices() {
        let what = format!("{spec:?} on {}", gpu.name());
        let outcome = run(&gpu.default_stream(), spec, seed);
        if runs_tf32(&gpu, &spec) {
            outcome.assert_near(
                &format!("{what}, truncated inputs"),
                &outcome.truncated,
                |at| outcome.f32_bound(at),
            );
            outcome.assert_near(&format!("{what}, exact inputs"), &outcome.exact, |at| {
                2f64.powi(-9) * outcome.scale[at] + outcome.f32_bound(at)
            });
            assert!(
                outcome.shows_tf32(),
                "{what}: exact to f32, so TF32 did not run"
            );
        } else {
            outcome.assert_near(&format!("{what}, f32 path"), &outcome.exact, |at| {
                outcome.f32_bound(at)
            });
        }
    }
}

const TRANSPOSES: [(Transpose, Transpose); 4] = [
    (Transpose::No, Transpose::No),
    (Transpose::No, Transpose::Yes),
    (Transpose::Yes, Transpose::No),
    (Transpose::Yes, Transpose::Yes),
];

fn with(spec: Gemm, (ta, tb): (Transpose, Transpose)) -> Gemm {
    Gemm {
        trans_a: ta,
        trans_b: tb,
        ..spec
    }
}

/// Every layout on one block with tails of m, n and k (132×68×44: rows of 4·k elements).
#[test]
fn every_transpose_with_tails() {
    for (i, t) in TRANSPOSES.into_iter().enumerate() {
        check(with(Gemm::new(132, 68, 44), t), 10 + i as u64);
    }
}

/// Several blocks (3 block rows, 2 block columns) and 7 k-tiles, more than the 4 stages, so
/// the producer refills freed stages; alpha and beta scale the product and the old C.
#[test]
fn several_blocks_and_refilled_stages() {
    let spec = Gemm::new(260, 260, 200).alpha(0.5).beta(1.0);
    check(spec, 20);
    check(with(spec, TRANSPOSES[2]), 21);
}

/// With both operands M- or N-major, nothing bounds k to a multiple of 4: a k tail of one.
#[test]
fn any_k_when_both_operands_are_transposed_in() {
    check(with(Gemm::new(132, 68, 45), TRANSPOSES[2]), 30);
    check(with(Gemm::new(64, 256, 1), TRANSPOSES[2]).beta(-2.0), 31);
}

/// Shapes whose rows are not 16-byte aligned stay on the exact `f32` kernels, whatever the
/// layout; `check` knows which do.
#[test]
fn unaligned_shapes_fall_back_to_f32() {
    for (i, t) in TRANSPOSES.into_iter().enumerate() {
        let seed = 40 + 3 * i as u64;
        check(with(Gemm::new(129, 67, 45), t), seed);
        check(with(Gemm::new(1, 300, 33), t), seed + 1);
        check(
            with(Gemm::new(300, 1, 70), t).alpha(2.0).beta(0.5),
            seed + 2,
        );
    }
}

/// A long k: the error against the exact product grows like `2^-11 sqrt(k)` (random walk),
/// well inside the documented bound, and the TF32 result keeps within `f32` rounding of the
/// truncated inputs' product.
#[test]
fn long_k_stays_within_the_documented_error() {
    check(Gemm::new(64, 64, 1024), 50);
}

/// Without `allow_tf32` the same inputs give exact `f32` results; with it, results that
/// differ from them by more than `f32` rounding: the option is what switches.
#[test]
fn tf32_is_opt_in() {
    for gpu in devices() {
        let stream = gpu.default_stream();
        let spec = Gemm::new(132, 68, 44);
        let strict = run(&stream, spec, 60);
        strict.assert_near("default", &strict.exact, |at| strict.f32_bound(at));
        let fast = run(&stream, spec.allow_tf32(), 60);
        if runs_tf32(&gpu, &spec.allow_tf32()) {
            assert!(fast.shows_tf32(), "allow_tf32 on {}", gpu.name());
        }
    }
}

/// Every layout's kernel is in `gemm::instantiations()` (which the GEMM module's NVRTC test
/// compiles): the three of the transposing kernel and the plain `C = A·B`'s register-fragment
/// kernel. Their sm_90 PTX keeps the accumulators, the transposed blocks and the fragments in
/// registers: no local memory.
#[test]
fn instantiations_compile_without_local_memory() {
    let mut all = gpu_dsl_kernels::gemm::tf32::instantiations();
    assert_eq!(all.len(), 3);
    let plain = gpu_dsl_kernels::all_kernels()
        .into_iter()
        .find(|k| k.name() == "gemm_tf32_rs")
        .expect("gemm_tf32_rs in all_kernels()");
    all.push((plain, Vec::new()));
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
    if !gpu_dsl_runtime::test_nvrtc() {
        return;
    }
    for (kernel, args) in &all {
        let ptx = if args.is_empty() {
            gpu_dsl_runtime::compile_to_ptx(kernel, (9, 0))
        } else {
            gpu_dsl_runtime::compile_to_ptx_generic(kernel, args, (9, 0)).map(|p| p.ptx)
        }
        .unwrap_or_else(|e| panic!("{}{args:?} (sm_90): {e}", kernel.name()));
        assert!(
            !ptx.contains(".local"),
            "{}{args:?} uses local memory",
            kernel.name()
        );
        assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"));
    }
    // The plain product's A operand is four registers in braces after the 128 accumulators.
    let ptx = gpu_dsl_runtime::compile_to_ptx(plain, (9, 0)).unwrap();
    let wgmma = ptx
        .lines()
        .find(|l| l.contains("wgmma.mma_async"))
        .expect("a wgmma in gemm_tf32_rs");
    assert_eq!(wgmma.matches('{').count(), 2, "{wgmma}");
}

/// On a GPU with cuBLAS, cuBLAS's TF32 GEMM (the bench's reference) on the same inputs is
/// within the documented TF32 bound of the exact product, as ours is.
#[test]
fn cublas_tf32_reference_agrees() {
    let gpu = test_device();
    if gpu.backend() != Backend::Cuda {
        return;
    }
    let stream = gpu.default_stream();
    let Ok(blas) = gpu_dsl_runtime::blas::Blas::new(&stream) else {
        return;
    };
    for (i, t) in TRANSPOSES.into_iter().enumerate() {
        let spec = with(Gemm::new(200, 136, 300), t).alpha(0.5).beta(1.0);
        let seed = 70 + i as u64;
        let ours = run(&stream, spec.allow_tf32(), seed);
        let (m, n, k) = (spec.m, spec.n, spec.k);
        let a = DeviceBuffer::from_host(&stream, &random_f32(m * k, seed)).unwrap();
        let b = DeviceBuffer::from_host(&stream, &random_f32(k * n, seed + 1)).unwrap();
        let mut c = DeviceBuffer::from_host(&stream, &random_f32(m * n, seed + 2)).unwrap();
        blas.gemm_tf32_row_major(&(&spec).into(), &a, &b, &mut c)
            .unwrap();
        let theirs = Outcome {
            got: c.to_host(&stream).unwrap(),
            ..ours
        };
        theirs.assert_near(&format!("cuBLAS TF32 {spec:?}"), &theirs.exact, |at| {
            2f64.powi(-9) * theirs.scale[at] + theirs.f32_bound(at)
        });
    }
}

/// One warpgroup's `wgmma_m64n8k8_tf32`: A (64×8, row-major) and B (stored n×k, 8×8) placed
/// K-major in the 128-byte swizzle by ordinary stores, C (64×8) written row-major.
#[kernel(launch_bounds(128, 1))]
fn one_wgmma_tf32(a: &[f32], b: &[f32], c: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let t = thread_idx().x as usize;
    // Row r of an operand: 32 words, k 0..8 in its first two 16-byte chunks, swizzled.
    for e in (t..512).step_by(128) {
        let (row, kk) = (e / 8, e % 8);
        smem[row * 32 + ((kk / 4) ^ (row % 8)) * 4 + kk % 4] = a[e];
    }
    if t < 64 {
        let (row, kk) = (t / 8, t % 8);
        smem[2048 + row * 32 + ((kk / 4) ^ (row % 8)) * 4 + kk % 4] = b[t];
    }
    fence_proxy_async();
    sync_threads();
    let mut acc = [0.0f32; 4];
    wgmma_fence();
    let da = wgmma_desc(smem, 0, 8192, 1024);
    let db = wgmma_desc(smem, 2048, 8192, 1024);
    wgmma_m64n8k8_tf32(&mut acc, smem, da, db, false);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    let row = (t / 32) * 16 + (t % 32) / 4;
    let col = 2 * (t % 4);
    c[row * 8 + col] = acc[0];
    c[row * 8 + col + 1] = acc[1];
    c[(row + 8) * 8 + col] = acc[2];
    c[(row + 8) * 8 + col + 1] = acc[3];
}

/// The intrinsic alone, compiled by NVRTC and run on the CPU backend and a Hopper GPU: each element is the product of
/// the truncated inputs within `f32` rounding, and some are farther from the exact product
/// than that (the low 13 bits of every input were dropped, not rounded in).
#[test]
fn one_wgmma_tf32_multiplies_truncated_inputs() {
    if gpu_dsl_runtime::test_nvrtc() {
        for checked in [false, true] {
            gpu_dsl_runtime::check_with_nvrtc(&one_wgmma_tf32::KERNEL, &[], (9, 0), checked)
                .unwrap();
        }
    }
    let a = random_f32(64 * 8, 80);
    let b = random_f32(8 * 8, 81);
    for gpu in devices() {
        if gpu.backend() == Backend::Cuda && gpu.compute_capability() != (9, 0) {
            continue;
        }
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut dc = DeviceBuffer::<f32>::zeroed(&stream, 64 * 8).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(128)).with_shared_mem(3 * 4096);
        one_wgmma_tf32::launch(&stream, config, &da, &db, &mut dc).unwrap();
        let got = dc.to_host(&stream).unwrap();
        let mut truncation_shows = false;
        for i in 0..64 {
            for j in 0..8 {
                let (mut exact, mut truncated, mut scale) = (0.0f64, 0.0f64, 0.0f64);
                for p in 0..8 {
                    let (x, y) = (a[i * 8 + p], b[j * 8 + p]);
                    exact += f64::from(x) * f64::from(y);
                    truncated += f64::from(to_tf32(x)) * f64::from(to_tf32(y));
                    scale += (f64::from(x) * f64::from(y)).abs();
                }
                let bound = 4.0 * f64::from(f32::EPSILON) * 10f64.sqrt() * scale;
                let value = f64::from(got[i * 8 + j]);
                assert!(
                    (value - truncated).abs() <= bound,
                    "C[{i}][{j}] on {} is {value}, the truncated inputs give {truncated}",
                    gpu.name()
                );
                truncation_shows |= (value - exact).abs() > bound;
            }
        }
        assert!(truncation_shows, "exact to f32 on {}", gpu.name());
    }
}

/// One warpgroup's `wgmma_m64n16k8_tf32_rs`: A (64×8, row-major) read straight into each
/// thread's fragment, B (stored n×k, 16×8) placed K-major in the 128-byte swizzle, C (64×16,
/// row-major) the old accumulators, added to.
#[kernel(launch_bounds(128, 1))]
fn one_wgmma_tf32_rs(a: &[f32], b: &[f32], c: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let t = thread_idx().x as usize;
    // Row r of B: 32 words, k 0..8 in its first two 16-byte chunks, swizzled.
    let (row, kk) = (t / 8, t % 8);
    smem[row * 32 + ((kk / 4) ^ (row % 8)) * 4 + kk % 4] = b[t];
    fence_proxy_async();
    sync_threads();
    // Lane l of warp w: rows 16w + l / 4 and 8 below, k l % 4 and 4 further.
    let r0 = (t / 32) * 16 + (t % 32) / 4;
    let q = t % 4;
    let frag = [
        a[r0 * 8 + q],
        a[(r0 + 8) * 8 + q],
        a[r0 * 8 + q + 4],
        a[(r0 + 8) * 8 + q + 4],
    ];
    let col = 2 * q;
    let mut acc = [0.0f32; 8];
    for j in 0..2 {
        acc[4 * j] = c[r0 * 16 + 8 * j + col];
        acc[4 * j + 1] = c[r0 * 16 + 8 * j + col + 1];
        acc[4 * j + 2] = c[(r0 + 8) * 16 + 8 * j + col];
        acc[4 * j + 3] = c[(r0 + 8) * 16 + 8 * j + col + 1];
    }
    wgmma_fence();
    let db = wgmma_desc(smem, 0, 8192, 1024);
    wgmma_m64n16k8_tf32_rs(&mut acc, frag, smem, db, true);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    for j in 0..2 {
        c[r0 * 16 + 8 * j + col] = acc[4 * j];
        c[r0 * 16 + 8 * j + col + 1] = acc[4 * j + 1];
        c[(r0 + 8) * 16 + 8 * j + col] = acc[4 * j + 2];
        c[(r0 + 8) * 16 + 8 * j + col + 1] = acc[4 * j + 3];
    }
}

/// The register form alone, compiled by NVRTC and run on the CPU backend and a Hopper GPU:
/// each element is the old value plus the product of the truncated inputs within `f32`
/// rounding, so every fragment register landed on its row and k.
#[test]
fn one_wgmma_tf32_rs_multiplies_register_fragments() {
    if gpu_dsl_runtime::test_nvrtc() {
        for checked in [false, true] {
            gpu_dsl_runtime::check_with_nvrtc(&one_wgmma_tf32_rs::KERNEL, &[], (9, 0), checked)
                .unwrap();
        }
    }
    let a = random_f32(64 * 8, 90);
    let b = random_f32(16 * 8, 91);
    let c0 = random_f32(64 * 16, 92);
    for gpu in devices() {
        if gpu.backend() == Backend::Cuda && gpu.compute_capability() != (9, 0) {
            continue;
        }
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut dc = DeviceBuffer::from_host(&stream, &c0).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(128)).with_shared_mem(2 * 4096);
        one_wgmma_tf32_rs::launch(&stream, config, &da, &db, &mut dc).unwrap();
        let got = dc.to_host(&stream).unwrap();
        for i in 0..64 {
            for j in 0..16 {
                let (mut truncated, mut scale) = (f64::from(c0[i * 16 + j]), 0.0f64);
                for p in 0..8 {
                    let (x, y) = (a[i * 8 + p], b[j * 8 + p]);
                    truncated += f64::from(to_tf32(x)) * f64::from(to_tf32(y));
                    scale += (f64::from(x) * f64::from(y)).abs();
                }
                let bound = 4.0 * f64::from(f32::EPSILON) * 10f64.sqrt() * (scale + 1.0);
                let value = f64::from(got[i * 16 + j]);
                assert!(
                    (value - truncated).abs() <= bound,
                    "C[{i}][{j}] on {} is {value}, the truncated inputs give {truncated}",
                    gpu.name()
                );
            }
        }
    }
}
