//! Every public entry point of the kernel library under the CPU backend's race checker: one
//! small case each, on shapes that take several blocks and partial tiles (and, for reductions
//! and scans, the cross-block paths), must run without a report and give the same bits as on
//! the plain CPU backend. A planted race on the same device shows the checker is on.

use gpu_dsl_kernels::gemm::tensor_core::{self, Instructions};
use gpu_dsl_kernels::gemm::{self, Gemm, GemmScratch, Tiles};
use gpu_dsl_kernels::mlp::{self, Adam, StepState};
use gpu_dsl_kernels::reduce::{self, ReduceOp, ReduceScratch, Reducible};
use gpu_dsl_kernels::scan::{self, ScanIdentity, ScanKind, ScanOp, ScanScratch, TILE};
use gpu_dsl_kernels::stencil::{self, Boundary, Weights, Weights1d};
use gpu_dsl_kernels::{elementwise, map};
use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{
    check_with_nvrtc, test_nvrtc, Block, DeviceBuffer, Error, Gpu, Grid, LaunchConfig, Result,
    Scalar, Stream,
};

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
fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    random_words(n, seed)
        .iter()
        .map(|w| (w >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0)
        .collect()
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    random_words(n, seed)
        .iter()
        .map(|w| (w >> 32) as u32)
        .collect()
}

/// Multiples of 1/8 below 2 in magnitude: sums of a few thousand are exact in any order, so
/// float scans, whose look-back combines tiles in an order that depends on timing, still give
/// the same bits on both devices.
fn dyadic(n: usize, seed: u64) -> Vec<f64> {
    random_u32(n, seed)
        .iter()
        .map(|v| (*v as i32 % 16) as f64 / 8.0)
        .collect()
}

/// An output element's bits, so floats compare exactly (NaN included).
trait Bits: Scalar {
    fn bits(self) -> u64;
}

macro_rules! bits {
    ($($ty:ty => |$v:ident| $e:expr),* $(,)?) => {$(
        impl Bits for $ty {
            fn bits(self) -> u64 {
                let $v = self;
                $e
            }
        }
    )*};
}

bits! {
    f32 => |v| v.to_bits() as u64,
    f64 => |v| v.to_bits(),
    u32 => |v| v as u64,
    i32 => |v| v as u32 as u64,
    u64 => |v| v,
    i64 => |v| v as u64,
    f16 => |v| v.to_bits() as u64,
    bf16 => |v| v.to_bits() as u64,
}

/// The bits of a buffer's elements, read back.
fn bits<T: Bits>(stream: &Stream, buffer: &DeviceBuffer<T>) -> Result<Vec<u64>> {
    Ok(buffer
        .to_host(stream)?
        .into_iter()
        .map(Bits::bits)
        .collect())
}

fn upload<T: Scalar>(stream: &Stream, host: &[T]) -> Result<DeviceBuffer<T>> {
    DeviceBuffer::from_host(stream, host)
}

/// Runs `case` on the race-checking CPU device, then on the plain one: the first must not
/// report anything, and both must give the same bits.
fn same_on_both(what: &str, case: impl Fn(&Stream) -> Result<Vec<u64>>) {
    let checked = case(&Gpu::cpu_racecheck().default_stream())
        .unwrap_or_else(|err| panic!("{what}, under the race checker: {err}"));
    let plain = case(&Gpu::cpu().default_stream())
        .unwrap_or_else(|err| panic!("{what}, on the plain CPU backend: {err}"));
    assert_eq!(checked.len(), plain.len(), "{what}: output lengths");
    if let Some(i) = (0..plain.len()).find(|&i| checked[i] != plain[i]) {
        panic!(
            "{what}: output word {i} has bits {:#x} under the race checker, {:#x} without",
            checked[i], plain[i]
        );
    }
}

