//! Half-precision GEMM on the tensor cores: `f16` or `bf16` inputs, `f32` accumulation and
//! output, in two kernels: Hopper's warpgroup `wgmma` fed by tensor copies
//! ([`super::tma`]) where the GPU has them (compute capability 9.0) and the rows of A and B are
//! 16-byte aligned, and `mma.sync` everywhere else.
//!
//! The portable kernel (`gemm_*_kernel`): 8 warps, each a 64×64 tile as 4×8
//! `mma.sync.m16n8k16` per 16-wide step of k, fragments loaded with `ldmatrix` (`.trans` for m-
//! or n-contiguous operands) from a 4-stage `cp.async` pipeline two tiles ahead; shared rows
//! are padded by 16 bytes so an `ldmatrix` phase hits distinct bank groups. `cp.async` moves 16
//! bytes from a 16-byte boundary, so operands whose rows are not a multiple of 8 elements long
//! are copied element by element by a separate instantiation (`VEC = 0`): slower, but with no
//! scratch memory, so a call can be captured in a CUDA graph. It needs 216 KiB of shared
//! memory (Hopper allows 227 KiB; on a GPU that allows less the launch is refused).
//! On an H100 at 8192³ it runs at 310–330 TFLOP/s (0.42 of cuBLAS), its tensor pipe about half
//! busy with 2 warps per scheduler.
//!
//! The Hopper kernel's history: its first producer was a warpgroup issuing `cp.async` copies
//! into the same swizzled stages, 0.70–0.72 of cuBLAS at 4096³ and 0.77–0.82 at 8192³ on an H100
//! (0.69–0.70 while each copy recomputed its source offset with 64-bit multiplies); a persistent
//! grid around it gained nothing. One thread issuing tensor copies took its place (figures in
//! [`super::tma`]).

use gpu_dsl_macros::{device, kernel};
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{Backend, Block, DeviceBuffer, Error, Grid, LaunchConfig, Result, Stream};

use super::{grouped_block_col, grouped_block_row, Gemm, Transpose};
use crate::map::same_len;

/// Rows of C per block.
const BM: usize = 128;
/// Columns of C per block.
const BN: usize = 256;
/// Threads per block: 8 warps.
const THREADS: usize = 256;
/// Tiles of A and B in flight.
const STAGES: usize = 4;
/// Words (u32) of shared memory per stage: A and B tiles of 64-deep rows padded to 36 words.
const STAGE_WORDS: usize = (BM + BN) * 36;

