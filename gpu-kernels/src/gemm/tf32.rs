//! `f32` GEMM on Hopper's tensor cores with TF32 inputs, the opt-in of [`Gemm::allow_tf32`]
//! (PyTorch's `torch.backends.cuda.matmul.allow_tf32`).
//!
//! # Precision
//!
//! The tensor cores read each `f32` input as TF32: its sign, its 8 exponent bits and the top 10
//! of its 23 mantissa bits, the low 13 ignored, which truncates the value toward zero (relative
//! error below 2^-10, about 2^-11 on average). The products of the truncated inputs are exact
//! and are added in `f32`. An element of C therefore differs from the exact product by about
//! `2^-11 · sqrt(k) · rms(a·b)` for inputs of random sign (the truncation errors add as a random
//! walk), and never by more than `2^-9 · Σ|a·b|` (both inputs truncated) plus the rounding of
//! the `f32` sums.
//! The exponent range is `f32`'s, so nothing overflows or flushes that would not in `f32`. The
//! CPU backend runs the same kernel and truncates the same way, so both backends agree to the
//! order of `f32` additions. For results exact to `f32`, leave TF32 off (the default).
//!
//! # The kernel
//!
//! `gemm_tf32_wgmma` follows the 16-bit `wgmma` kernel of [`super::tensor_core`]: a block
//! computes a 128×256 tile of C with three warpgroups. The producer warpgroup fills four
//! shared-memory stages of 32-deep tiles (32 `f32` make the 128-byte row of the swizzle `wgmma`
//! reads, so each stage holds 48 KiB, 192 KiB in all), and each stage's "full" mbarrier
//! completes once they are in place; the two consumer warpgroups each multiply 64×256 of the tile
//! with four `wgmma.m64n256k8.tf32` per stage, keep one stage's multiplies in flight, and hand the
//! stage back through its "free" mbarrier. Blocks run in the grouped order of the other GEMMs.
//!
//! The plain `C = A·B` (A K-major, B N-major) does not run here: `tf32_rs` computes it
//! as `C^T = B^T·A^T` with B^T's fragments in registers, so nothing is transposed in shared
//! memory (this kernel's transposing producer reached 0.35-0.37 × cuBLAS on it at 4096³ and
//! 8192³, against 0.976 with both operands K-major). The `<0, 0>` instantiation is no longer
//! launched.
//!
//! PTX reads TF32 operands K-major only (the transpose immediates exist for 16-bit types
//! alone), so the two layouts differ in how a tile reaches shared memory:
//!
//! - a K-major operand (A as m×k, B as n×k) is copied with `cp.async`, 16 bytes at a time, as
//!   the 16-bit kernel does;
//! - an M- or N-major operand (A as k×m, and B as k×n: the plain `C = A·B` has one) is
//!   transposed on its way in: each producer thread loads 4×4 blocks (4 rows of k, 4 columns)
//!   with 16-byte loads into registers before it waits for the stage to be free, then stores
//!   each column's 4 values of k as one 16-byte chunk of the swizzled K-major row. The 8
//!   threads of a store phase hold the 8 chunks of k of one row, which the swizzle sends to 8
//!   distinct 16-byte bank groups: no bank conflicts. These are ordinary stores, which `wgmma`
//!   (the async proxy) sees only after `fence.proxy.async`, so each thread fences before it
//!   arrives on the stage's "full" barrier.
//!
//! The "full" barrier expects one arrival per producer thread for each way a stage is filled
//! (`cp.async` completion, and the stores): 128 or 256.
//!
//! Rows must start on 16-byte boundaries (lda and ldb multiples of 4), so every 16-byte chunk
//! lies wholly inside the matrix or wholly outside it (zeros): tails of m, n and k need no
//! element-wise path. Other shapes run on the `f32` CUDA-core kernels.
//!
//! Tuning: the configuration is the constants at the top of this file, which the kernel and
//! the host share (`STAGES` and `GROUP_M` are free; the tile shape follows the instruction).
//! Not yet measured on a GPU. What the design expects: the producer loads a tile's transposed
//! operand before it waits for the tile's stage, so in steady state (producer ahead) the load
//! latency hides behind that wait; it falls behind only if a load's latency plus the stores
//! exceed a stage's multiplies (about 1000 cycles at the tensor cores' TF32 peak). If it does,
//! load two tiles ahead: B of the plain `C = A·B` is 64 registers a tile, so two fit beside
//! the addresses, but A and B both transposed (96) do not. Each stage moves 48 KiB from L2 for
//! 2.1 MFLOP: twice the 16-bit kernel's bytes per FLOP at half its FLOP rate, the same L2
//! bandwidth; sharing tiles between blocks (cluster multicast) is what would cut it.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{Backend, Block, DeviceBuffer, Grid, LaunchConfig, Result, Stream};