/// A block's tree sum of its 256 elements that forgets the barrier between storing the tile and
/// reading it back: the kind of bug the checker exists for.
#[kernel]
fn racy_block_sum(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    tile[t] = x[global_idx().x as usize];
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            tile[t] += tile[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = tile[0];
    }
}

#[test]
fn the_checker_reports_a_planted_race_on_the_same_device() {
    let stream = Gpu::cpu_racecheck().default_stream();
    let x = upload(&stream, &random_f32(3 * 256, 1)).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 3).unwrap();
    let config = LaunchConfig::new(Grid::x(3), Block::x(256));
    let err = racy_block_sum::launch(&stream, config, &x, &mut out)
        .expect_err("the missing barrier is reported");
    let Error::DataRace { memory, .. } = &err else {
        panic!("expected a data race, got {err}");
    };
    assert_eq!(memory, "shared array `tile`", "{err}");
    if test_nvrtc() {
        check_with_nvrtc(&racy_block_sum::KERNEL, &[], (8, 0), false).unwrap();
    }
}

elementwise! {
    /// `out = a * x + y * y`: a launcher made by the library's macro.
    fn fused(a: f32; x: f32, y: f32) -> f32 { a * x + y * y }
}

/// 3001 elements: three blocks of the grid-stride kernels and a tail past the vector loads.
#[test]
fn map() {
    let n = 3001;
    let (xh, yh) = (random_f32(n, 2), random_f32(n, 3));
    same_on_both("map", |stream| {
        let x = upload(stream, &xh)?;
        let mut y = upload(stream, &yh)?;
        let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
        let mut all = Vec::new();
        map::axpy(stream, 1.5, &x, &mut y)?;
        all.extend(bits(stream, &y)?);
        map::saxpy(stream, -0.5, &x, &mut y)?;
        all.extend(bits(stream, &y)?);
        map::add(stream, &x, &y, &mut out)?;
        all.extend(bits(stream, &out)?);
        map::mul(stream, &x, &y, &mut out)?;
        all.extend(bits(stream, &out)?);
        map::scale(stream, 3.0, &mut out)?;
        all.extend(bits(stream, &out)?);
        map::relu(stream, &mut out)?;
        all.extend(bits(stream, &out)?);
        map::sigmoid(stream, &mut y)?;
        all.extend(bits(stream, &y)?);
        fused(stream, 2.0, &x, &y, &mut out)?;
        all.extend(bits(stream, &out)?);
        Ok(all)
    });
}

/// A reduction of `host` with `op` through [`reduce::reduce`].
fn reduce_case<T: Reducible + Bits>(what: &str, host: &[T], op: ReduceOp) {
    same_on_both(&format!("reduce {what} {op:?}"), |stream| {
        let x = upload(stream, host)?;
        Ok(vec![reduce::reduce(stream, &x, op)?.bits()])
    });
}