macro_rules! tensor_core_gemm {
    ($(#[$attr:meta])* $name:ident, $elem:ident, $mma:ident, $copy8:ident) => {
        $(#[$attr])*
        #[kernel]
        fn $name<const A_T: usize, const B_T: usize, const VEC: usize>(
            m: usize,
            n: usize,
            k: usize,
            lda: usize,
            ldb: usize,
            alpha: f32,
            beta: f32,
            a: &[$elem],
            b: &[$elem],
            c: &mut [f32],
        ) {
            const BM: usize = 128;
            const BN: usize = 256;
            const BK: usize = 64;
            const WM: usize = 64;
            const WN: usize = 64;
            const WARPS_N: usize = 4;
            const MI: usize = 4;
            const NI: usize = 8;
            const THREADS: usize = 256;
            const STAGES: usize = 4;
            // 16-wide steps of k per tile.
            const KSTEPS: usize = 4;
            // Row strides in words: a k-contiguous row is BK halves (32 words), an m- or
            // n-contiguous row BM or BN halves; each padded by 4 words (16 bytes).
            const K_STRIDE: usize = 36;
            const A_MN_STRIDE: usize = 68;
            const B_MN_STRIDE: usize = 132;
            const A_WORDS: usize = 4608;
            const STAGE_WORDS: usize = 13824;
            // 16-byte chunks per tile and per thread.
            const A_LOADS: usize = 4;
            const B_LOADS: usize = 8;
            // Blocks of C rows that run together, so they share B's columns in L2.
            const GROUP_M: usize = 8;
            let smem = dynamic_shared::<u32>();
            let tid = thread_idx().x as usize;
            let lane = tid % 32;
            let warp = tid / 32;
            let warp_m = warp / WARPS_N;
            let warp_n = warp % WARPS_N;
            // Grouped block order: GROUP_M block rows sweep the block columns together.
            let grid_m = (m + BM - 1) / BM;
            let grid_n = (n + BN - 1) / BN;
            let pid = block_idx().x as usize;
            let block_m = grouped_block_row(pid, grid_m, grid_n, GROUP_M) * BM;
            let block_n = grouped_block_col(pid, grid_m, grid_n, GROUP_M) * BN;
            let mut acc = [0.0f32; 128];
            // Rows whose stride is a multiple of 8 elements start on 16-byte boundaries, so
            // they load with cp.async; others element by element. With VEC = 1 (both operands
            // aligned) the element-wise path is compiled out: its mere presence costs the
            // cp.async path a fifth of its speed.
            let a_vec = VEC == 1 || lda % 8 == 0;
            let b_vec = VEC == 1 || ldb % 8 == 0;
            let tiles = (k + BK - 1) / BK;
            // Iteration i loads tile i and computes tile i - (STAGES - 2): the stage it loads
            // was last read two iterations ago, and the barrier of the iteration between
            // orders that read before this write.
            for i in 0..tiles + STAGES - 2 {
                if i < tiles {
                    let k0 = i * BK;
                    let a_base = (i % STAGES) * STAGE_WORDS;
                    let b_base = a_base + A_WORDS;
                    // A thread's chunks of a tile lie in one column of chunks, whole passes of
                    // the block apart, so their addresses differ by constants across r and
                    // by one step per tile.
                    for r in 0..A_LOADS {
                        if A_T == 0 {
                            let row = tid / (BK / 8) + r * (THREADS / (BK / 8));
                            let kc = (tid % (BK / 8)) * 8;
                            let gm = block_m + row;
                            let gk = k0 + kc;
                            let dst = a_base + row * K_STRIDE + kc / 2;
                            if a_vec {
                                cp_async_16(smem, dst, a, gm * lda + gk, gm < m && gk < k);
                            } else {
                                let count = if gm < m && gk < k { (k - gk).min(8) } else { 0 };
                                $copy8(smem, dst, a, gm * lda + gk, count);
                            }
                        } else {
                            let row = tid / (BM / 8) + r * (THREADS / (BM / 8));
                            let mc = (tid % (BM / 8)) * 8;
                            let gk = k0 + row;
                            let gm = block_m + mc;
                            let dst = a_base + row * A_MN_STRIDE + mc / 2;
                            if a_vec {
                                cp_async_16(smem, dst, a, gk * lda + gm, gk < k && gm < m);
                            } else {
                                let count = if gk < k && gm < m { (m - gm).min(8) } else { 0 };
                                $copy8(smem, dst, a, gk * lda + gm, count);
                            }
                        }
                    }
                    for r in 0..B_LOADS {
                        if B_T == 1 {
                            let row = tid / (BK / 8) + r * (THREADS / (BK / 8));
                            let kc = (tid % (BK / 8)) * 8;
                            let gn = block_n + row;
                            let gk = k0 + kc;
                            let dst = b_base + row * K_STRIDE + kc / 2;
                            if b_vec {
                                cp_async_16(smem, dst, b, gn * ldb + gk, gn < n && gk < k);
                            } else {
                                let count = if gn < n && gk < k { (k - gk).min(8) } else { 0 };
                                $copy8(smem, dst, b, gn * ldb + gk, count);
                            }
                        } else {
                            let row = tid / (BN / 8) + r * (THREADS / (BN / 8));
                            let nc = (tid % (BN / 8)) * 8;
                            let gk = k0 + row;
                            let gn = block_n + nc;
                            let dst = b_base + row * B_MN_STRIDE + nc / 2;
                            if b_vec {
                                cp_async_16(smem, dst, b, gk * ldb + gn, gk < k && gn < n);
                            } else {
                                let count = if gk < k && gn < n { (n - gn).min(8) } else { 0 };
                                $copy8(smem, dst, b, gk * ldb + gn, count);
                            }
                        }
                    }
                }
                cp_async_commit();
                if i >= STAGES - 2 {
                    let tile = i - (STAGES - 2);
                    // Groups committed: i + 1; tile `tile` is group `tile`.
                    cp_async_wait((STAGES - 2) as u32);
                    sync_threads();
                    let a_base = (tile % STAGES) * STAGE_WORDS;
                    let b_base = a_base + A_WORDS;
                    // Fragments in two buffers (16 words each): step `step` loads k-step `step`
                    // while the MMAs of the one before run, hiding the ldmatrix latency.
                    let mut fa = [0u32; 32];
                    let mut fb = [0u32; 32];
                    for step in 0..KSTEPS + 1 {
                        if step < KSTEPS {
                            let kk = step;
                            let buf = (step % 2) * 16;
                            // A: four 16×16 blocks, registers in mma's a0..a3 order.
                            for mi in 0..MI {
                                if A_T == 0 {
                                    let row = warp_m * WM + mi * 16 + lane % 8 + 8 * ((lane / 8) % 2);
                                    let at = a_base + row * K_STRIDE + kk * 8 + 4 * (lane / 16);
                                    let f = ldmatrix_x4(smem, at);
                                    for w in 0..4 {
                                        fa[buf + mi * 4 + w] = f[w];
                                    }
                                } else {
                                    let kr = kk * 16 + lane % 8 + 8 * (lane / 16);
                                    let col = warp_m * WM + mi * 16 + 8 * ((lane / 8) % 2);
                                    let f = ldmatrix_x4_trans(smem, a_base + kr * A_MN_STRIDE + col / 2);
                                    for w in 0..4 {
                                        fa[buf + mi * 4 + w] = f[w];
                                    }
                                }
                            }
                            // B: eight 16×8 blocks, two registers each.
                            for p in 0..NI / 2 {
                                if B_T == 1 {
                                    let row = warp_n * WN + p * 16 + lane % 8 + 8 * (lane / 16);
                                    let at = b_base + row * K_STRIDE + kk * 8 + 4 * ((lane / 8) % 2);
                                    let f = ldmatrix_x4(smem, at);
                                    for w in 0..4 {
                                        fb[buf + p * 4 + w] = f[w];
                                    }
                                } else {
                                    let kr = kk * 16 + lane % 8 + 8 * ((lane / 8) % 2);
                                    let col = warp_n * WN + p * 16 + 8 * (lane / 16);
                                    let f = ldmatrix_x4_trans(smem, b_base + kr * B_MN_STRIDE + col / 2);
                                    for w in 0..4 {
                                        fb[buf + p * 4 + w] = f[w];
                                    }
                                }
                            }
                        }
                        if step > 0 {
                            let buf = ((step - 1) % 2) * 16;
                            for mi in 0..MI {
                                let fa_i = [fa[buf + mi * 4], fa[buf + mi * 4 + 1], fa[buf + mi * 4 + 2], fa[buf + mi * 4 + 3]];
                                for ni in 0..NI {
                                    let fb_i = [fb[buf + ni * 2], fb[buf + ni * 2 + 1]];
                                    let at = (mi * NI + ni) * 4;
                                    let sum = [acc[at], acc[at + 1], acc[at + 2], acc[at + 3]];
                                    let d = $mma(sum, fa_i, fb_i);
                                    for w in 0..4 {
                                        acc[at + w] = d[w];
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16×8 block.
            // One loop per block row of the warp tile (MI = 4): NVRTC unrolls each in full,
            // which keeps the accumulators in registers, but not one loop nest over all 32.
            let row_base = block_m + warp_m * WM + lane / 4;
            let col_base = block_n + warp_n * WN + 2 * (lane % 4);
            for ni in 0..NI {
                let at = (0 * NI + ni) * 4;
                let row = row_base;
                let col = col_base + ni * 8;
                store_pair(c, m, n, row, col, alpha * acc[at], alpha * acc[at + 1], beta);
                store_pair(c, m, n, row + 8, col, alpha * acc[at + 2], alpha * acc[at + 3], beta);
            }
            for ni in 0..NI {
                let at = (1 * NI + ni) * 4;
                let row = row_base + 16;
                let col = col_base + ni * 8;
                store_pair(c, m, n, row, col, alpha * acc[at], alpha * acc[at + 1], beta);
                store_pair(c, m, n, row + 8, col, alpha * acc[at + 2], alpha * acc[at + 3], beta);
            }
            for ni in 0..NI {
                let at = (2 * NI + ni) * 4;
                let row = row_base + 32;
                let col = col_base + ni * 8;
                store_pair(c, m, n, row, col, alpha * acc[at], alpha * acc[at + 1], beta);
                store_pair(c, m, n, row + 8, col, alpha * acc[at + 2], alpha * acc[at + 3], beta);
            }
            for ni in 0..NI {
                let at = (3 * NI + ni) * 4;
                let row = row_base + 48;
                let col = col_base + ni * 8;
                store_pair(c, m, n, row, col, alpha * acc[at], alpha * acc[at + 1], beta);
                store_pair(c, m, n, row + 8, col, alpha * acc[at + 2], alpha * acc[at + 3], beta);
            }
        }
    };
}

/// Which tensor-core instructions a 16-bit GEMM runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instructions {
    /// `wgmma` on a compute capability 9.0 GPU (Hopper) when every row of A and B starts on a
    /// 16-byte boundary (a multiple of 8 elements long), `mma.sync` otherwise (and on the CPU
    /// backend).
    Auto,
    /// `mma.sync` fed by `ldmatrix`: every GPU from compute capability 8.0 on, any shape.
    MmaSync,
    /// Hopper's warpgroup `wgmma`: compute capability 9.0 (and the CPU backend), rows a
    /// multiple of 8 elements.
    Wgmma,
}

tensor_core_gemm!(
    /// `C = alpha·op(A)·op(B) + beta·C` for `f16` A and B; `A_T`/`B_T` 1 for k×m A / n×k B.
    gemm_f16_kernel,
    f16,
    mma_m16n8k16_f16,
    copy8_f16
);
tensor_core_gemm!(
    /// [`gemm_f16_kernel`] for `bf16`.
    gemm_bf16_kernel,
    bf16,
    mma_m16n8k16_bf16,
    copy8_bf16
);

/// `c[row][col..col + 2] = v + beta · c[..]` within the m×n matrix; `beta == 0` leaves C unread,
/// as BLAS does (it may hold NaN). Where the pair starts on an 8-byte boundary (n and col even)
/// it is one 8-byte access: two 4-byte stores a pair had set the tensor-core kernels' pace.
#[device]
#[allow(clippy::too_many_arguments)]
pub(super) fn store_pair(
    c: &mut [f32],
    m: usize,
    n: usize,
    row: usize,
    col: usize,
    v0: f32,
    v1: f32,
    beta: f32,
) {
    if n % 2 == 0 && col % 2 == 0 {
        // The pair is wholly inside or outside the row.
        if row < m && col < n {
            let at = row * n + col;
            if beta == 0.0 {
                c.store2(at, [v0, v1]);
            } else {
                let old = c.load2(at);
                c.store2(at, [v0 + beta * old[0], v1 + beta * old[1]]);
            }
        }
    } else if row < m {
        let at = row * n + col;
        if col < n {
            c[at] = if beta == 0.0 { v0 } else { v0 + beta * c[at] };
        }
        if col + 1 < n {
            c[at + 1] = if beta == 0.0 {
                v1
            } else {
                v1 + beta * c[at + 1]
            };
        }
    }
}

macro_rules! copy8 {
    ($(#[$attr:meta])* $name:ident, $elem:ident, $pack:ident) => {
        $(#[$attr])*
        #[device]
        fn $name(smem: &mut [u32], dst: usize, src: &[$elem], at: usize, count: usize) {
            let zero = $elem::from_f32(0.0);
            for w in 0..4 {
                let lo = if 2 * w < count { src[at + 2 * w] } else { zero };
                let hi = if 2 * w + 1 < count { src[at + 2 * w + 1] } else { zero };
                smem[dst + w] = $pack(lo, hi);
            }
        }
    };
}

copy8!(
    /// Elements `at..at + count` of `src` (`count` ≤ 8, zeros after) into words `dst..dst + 4`:
    /// the synchronous copy for rows not 16-byte aligned.
    copy8_f16,
    f16,
    pack_f16x2
);
copy8!(
    /// [`copy8_f16`] for `bf16`.
    copy8_bf16,
    bf16,
    pack_bf16x2
);

/// The kernels of this module without template arguments: none (the GEMM kernels, one per
/// layout, are in [`instantiations`]).
pub const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[];

/// The GEMM kernels with every template instantiation they are launched with.
pub fn instantiations() -> Vec<(
    &'static gpu_dsl_runtime::Kernel,
    Vec<gpu_dsl_runtime::TemplateArg>,
)> {
    use gpu_dsl_runtime::TemplateArg;
    let mut all = Vec::new();
    for kernel in [&gemm_f16_kernel::KERNEL, &gemm_bf16_kernel::KERNEL] {
        for a_t in 0..2u64 {
            for b_t in 0..2u64 {
                for vec in 0..2u64 {
                    all.push((
                        kernel,
                        vec![
                            TemplateArg::Const(a_t),
                            TemplateArg::Const(b_t),
                            TemplateArg::Const(vec),
                        ],
                    ));
                }
            }
        }
    }
    all.extend(super::tma::instantiations());
    all
}

/// `C = alpha·op(A)·op(B) + beta·C` with `f16` A and B on the tensor cores, `f32` accumulation.
pub fn gemm_f16(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f16>,
    b: &DeviceBuffer<f16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm::<f16>(stream, spec, Instructions::Auto, a, b, c)
}

/// `C = alpha·op(A)·op(B) + beta·C` with `bf16` A and B on the tensor cores, `f32` accumulation.
pub fn gemm_bf16(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<bf16>,
    b: &DeviceBuffer<bf16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm::<bf16>(stream, spec, Instructions::Auto, a, b, c)
}

/// [`gemm_f16`] on the given tensor-core instructions (an error where the device lacks them).
pub fn gemm_f16_on(
    stream: &Stream,
    spec: &Gemm,
    instructions: Instructions,
    a: &DeviceBuffer<f16>,
    b: &DeviceBuffer<f16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm::<f16>(stream, spec, instructions, a, b, c)
}

/// [`gemm_bf16`] on the given tensor-core instructions (an error where the device lacks them).
pub fn gemm_bf16_on(
    stream: &Stream,
    spec: &Gemm,
    instructions: Instructions,
    a: &DeviceBuffer<bf16>,
    b: &DeviceBuffer<bf16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm::<bf16>(stream, spec, instructions, a, b, c)
}

/// The 16-bit input types, with their kernels.
trait Half: super::tma::TmaHalf {
    /// Launches the `mma.sync` kernel for this type and layout: (A transposed, B transposed,
    /// both operands' rows 16-byte aligned).
    #[allow(clippy::too_many_arguments)]
    fn launch_gemm(
        stream: &Stream,
        config: LaunchConfig,
        layout: (bool, bool, bool),
        shape: (usize, usize, usize, usize, usize),
        scale: (f32, f32),
        a: &DeviceBuffer<Self>,
        b: &DeviceBuffer<Self>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()>;
}

macro_rules! impl_half {
    ($ty:ident, $mma:ident) => {
        impl Half for $ty {
            fn launch_gemm(
                stream: &Stream,
                config: LaunchConfig,
                layout: (bool, bool, bool),
                (m, n, k, lda, ldb): (usize, usize, usize, usize, usize),
                (alpha, beta): (f32, f32),
                a: &DeviceBuffer<Self>,
                b: &DeviceBuffer<Self>,
                c: &mut DeviceBuffer<f32>,
            ) -> Result<()> {
                macro_rules! by_layout {
                    ($kernel:ident) => {
                        match layout {
                            (false, false, false) => $kernel::launch::<0, 0, 0>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (false, false, true) => $kernel::launch::<0, 0, 1>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (false, true, false) => $kernel::launch::<0, 1, 0>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (false, true, true) => $kernel::launch::<0, 1, 1>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (true, false, false) => $kernel::launch::<1, 0, 0>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (true, false, true) => $kernel::launch::<1, 0, 1>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (true, true, false) => $kernel::launch::<1, 1, 0>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                            (true, true, true) => $kernel::launch::<1, 1, 1>(
                                stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c,
                            ),
                        }
                    };
                }
                by_layout!($mma)
            }
        }
    };
}

impl_half!(f16, gemm_f16_kernel);
impl_half!(bf16, gemm_bf16_kernel);

fn gemm<T: Half>(
    stream: &Stream,
    spec: &Gemm,
    instructions: Instructions,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let Gemm { m, n, k, .. } = *spec;
    let too_large = || Error::InvalidLaunch(format!("gemm: {m}×{n}×{k} overflows usize"));
    let (mk, kn, mn) = (
        m.checked_mul(k).ok_or_else(too_large)?,
        k.checked_mul(n).ok_or_else(too_large)?,
        m.checked_mul(n).ok_or_else(too_large)?,
    );
    same_len("gemm: A (m·k)", mk, a.len())?;
    same_len("gemm: B (k·n)", kn, b.len())?;
    same_len("gemm: C (m·n)", mn, c.len())?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    let a_t = matches!(spec.trans_a, Transpose::Yes);
    let b_t = matches!(spec.trans_b, Transpose::Yes);
    // Row strides of the stored matrices (row-major A m×k or k×m, B k×n or n×k).
    let lda = if a_t { m } else { k };
    let ldb = if b_t { k } else { n };
    // With k = 0 nothing is read: only C is scaled.
    let aligned = k == 0 || (lda % 8 == 0 && ldb % 8 == 0);
    let gpu = stream.gpu();
    let hopper = gpu.backend() == Backend::Cuda && gpu.compute_capability() == (9, 0);
    let wgmma = match instructions {
        Instructions::Auto => hopper && aligned,
        Instructions::MmaSync => false,
        Instructions::Wgmma if !(hopper || gpu.backend() == Backend::Cpu) => {
            let (major, minor) = gpu.compute_capability();
            return Err(Error::InvalidLaunch(format!(
                "gemm: wgmma needs a compute capability 9.0 GPU (Hopper); {} is {major}.{minor}",
                gpu.name()
            )));
        }
        Instructions::Wgmma if !aligned => {
            return Err(Error::InvalidLaunch(format!(
                "gemm: wgmma needs rows of A and B a multiple of 8 elements (16 bytes), not \
                 {lda} and {ldb}; Instructions::Auto runs such shapes on mma.sync"
            )));
        }
        Instructions::Wgmma => true,
    };
    // Tensor copies need a matrix to describe: with k = 0 (C only scaled) `mma.sync` serves.
    if wgmma && k > 0 {
        return super::tma::gemm_tma(
            stream,
            (a_t, b_t),
            (m, n, k, lda, ldb),
            (spec.alpha, spec.beta),
            a,
            b,
            c,
        );
    }
    let grid = Grid::try_x(m.div_ceil(BM) * n.div_ceil(BN))?;
    let shared = (STAGES * STAGE_WORDS * 4) as u32;
    let config = LaunchConfig::new(grid, Block::x(THREADS as u32)).with_shared_mem(shared);
    T::launch_gemm(
        stream,
        config,
        (a_t, b_t, aligned),
        (m, n, k, lda, ldb),
        (spec.alpha, spec.beta),
        a,
        b,
        c,
    )
}