use super::tensor_core::store_pair;
use super::{grouped_block_col, grouped_block_row, Gemm, Transpose};

// The configuration, read by the kernel and the host alike. BM, BN and BK are structural: two
// consumer warpgroups of `wgmma.m64n256k8` (BN = 256, 128 accumulators a thread) and BK = 32
// f32, one 128-byte row of the swizzle; the layout code assumes them. STAGES and GROUP_M are
// the knobs: 4 stages of 48 KiB (192 KiB) is the most that fits in 227 KiB of shared memory,
// and 8 block rows per group is the 16-bit kernel's measured choice, the same B columns reused
// from L2 by 8 blocks.

/// Rows of C per block.
const BM: usize = 128;
/// Columns of C per block.
const BN: usize = 256;
/// k per stage: 32 f32, one 128-byte swizzle row.
const BK: usize = 32;
/// Tiles of A and B in flight.
const STAGES: usize = 4;
/// Block rows that sweep the block columns together (grouped order).
const GROUP_M: usize = 8;
/// Threads per block: one producer and two consumer warpgroups.
const THREADS: u32 = 384;
/// Words (f32) of A's tile in a stage.
const A_WORDS: usize = BM * BK;
/// Words (f32) of shared memory per stage: A's tile, then B's (BN×BK).
const STAGE_WORDS: usize = (BM + BN) * BK;