/// 3·4096 + 3 elements: four blocks of 4096 (the last partial, with a tail past the vector
/// loads), so the last-block handshake combines the partials.
#[test]
fn reduce() {
    let n = 3 * 4096 + 3;
    let f = random_f32(n, 4);
    let i: Vec<i32> = random_u32(n, 5).iter().map(|v| *v as i32).collect();
    let u = random_u32(n, 6);
    let d: Vec<f64> = f.iter().map(|v| *v as f64 * 1e3).collect();
    for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
        reduce_case("f32", &f, op);
        reduce_case("i32", &i, op);
        reduce_case("u32", &u, op);
        reduce_case("f64", &d, op);
    }
    same_on_both("sum, min, max", |stream| {
        let x = upload(stream, &u)?;
        let y = upload(stream, &i)?;
        Ok(vec![
            reduce::sum(stream, &x)?.bits(),
            reduce::min(stream, &y)?.bits(),
            reduce::max(stream, &x)?.bits(),
        ])
    });
    // Two blocks for four tiles' worth: each block loops over the grid; the scratch is reused,
    // so the counter the first launch leaves must elect the last block again.
    same_on_both("reduce_into with two blocks, twice", |stream| {
        let x = upload(stream, &f)?;
        let mut scratch = ReduceScratch::with_max_blocks(stream, 2)?;
        let mut out = DeviceBuffer::<f32>::zeroed(stream, 1)?;
        reduce::reduce_into(stream, &x, ReduceOp::Sum, &mut out, &mut scratch)?;
        let mut all = bits(stream, &out)?;
        reduce::reduce_into(stream, &x, ReduceOp::Max, &mut out, &mut scratch)?;
        all.extend(bits(stream, &out)?);
        Ok(all)
    });
    let halves: Vec<f16> = f.iter().map(|v| f16::from_f32(*v)).collect();
    let brains: Vec<bf16> = f.iter().map(|v| bf16::from_f32(*v)).collect();
    same_on_both("16-bit sums", |stream| {
        let h = upload(stream, &halves)?;
        let b = upload(stream, &brains)?;
        let mut scratch = ReduceScratch::new(stream)?;
        let mut out = DeviceBuffer::<f32>::zeroed(stream, 1)?;
        let mut all = vec![
            reduce::sum_f16(stream, &h)?.bits(),
            reduce::sum_bf16(stream, &b)?.bits(),
        ];
        reduce::sum_f16_into(stream, &h, &mut out, &mut scratch)?;
        all.extend(bits(stream, &out)?);
        reduce::sum_bf16_into(stream, &b, &mut out, &mut scratch)?;
        all.extend(bits(stream, &out)?);
        Ok(all)
    });
}

/// Scans of `host` with each `(op, kind)` in turn, through one scratch (so the second scan's
/// flags carry a new epoch).
fn scan_case<T: ScanIdentity + Bits>(what: &str, host: &[T], steps: &[(ScanOp, ScanKind)]) {
    same_on_both(&format!("scan {what} {steps:?}"), |stream| {
        let x = upload(stream, host)?;
        let mut y = DeviceBuffer::<T>::zeroed(stream, host.len())?;
        let mut scratch = ScanScratch::new(stream, host.len())?;
        let mut all = Vec::new();
        for &(op, kind) in steps {
            scan::scan(stream, &x, &mut y, op, kind, &mut scratch)?;
            all.extend(bits(stream, &y)?);
        }
        Ok(all)
    });
}

/// Two tiles and a few elements: three blocks, so the second and third look back (through
/// aggregates or inclusive prefixes) at their predecessors; every op and kind, and both ways
/// of publishing a tile (4-byte types in one word with their state, 8-byte types split over two).
#[test]
fn scan() {
    use ScanKind::{Exclusive, Inclusive};
    use ScanOp::{Max, Min, Sum};
    let n = 2 * TILE + 5;
    let u = random_u32(n, 7);
    let i: Vec<i32> = u.iter().map(|v| *v as i32).collect();
    let f: Vec<f32> = dyadic(n, 8).iter().map(|v| *v as f32).collect();
    let wide: Vec<i64> = u.iter().map(|v| (*v as i64 - (1 << 31)) << 8).collect();
    let unsigned: Vec<u64> = u.iter().map(|v| (*v as u64) << 20).collect();
    let d = dyadic(n, 9);
    scan_case("u32", &u, &[(Sum, Inclusive), (Sum, Exclusive)]);
    scan_case("i32", &i, &[(Min, Inclusive), (Max, Exclusive)]);
    scan_case("f32", &f, &[(Sum, Exclusive), (Max, Inclusive)]);
    scan_case("i64", &wide, &[(Sum, Inclusive), (Min, Exclusive)]);
    scan_case("u64", &unsigned, &[(Max, Inclusive)]);
    scan_case("f64", &d, &[(Sum, Exclusive), (Min, Inclusive)]);
}

/// Images of 45×37 (2×2 blocks of 32×32 tiles, the right and bottom ones partial), 1D signals
/// of 600 (three blocks of 256), and Jacobi grids with and without rows of multiples of 4.
#[test]
fn stencil() {
    let (width, height) = (45, 37);
    let image = random_f32(width * height, 10);
    let signal = random_f32(600, 11);
    let custom = Weights::new(&random_f32(25, 12)).unwrap();
    same_on_both("convolve2d", |stream| {
        let input = upload(stream, &image)?;
        let mut output = DeviceBuffer::<f32>::zeroed(stream, image.len())?;
        let mut all = Vec::new();
        for (weights, boundary) in [
            (Weights::box_blur3(), Boundary::Clamp),
            (Weights::sobel_x3(), Boundary::Zero),
            (Weights::gaussian_blur5(), Boundary::Zero),
            (custom.clone(), Boundary::Clamp),
        ] {
            let weights = weights.upload(stream)?;
            stencil::convolve2d(
                stream,
                &input,
                width,
                height,
                &weights,
                boundary,
                &mut output,
            )?;
            all.extend(bits(stream, &output)?);
        }
        Ok(all)
    });
    let three = Weights1d::new(&[0.25, 0.5, 0.25]).unwrap();
    let widest = Weights1d::new(&random_f32(17, 13)).unwrap();
    same_on_both("convolve1d", |stream| {
        let input = upload(stream, &signal)?;
        let mut output = DeviceBuffer::<f32>::zeroed(stream, signal.len())?;
        let mut all = Vec::new();
        for (weights, boundary) in [(&three, Boundary::Clamp), (&widest, Boundary::Zero)] {
            let weights = weights.upload(stream)?;
            stencil::convolve1d(stream, &input, &weights, boundary, &mut output)?;
            all.extend(bits(stream, &output)?);
        }
        Ok(all)
    });
    for (width, height) in [(136, 21), (70, 21)] {
        let grid = random_f32(width * height, 14);
        same_on_both(&format!("jacobi5 {width}×{height}"), |stream| {
            let input = upload(stream, &grid)?;
            let mut output = DeviceBuffer::<f32>::zeroed(stream, grid.len())?;
            let mut all = Vec::new();
            for boundary in [Boundary::Clamp, Boundary::Zero] {
                stencil::jacobi5(stream, &input, width, height, boundary, &mut output)?;
                all.extend(bits(stream, &output)?);
            }
            Ok(all)
        });
    }
}

/// `spec` on random A, B and C through `run`; the result is C's bits.
fn gemm_case<T: Scalar>(
    what: &str,
    spec: Gemm,
    round: impl Fn(f32) -> T,
    run: impl Fn(
        &Stream,
        &Gemm,
        &DeviceBuffer<T>,
        &DeviceBuffer<T>,
        &mut DeviceBuffer<f32>,
    ) -> Result<()>,
) {
    let a: Vec<T> = random_f32(spec.m * spec.k, 15)
        .into_iter()
        .map(&round)
        .collect();
    let b: Vec<T> = random_f32(spec.k * spec.n, 16)
        .into_iter()
        .map(&round)
        .collect();
    let c = random_f32(spec.m * spec.n, 17);
    same_on_both(&format!("{what} {spec:?}"), |stream| {
        let (a, b) = (upload(stream, &a)?, upload(stream, &b)?);
        let mut c = upload(stream, &c)?;
        run(stream, &spec, &a, &b, &mut c)?;
        bits(stream, &c)
    });
}

/// An f32 GEMM on the given tile configuration.
fn simt_case(spec: Gemm, tiles: Tiles) {
    gemm_case(
        &format!("gemm f32 {tiles:?}"),
        spec,
        |v| v,
        |stream, spec, a, b, c| gemm::gemm_f32_with_tiles(stream, spec, a, b, c, tiles),
    );
}