/// `C = alpha·op(A)·op(B) + beta·C` in TF32 on Hopper; `A_T`/`B_T` 1 for k×m A / n×k B. Rows
/// of A and B start on 16-byte boundaries (lda, ldb multiples of 4).
#[kernel(launch_bounds(384, 1))]
fn gemm_tf32_wgmma<const A_T: usize, const B_T: usize>(
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldb: usize,
    alpha: f32,
    beta: f32,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    // K-major tiles: 16-byte chunks per producer thread.
    const A_COPIES: usize = BM * BK / 4 / 128;
    const B_COPIES: usize = BN * BK / 4 / 128;
    // M- or N-major tiles: 4×4 blocks per producer thread (each pass of the warpgroup covers
    // 64 columns by the 32 k of the tile).
    const A_BLOCKS: usize = BM / 64;
    const B_BLOCKS: usize = BN / 64;
    let smem = dynamic_shared::<f32>();
    // Barriers s < STAGES: stage s is full; STAGES + s: stage s is free again.
    let bars = shared_array::<u64, { 2 * STAGES }>();
    let tid = thread_idx().x as usize;
    let group = tid / 128;
    let grid_m = (m + BM - 1) / BM;
    let grid_n = (n + BN - 1) / BN;
    let pid = block_idx().x as usize;
    let block_m = grouped_block_row(pid, grid_m, grid_n, GROUP_M) * BM;
    let block_n = grouped_block_col(pid, grid_m, grid_n, GROUP_M) * BN;
    let tiles = (k + BK - 1) / BK;
    // How a stage is filled: by cp.async (a K-major operand), by stores (an M- or N-major one).
    let copies = A_T == 0 || B_T == 1;
    let stores = A_T == 1 || B_T == 0;
    if tid == 0 {
        let ways = if copies && stores { 2 } else { 1 };
        for s in 0..STAGES {
            // Full: one arrival per producer thread and way of filling.
            mbarrier_init(bars, s, 128 * ways);
            // Free: one arrival per consumer warp, once its warpgroup's MMAs are done.
            mbarrier_init(bars, STAGES + s, 8);
        }
    }
    sync_threads();
    if group == 0 {
        // The producer. Layout of a tile (128-byte swizzle: 16-byte chunk c of 128-byte row r
        // is stored at chunk c ^ (r % 8)): one row of 32 k per row of m (A) or n (B).
        // cp.async: this thread copies chunk `chunk` of rows `row0 + 16r`.
        let row0 = tid / 8;
        let chunk = tid % 8;
        let a_src = (block_m + row0) * lda + chunk * 4;
        let b_src = (block_n + row0) * ldb + chunk * 4;
        // Stores: this thread transposes rows 4·chunk.. of k of columns `col0 + 64r`.., 4×4
        // at a time; the 8 threads of a store phase share the column and differ in the chunk.
        // Their offsets in A and B move by BK rows a tile: one add, no multiply by lda or ldb
        // per load (kr · lda for kr < 4 is the same every tile).
        let col0 = 4 * (tid / 8);
        let mut a_mn = chunk * 4 * lda + block_m + col0;
        let mut b_mn = chunk * 4 * ldb + block_n + col0;
        for i in 0..tiles {
            let s = i % STAGES;
            let k0 = i * BK;
            // Load the M- or N-major blocks first: registers need no free stage, so the loads
            // are in flight while the producer waits for one.
            let mut va = [0.0f32; { BM / 4 }];
            let mut vb = [0.0f32; { BN / 4 }];
            if A_T == 1 {
                #[unroll]
                for r in 0..A_BLOCKS {
                    #[unroll]
                    for kr in 0..4 {
                        if k0 + chunk * 4 + kr < k && block_m + col0 + 64 * r < m {
                            let v = a.load4(a_mn + kr * lda + 64 * r);
                            #[unroll]
                            for j in 0..4 {
                                va[r * 16 + kr * 4 + j] = v[j];
                            }
                        }
                    }
                }
            }
            if B_T == 0 {
                #[unroll]
                for r in 0..B_BLOCKS {
                    #[unroll]
                    for kr in 0..4 {
                        if k0 + chunk * 4 + kr < k && block_n + col0 + 64 * r < n {
                            let v = b.load4(b_mn + kr * ldb + 64 * r);
                            #[unroll]
                            for j in 0..4 {
                                vb[r * 16 + kr * 4 + j] = v[j];
                            }
                        }
                    }
                }
            }
            a_mn += BK * lda;
            b_mn += BK * ldb;
            if i >= STAGES {
                mbarrier_wait(bars, STAGES + s, ((i / STAGES + 1) % 2) as u32);
            }
            let a_base = s * STAGE_WORDS;
            let b_base = a_base + A_WORDS;
            if A_T == 0 {
                #[unroll]
                for r in 0..A_COPIES {
                    let row = row0 + 16 * r;
                    let dst = a_base + row * 32 + (chunk ^ (row0 % 8)) * 4;
                    let valid = block_m + row < m && k0 + chunk * 4 < k;
                    cp_async_16(smem, dst, a, a_src + r * 16 * lda + k0, valid);
                }
            }
            if B_T == 1 {
                #[unroll]
                for r in 0..B_COPIES {
                    let row = row0 + 16 * r;
                    let dst = b_base + row * 32 + (chunk ^ (row0 % 8)) * 4;
                    let valid = block_n + row < n && k0 + chunk * 4 < k;
                    cp_async_16(smem, dst, b, b_src + r * 16 * ldb + k0, valid);
                }
            }
            if copies {
                cp_async_mbarrier_arrive(bars, s);
            }
            if A_T == 1 {
                #[unroll]
                for r in 0..A_BLOCKS {
                    #[unroll]
                    for j in 0..4 {
                        let row = col0 + 64 * r + j;
                        let dst = a_base + row * 32 + (chunk ^ (row % 8)) * 4;
                        let v = [
                            va[r * 16 + j],
                            va[r * 16 + 4 + j],
                            va[r * 16 + 8 + j],
                            va[r * 16 + 12 + j],
                        ];
                        smem.store4(dst, v);
                    }
                }
            }
            if B_T == 0 {
                #[unroll]
                for r in 0..B_BLOCKS {
                    #[unroll]
                    for j in 0..4 {
                        let row = col0 + 64 * r + j;
                        let dst = b_base + row * 32 + (chunk ^ (row % 8)) * 4;
                        let v = [
                            vb[r * 16 + j],
                            vb[r * 16 + 4 + j],
                            vb[r * 16 + 8 + j],
                            vb[r * 16 + 12 + j],
                        ];
                        smem.store4(dst, v);
                    }
                }
            }
            if stores {
                // Ordinary stores reach wgmma (the async proxy) only through this fence.
                fence_proxy_async();
                mbarrier_arrive(bars, s);
            }
        }
        if copies {
            cp_async_wait(0);
        }
    } else {
        // Consumer warpgroup g (1 or 2) multiplies rows 64(g - 1).. of the tile.
        let rows = group - 1;
        let mut acc = [0.0f32; 128];
        for j in 0..tiles {
            let s = j % STAGES;
            mbarrier_wait(bars, s, ((j / STAGES) % 2) as u32);
            fence_proxy_async();
            let a_base = s * STAGE_WORDS;
            let b_base = a_base + A_WORDS;
            wgmma_fence();
            #[unroll]
            for kk in 0..BK / 8 {
                // A step of 8 k: 32 bytes along the K-major rows.
                let da = wgmma_desc(smem, a_base + rows * 64 * BK + kk * 8, 8192, 1024);
                let db = wgmma_desc(smem, b_base + kk * 8, 8192, 1024);
                wgmma_m64n256k8_tf32(&mut acc, smem, da, db, true);
            }
            wgmma_commit();
            // This tile's MMAs stay in flight; the previous tile's are done, so its stage goes
            // back to the producer.
            wgmma_wait(1, &mut acc);
            if j > 0 && tid % 32 == 0 {
                mbarrier_arrive(bars, STAGES + (j - 1) % STAGES);
            }
        }
        wgmma_wait(0, &mut acc);
        // Thread (warp w of its warpgroup, lane l) holds rows 16w + l / 4 and 8 below, columns
        // 8j + 2(l % 4) and the next, for j in 0..32.
        let row = block_m + rows * 64 + ((tid % 128) / 32) * 16 + (tid % 32) / 4;
        let col = block_n + 2 * (tid % 4);
        #[unroll]
        for j in 0..32 {
            store_pair(
                c,
                m,
                n,
                row,
                col + 8 * j,
                alpha * acc[4 * j],
                alpha * acc[4 * j + 1],
                beta,
            );
            store_pair(
                c,
                m,
                n,
                row + 8,
                col + 8 * j,
                alpha * acc[4 * j + 2],
                alpha * acc[4 * j + 3],
                beta,
            );
        }
    }
}