/// Each tile configuration on a shape of several blocks with partial tiles of C and of k, each
/// in another layout; then what `gemm` chooses, with and without a product.
#[test]
fn gemm_simt() {
    simt_case(Gemm::new(40, 70, 150).alpha(0.5).beta(2.0), Tiles::Small);
    simt_case(Gemm::new(33, 20, 300).trans_a(), Tiles::SmallSplitK);
    simt_case(Gemm::new(70, 65, 20).trans_b().beta(1.0), Tiles::Medium);
    simt_case(Gemm::new(130, 136, 40).trans_a().trans_b(), Tiles::Large);
    gemm_case("gemm f32", Gemm::new(50, 45, 37), |v| v, gemm::gemm);
    gemm_case(
        "gemm_with_scratch f32",
        Gemm::new(20, 30, 260).trans_b(),
        |v| v,
        |stream, spec, a, b, c| {
            let mut scratch = GemmScratch::new();
            gemm::gemm_with_scratch(stream, spec, a, b, c, &mut scratch)?;
            gemm::gemm_with_scratch(stream, spec, a, b, c, &mut scratch)
        },
    );
    // alpha 0: C is only scaled by beta.
    gemm_case(
        "gemm f32, alpha 0",
        Gemm::new(40, 70, 5).alpha(0.0).beta(-2.0),
        |v| v,
        gemm::gemm,
    );
}

/// `gemm_f16_on` or `gemm_bf16_on`.
type OnInstructions<T> = fn(
    &Stream,
    &Gemm,
    Instructions,
    &DeviceBuffer<T>,
    &DeviceBuffer<T>,
    &mut DeviceBuffer<f32>,
) -> Result<()>;

/// One 16-bit GEMM on the given instructions.
fn tensor_case<T: Scalar>(
    spec: Gemm,
    on: Instructions,
    round: fn(f32) -> T,
    run: OnInstructions<T>,
) {
    let what = format!("gemm {} on {on:?}", std::any::type_name::<T>());
    gemm_case(&what, spec, round, move |stream, spec, a, b, c| {
        run(stream, spec, on, a, b, c)
    });
}

/// Both 16-bit types on `mma.sync` (rows aligned for one, not for the other) and on
/// `wgmma`, on shapes of two blocks of the 128×256 tile with partial tiles of C and of k; then
/// the entry points that choose the instructions. `mma.sync` runs more k-tiles than its
/// pipeline has stages, so stages are refilled; `wgmma` runs three k-tiles
/// here, fewer than its four stages (see [`gemm_tensor_core_wgmma_refilling_stages`] for more).
#[test]
fn gemm_tensor_core() {
    // k 264 and 270: four whole k-tiles of 64 and a partial fifth.
    let aligned = Gemm::new(136, 40, 264).alpha(0.5).beta(1.0);
    let ragged = Gemm::new(130, 37, 270).trans_a();
    tensor_case(
        aligned,
        Instructions::MmaSync,
        f16::from_f32,
        tensor_core::gemm_f16_on,
    );
    tensor_case(
        ragged,
        Instructions::MmaSync,
        bf16::from_f32,
        tensor_core::gemm_bf16_on,
    );
    let one_pass = Gemm::new(136, 40, 136).alpha(0.5).beta(1.0);
    tensor_case(
        one_pass,
        Instructions::Wgmma,
        f16::from_f32,
        tensor_core::gemm_f16_on,
    );
    tensor_case(
        one_pass.trans_a().trans_b(),
        Instructions::Wgmma,
        bf16::from_f32,
        tensor_core::gemm_bf16_on,
    );
    let small = Gemm::new(17, 19, 24).trans_b();
    gemm_case("gemm_f16", small, f16::from_f32, tensor_core::gemm_f16);
    gemm_case("gemm_bf16", small, bf16::from_f32, tensor_core::gemm_bf16);
    gemm_case("gemm::<f16>", small, f16::from_f32, gemm::gemm);
    gemm_case("gemm::<bf16>", small, bf16::from_f32, gemm::gemm);
}

/// `wgmma` over more k-tiles (6) than its pipeline has stages (4), so the producer refills
/// stages the consumers have freed. Lane 0 alone frees a stage for its warp, after
/// `wgmma_wait`: the checker must treat that wait as the warp-collective instruction it is on a
/// GPU (`.sync.aligned`), after which every lane's operand reads are done.
#[test]
fn gemm_tensor_core_wgmma_refilling_stages() {
    let spec = Gemm::new(136, 40, 328).alpha(0.5).beta(1.0);
    tensor_case(
        spec,
        Instructions::Wgmma,
        f16::from_f32,
        tensor_core::gemm_f16_on,
    );
    tensor_case(
        spec.trans_a().trans_b(),
        Instructions::Wgmma,
        bf16::from_f32,
        tensor_core::gemm_bf16_on,
    );
}

/// The TF32 kernels over more k-tiles (6) than stages (4) with partial tiles
/// of C and of k: the producer's transposed stores (M- or N-major operands) and `cp.async`
/// copies (K-major ones), both ordered before `wgmma`'s reads by the stages' barriers, and
/// the plain product's kernel, whose consumers load B's tile into registers.
#[test]
fn gemm_tf32() {
    let spec = Gemm::new(136, 40, 168).alpha(0.5).beta(1.0).allow_tf32();
    // The plain product (register fragments); A stored and B copied; both stored: every path
    // of both producers and consumers.
    for spec in [spec, spec.trans_a().trans_b(), spec.trans_a()] {
        gemm_case("gemm tf32", spec, |v| v, gemm::gemm);
    }
}