/// The TF32 kernel with every template instantiation it is launched with: the three layouts
/// other than the plain `C = A·B` (whose kernel, in `tf32_rs`, takes no template
/// arguments and is listed by `gemm::kernels()`).
pub fn instantiations() -> Vec<(
    &'static gpu_dsl_runtime::Kernel,
    Vec<gpu_dsl_runtime::TemplateArg>,
)> {
    use gpu_dsl_runtime::TemplateArg;
    let mut all = Vec::new();
    for (a_t, b_t) in [(0u64, 1u64), (1, 0), (1, 1)] {
        all.push((
            &gemm_tf32_wgmma::KERNEL,
            vec![TemplateArg::Const(a_t), TemplateArg::Const(b_t)],
        ));
    }
    all
}

/// The row strides of A and B as stored (row-major A m×k or k×m, B k×n or n×k).
fn strides(spec: &Gemm) -> (usize, usize) {
    let lda = match spec.trans_a {
        Transpose::No => spec.k,
        Transpose::Yes => spec.m,
    };
    let ldb = match spec.trans_b {
        Transpose::No => spec.n,
        Transpose::Yes => spec.k,
    };
    (lda, ldb)
}

/// Whether [`gemm_tf32`] runs `spec` on this stream's device: a compute capability 9.0 GPU
/// (Hopper's `wgmma`) or the CPU backend, with every row of A and B 16 bytes aligned (lda and
/// ldb multiples of 4).
pub(crate) fn runs(stream: &Stream, spec: &Gemm) -> bool {
    let gpu = stream.gpu();
    let device = match gpu.backend() {
        Backend::Cpu => true,
        Backend::Cuda => gpu.compute_capability() == (9, 0),
    };
    let (lda, ldb) = strides(spec);
    device && lda % 4 == 0 && ldb % 4 == 0
}

/// Runs `spec` (checked by the caller, not empty, and one [`runs`] accepts) on the TF32 kernel.
pub(crate) fn gemm_tf32(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let Gemm { m, n, k, .. } = *spec;
    let (lda, ldb) = strides(spec);
    let grid = Grid::try_x(m.div_ceil(BM) * n.div_ceil(BN))?;
    let shared = (STAGES * STAGE_WORDS * 4) as u32;
    let config = LaunchConfig::new(grid, Block::x(THREADS)).with_shared_mem(shared);
    let (alpha, beta) = (spec.alpha, spec.beta);
    match (spec.trans_a, spec.trans_b) {
        // B N-major, A K-major: registers take B^T, nothing is transposed in shared memory.
        (Transpose::No, Transpose::No) => super::tf32_rs::launch_plain(stream, spec, a, b, c),
        (Transpose::No, Transpose::Yes) => {
            gemm_tf32_wgmma::launch::<0, 1>(stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c)
        }
        (Transpose::Yes, Transpose::No) => {
            gemm_tf32_wgmma::launch::<1, 0>(stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c)
        }
        (Transpose::Yes, Transpose::Yes) => {
            gemm_tf32_wgmma::launch::<1, 1>(stream, config, m, n, k, lda, ldb, alpha, beta, a, b, c)
        }
    }
}