/// Every step kernel: rows and columns that take several blocks (37×13 elements, 1001
/// parameters, 130 columns of 128-thread blocks, 300 rows for the 256-thread loss).
#[test]
fn mlp() {
    let (rows, cols) = (37, 13);
    let z = random_f32(rows * cols, 20);
    let bias = random_f32(cols, 21);
    same_on_both("bias_relu, bias_relu_bf16, to_bf16, bias_add", |stream| {
        let bias = upload(stream, &bias)?;
        let mut all = Vec::new();
        let mut zd = upload(stream, &z)?;
        mlp::bias_relu(stream, &mut zd, &bias)?;
        all.extend(bits(stream, &zd)?);
        let mut zd = upload(stream, &z)?;
        let mut rounded = DeviceBuffer::<bf16>::zeroed(stream, z.len())?;
        mlp::bias_relu_bf16(stream, &mut zd, &bias, &mut rounded)?;
        all.extend(bits(stream, &zd)?);
        all.extend(bits(stream, &rounded)?);
        mlp::to_bf16(stream, &upload(stream, &z)?, &mut rounded)?;
        all.extend(bits(stream, &rounded)?);
        let mut zd = upload(stream, &z)?;
        mlp::bias_add(stream, &mut zd, &bias)?;
        all.extend(bits(stream, &zd)?);
        Ok(all)
    });

    let samples = 700;
    for pixels in [4usize, 7] {
        let images = random_f32(samples * pixels, 22);
        let labels: Vec<u32> = (0..samples as u32).map(|i| i % 10).collect();
        let mut perm: Vec<u32> = (0..samples as u32).collect();
        perm.reverse();
        let batch = 300;
        same_on_both(&format!("gather, {pixels} pixels, and advance"), |stream| {
            let mut state = StepState::new(stream)?;
            state.set(stream, 1, 5)?;
            let mut bx = DeviceBuffer::<f32>::zeroed(stream, batch * pixels)?;
            let mut by = DeviceBuffer::<u32>::zeroed(stream, batch)?;
            let (images, labels, perm) = (
                upload(stream, &images)?,
                upload(stream, &labels)?,
                upload(stream, &perm)?,
            );
            mlp::gather(stream, &images, &labels, &perm, &state, &mut bx, &mut by)?;
            let mut all = bits(stream, &bx)?;
            all.extend(bits(stream, &by)?);
            mlp::advance(stream, &mut state)?;
            all.extend(bits(stream, &state.counters)?);
            Ok(all)
        });
    }

    let (rows, classes) = (300, 7);
    let logits: Vec<f32> = random_f32(rows * classes, 23)
        .iter()
        .map(|v| v * 8.0)
        .collect();
    let class_bias = random_f32(classes, 24);
    let labels: Vec<u32> = (0..rows).map(|r| ((r * 7) % classes) as u32).collect();
    same_on_both("softmax_cross_entropy, classify_rows", |stream| {
        let (bias, labels) = (upload(stream, &class_bias)?, upload(stream, &labels)?);
        let mut state = StepState::new(stream)?;
        state.set(stream, 1, 0)?;
        let mut ld = upload(stream, &logits)?;
        let mut losses = DeviceBuffer::<f32>::zeroed(stream, 3)?;
        let mut correct = DeviceBuffer::<u32>::zeroed(stream, 3)?;
        mlp::softmax_cross_entropy(
            stream,
            &mut ld,
            &bias,
            &labels,
            &state,
            &mut losses,
            &mut correct,
        )?;
        let mut all = bits(stream, &ld)?;
        all.extend(bits(stream, &losses)?);
        all.extend(bits(stream, &correct)?);
        let mut row_losses = DeviceBuffer::<f32>::zeroed(stream, rows)?;
        let mut predicted = DeviceBuffer::<u32>::zeroed(stream, rows)?;
        let logits = upload(stream, &logits)?;
        mlp::classify_rows(
            stream,
            &logits,
            &bias,
            &labels,
            &mut row_losses,
            &mut predicted,
        )?;
        all.extend(bits(stream, &row_losses)?);
        all.extend(bits(stream, &predicted)?);
        Ok(all)
    });

    let (rows, cols) = (20, 130);
    let dz = random_f32(rows * cols, 25);
    let a = random_f32(rows * cols, 26);
    same_on_both("bias_gradient, relu_bias_backward", |stream| {
        let dz = upload(stream, &dz)?;
        let mut grad = DeviceBuffer::<f32>::zeroed(stream, cols)?;
        mlp::bias_gradient(stream, &dz, &mut grad)?;
        let mut all = bits(stream, &grad)?;
        let mut out = DeviceBuffer::<f32>::zeroed(stream, rows * cols)?;
        mlp::relu_bias_backward(stream, &dz, &upload(stream, &a)?, &mut out, &mut grad)?;
        all.extend(bits(stream, &out)?);
        all.extend(bits(stream, &grad)?);
        Ok(all)
    });

    let n = 1001;
    let p0 = random_f32(n, 27);
    let g = random_f32(n, 28);
    same_on_both("adam, sgd", |stream| {
        let grad = upload(stream, &g)?;
        let mut state = StepState::new(stream)?;
        let mut param = upload(stream, &p0)?;
        let mut m = DeviceBuffer::<f32>::zeroed(stream, n)?;
        let mut v = DeviceBuffer::<f32>::zeroed(stream, n)?;
        for _ in 0..2 {
            mlp::adam(
                stream,
                &Adam::new(1e-2),
                &mut param,
                &grad,
                &mut m,
                &mut v,
                &state,
            )?;
            mlp::advance(stream, &mut state)?;
        }
        let mut all = bits(stream, &param)?;
        all.extend(bits(stream, &m)?);
        all.extend(bits(stream, &v)?);
        let mut param = upload(stream, &p0)?;
        let mut velocity = DeviceBuffer::<f32>::zeroed(stream, n)?;
        for _ in 0..2 {
            mlp::sgd(stream, 0.1, 0.9, &mut param, &grad, &mut velocity)?;
        }
        all.extend(bits(stream, &param)?);
        all.extend(bits(stream, &velocity)?);
        Ok(all)
    });
}
