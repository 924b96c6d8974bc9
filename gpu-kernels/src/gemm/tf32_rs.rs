//! The TF32 GEMM for the plain `C = A·B` (A row-major m×k, B row-major k×n): `C^T = B^T·A^T`
//! with `wgmma`'s A operand, B^T, in registers.
//!
//! # Why
//!
//! PTX reads shared-memory TF32 operands K-major only, and B of the plain product is N-major,
//! so [`super::tf32`]'s kernel transposes it through registers on its way into shared memory.
//! Per stage that costs, besides the 48 KiB `cp.async` would write, 64 KiB more of shared-memory
//! reads and writes, beside the ~80 KiB `wgmma` reads: more traffic than a stage's multiplies
//! take time for (0.35-0.37 × cuBLAS where the K-major layouts reach 0.976, and deeper
//! transposing producers were slower still).
//!
//! `wgmma` can take its A operand from registers instead, and registers may be loaded from
//! any layout. So this kernel computes the transposed product, whose M side is n and N side
//! is m:
//!
//! - `wgmma`'s A (64×8 per instruction, rows of n): fragments of B^T, which each consumer
//!   thread loads with two 8-byte shared loads per instruction from B's tile exactly as
//!   `cp.async` copied it (`[k][n]`, n contiguous): the instruction's rows stand for the n
//!   that put a thread's two rows side by side. Rows of the tile are padded from 128 to 136
//!   words, so each half-warp of a load (8 pairs of n by 4 k) hits 32 distinct banks.
//! - `wgmma`'s B (8×256 per instruction, rows of m): A^T, which is A's row-major tile read
//!   K-major, copied by a tensor copy into the 128-byte swizzle the other kernel's `cp.async`
//!   copies produce for a K-major operand, and read through a descriptor.
//! - The accumulators hold C^T: a thread's element (n, m) is written to `C[m][n]`.
//!
//! Nothing is transposed through shared memory: per stage `cp.async` writes 48 KiB and the
//! tensor cores and the fragment loads read 80 KiB, the K-major kernel's traffic.
//!
//! # The kernel
//!
//! A block computes a 256×128 tile of C (256 rows of m: one `wgmma.m64n256k8` covers them; 128
//! columns of n: 64 per consumer warpgroup) with one producer and two consumer warpgroups,
//! four stages of 32-deep tiles (A 256×32 swizzled, 32 KiB; B 32×136 words, 17 KiB: 49 KiB a
//! stage, 196 KiB in all), "full" and "free" mbarriers as in [`super::tf32`], blocks in the
//! grouped order (8 block rows, so a wave's A and B footprints are about square).
//!
//! A `wgmma` reads its register operand asynchronously: the registers must stay unwritten until
//! a `wgmma_wait` covers it. Each consumer therefore commits every instruction as its own group
//! and waits until one is left in flight before it loads the next fragment: two instructions'
//! fragments (8 registers) are live beside the 128 accumulators, where keeping a whole tile's
//! four in flight, as the shared-memory kernel does, would hold 32 and exceed the 168
//! registers a thread of a 384-thread block may have. A stage goes back to the producer once
//! the first instruction of the next tile has been issued and waited down to one, which leaves
//! only that instruction in flight.
//!
//! The epilogue stores C^T's elements in pairs along n, 8 bytes at a time: a warp's store
//! covers 16 consecutive n of 4 rows of m, 64 contiguous bytes a row.
//!
//! Rows of A and B start on 16-byte boundaries (k and n multiples of 4), as for the other
//! kernel: every 16-byte chunk lies wholly inside or outside the matrix. The case A transposed
//! with B N-major stays on [`super::tf32`]'s transposing producer.
//!
//! Measured on an H100 (the generated CUDA compiled alone with the same ptxas, 162 registers,
//! no spills; in the SASS the fragments alternate between two register quads and each
//! `HGMMA` is followed by `WARPGROUP.DEPBAR.LE gsb0, 0x1`, so nothing is serialized), against
//! cuBLAS's TF32 GEMM in the same run: 329 TFLOP/s at 4096³ (0.82 × cuBLAS; the transposing
//! producer gave 0.35), 290-332 at 8192³ (0.77-0.96, cuBLAS itself varying 347-379 from run
//! to run), and C within `f32` rounding of the truncated inputs' product at every shape
//! checked, 4096³ included. The 8-byte fragment loads and stores won 3% over 4-byte ones (320
//! TFLOP/s at 4096³). What is left to the K-major kernel's 0.976 is most likely the shallower
//! `wgmma` pipeline: two instructions in flight a warpgroup, not a tile's four and the next
//! tile's.
//!
//! What lost: three instructions in flight (`wgmma_wait(2, ..)`, the stage released after a
//! tile's second): ptxas runs out of registers for the third fragment and serializes every
//! `wgmma` (its C7512 warning), 0.78 × cuBLAS at 4096³ and 0.71-0.83 at 8192³. The same with
//! `setmaxnreg` giving the consumers 232 registers and the producer 40: no change (334.7-337.8
//! TFLOP/s at 4096³ against 336.1-336.5 in the same runs), so the fragments' pipeline depth is
//! not what holds this kernel back either.
//!
//! The epilogue's pairs are what is left of the kernel's limit: without any stores (timing only)
//! it ran 362-364 TFLOP/s at 4096³ against 335-338. Quads instead (lanes 4 apart swapping the
//! pair of the row they do not store by two shuffles, then one 16-byte store): 327-328 against
//! 337-338 in the same runs, slower.
//!
//! The grid has a block per multiprocessor (fewer for small products), each striding over C's
//! tiles in the grouped order with stage use counted across tiles, so the producer fills the
//! next tile's stages while the consumers store this one (the last stage of a tile goes back
//! before the stores). Against a block per tile, in one call, alternating (H100, TFLOP/s):
//! 327.1 and 338.9 at 4096³ against 327.0 and 328.0; at 8192³ 320.2 and 328.1 against 325.3
//! and 319.9, within cuBLAS's own spread there (0.864-0.867 and 0.866-0.903 × cuBLAS against
//! 0.843-0.844 and 0.830-0.901).
//!
//! A's tile arrives by one tensor copy (`tma_load_2d`, 256×32 in the 128-byte swizzle), B's by
//! the producer warpgroup's `cp.async`: 339-340 TFLOP/s at 4096³ and 333-335 at 8192³ against
//! 328-330 and 288-307 when `cp.async` copied both (H100, same runs).

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{
    Block, DeviceBuffer, Grid, LaunchConfig, Result, Stream, Swizzle, TensorMap,
};

use super::tensor_core::store_pair;
use super::{grouped_block_col, grouped_block_row, Gemm};

/// Rows of C (m) per block: `wgmma`'s N side.
const BM: usize = 256;
/// Columns of C (n) per block: 64 (`wgmma`'s M side) per consumer warpgroup.
const BN: usize = 128;
/// k per stage: 32 f32, one 128-byte swizzle row of A's tile.
const BK: usize = 32;
/// Words per k-row of B's tile: 128 n and 8 of padding, so fragment loads are conflict-free.
const B_ROW: usize = BN + 8;
/// Tiles in flight.
const STAGES: usize = 4;
/// Block rows that sweep the block columns together (grouped order).
const GROUP_M: usize = 8;
/// Threads per block: one producer and two consumer warpgroups.
const THREADS: u32 = 384;
/// Words (f32) of A's tile in a stage.
const A_WORDS: usize = BM * BK;
/// Words (f32) of shared memory per stage: A's tile, then B's; 49 KiB, a multiple of the
/// swizzle's 1024 bytes, so every stage's A starts on its pattern.
const STAGE_WORDS: usize = A_WORDS + BK * B_ROW;

/// `C = alpha·A·B + beta·C` in TF32 on Hopper for row-major A (m×k) and B (k×n), k and n
/// multiples of 4, as `C^T = B^T·A^T` with B^T's fragments in registers.
#[kernel(launch_bounds(384, 1))]
fn gemm_tf32_rs(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    beta: f32,
    a: &TensorMap<f32>,
    b: &[f32],
    c: &mut [f32],
) {
    // 16-byte chunks of B's 32 rows of 32 per producer thread.
    const B_COPIES: usize = BK * BN / 4 / 128;
    let smem = dynamic_shared::<f32>();
    // Barriers s < STAGES: stage s is full; STAGES + s: stage s is free again.
    let bars = shared_array::<u64, { 2 * STAGES }>();
    let tid = thread_idx().x as usize;
    let group = tid / 128;
    let grid_m = (m + BM - 1) / BM;
    let grid_n = (n + BN - 1) / BN;
    let total = grid_m * grid_n;
    let blocks = grid_dim().x as usize;
    let tiles = (k + BK - 1) / BK;
    if tid == 0 {
        for s in 0..STAGES {
            // Full: one `cp.async` completion per producer thread, and thread 0's announcement
            // of A's tensor copy.
            mbarrier_init(bars, s, 129);
            // Free: one arrival per consumer thread, once its loads from the stage are done
            // (compute-sanitizer's racecheck reported lane 0's arrival for its warp, even after
            // a `sync_warp()`, as racing with the producer's next copies).
            mbarrier_init(bars, STAGES + s, 256);
        }
    }
    sync_threads();
    if group == 0 {
        // The producer. A: thread 0's tensor copy of the 256×32 box, 128-byte swizzled (chunk c
        // of row r at c ^ (r % 8)). B: chunk `b_chunk` (4 n) of k-rows `b_row0 + 4r`, a warp
        // copying 512 contiguous bytes of one row.
        let b_row0 = tid / 32;
        let b_chunk = tid % 32;
        let mut it = 0;
        let mut tile = block_idx().x as usize;
        while tile < total {
            let block_m = grouped_block_row(tile, grid_m, grid_n, GROUP_M) * BM;
            let block_n = grouped_block_col(tile, grid_m, grid_n, GROUP_M) * BN;
            let b_col = block_n + b_chunk * 4;
            for i in 0..tiles {
                let s = it % STAGES;
                let k0 = i * BK;
                if it >= STAGES {
                    mbarrier_wait(bars, STAGES + s, ((it / STAGES + 1) % 2) as u32);
                }
                let a_base = s * STAGE_WORDS;
                let b_base = a_base + A_WORDS;
                if tid == 0 {
                    mbarrier_arrive_expect_tx(bars, s, (A_WORDS * 4) as u32);
                    tma_load_2d(smem, a_base, a, k0 as i32, block_m as i32, bars, s);
                }
                #[unroll]
                for r in 0..B_COPIES {
                    let row = b_row0 + 4 * r;
                    let dst = b_base + row * B_ROW + b_chunk * 4;
                    let valid = k0 + row < k && b_col < n;
                    cp_async_16(smem, dst, b, (k0 + row) * n + b_col, valid);
                }
                cp_async_mbarrier_arrive(bars, s);
                it += 1;
            }
            tile += blocks;
        }
        cp_async_wait(0);
    } else {
        // Consumer warpgroup g (1 or 2) computes columns 64(g - 1).. of the block's n. Thread
        // (warp w of its warpgroup, lane l) holds rows 16w + l / 4 and 8 below of each
        // instruction's 64; which n a row stands for is free (A's rows and C^T's go together),
        // so they are n = `nr` = 16w + 2(l / 4) and the next: each fragment is two 8-byte loads
        // (rows of k = l % 4 and 4 further), each pair of C one 8-byte store.
        let nr = (group - 1) * 64 + ((tid % 128) / 32) * 16 + 2 * ((tid % 32) / 4);
        let q = tid % 4;
        let mut it = 0;
        let mut tile = block_idx().x as usize;
        while tile < total {
            let block_m = grouped_block_row(tile, grid_m, grid_n, GROUP_M) * BM;
            let block_n = grouped_block_col(tile, grid_m, grid_n, GROUP_M) * BN;
            let mut acc = [0.0f32; 128];
            for j in 0..tiles {
                let s = it % STAGES;
                mbarrier_wait(bars, s, ((it / STAGES) % 2) as u32);
                // A's tile came through the async proxy that wgmma reads with; B's fragments
                // are plain shared loads.
                let a_base = s * STAGE_WORDS;
                let b_base = a_base + A_WORDS;
                #[unroll]
                for kk in 0..BK / 8 {
                    let at = b_base + (8 * kk + q) * B_ROW + nr;
                    let lo = smem.load2(at);
                    let hi = smem.load2(at + 4 * B_ROW);
                    let frag = [lo[0], lo[1], hi[0], hi[1]];
                    // Orders the fragment's loads before the wgmma that reads the registers.
                    wgmma_fence();
                    // A step of 8 k: 32 bytes along A's K-major rows.
                    let da = wgmma_desc(smem, a_base + kk * 8, 8192, 1024);
                    wgmma_m64n256k8_tf32_rs(&mut acc, frag, smem, da, true);
                    wgmma_commit();
                    // The previous instruction is done, so its fragment registers may be
                    // reused; after a tile's first, that is the previous tile's last, so its
                    // stage is free.
                    wgmma_wait(1, &mut acc);
                    if kk == 0 && j > 0 {
                        // Every consumer thread arrives: an arrival releases only the arriving
                        // thread's own loads from the stage.
                        mbarrier_arrive(bars, STAGES + (it - 1) % STAGES);
                    }
                }
                it += 1;
            }
            wgmma_wait(0, &mut acc);
            // The tile's last stage goes back before the stores, so the producer fills the
            // next tile's stages while they run.
            mbarrier_arrive(bars, STAGES + (it - 1) % STAGES);
            // acc[4j + i] is C^T[nr + i / 2][8j + 2q + i % 2] of the tile: C[m][n] with m that
            // column, so acc[4j + b] and acc[4j + 2 + b] are a pair along a row of C.
            let row = block_m + 2 * q;
            let col = block_n + nr;
            #[unroll]
            for j in 0..32 {
                #[unroll]
                for b in 0..2 {
                    let (v0, v1) = (alpha * acc[4 * j + b], alpha * acc[4 * j + 2 + b]);
                    store_pair(c, m, n, row + 8 * j + b, col, v0, v1, beta);
                }
            }
            tile += blocks;
        }
    }
}

/// The kernels of this module (no template arguments).
pub(crate) const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[&gemm_tf32_rs::KERNEL];

/// Runs the plain `C = A·B` of `spec` (checked by the caller, not empty, k and n multiples of
/// 4) on the register-fragment kernel.
pub(crate) fn launch_plain(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let Gemm { m, n, k, .. } = *spec;
    let tiles = m.div_ceil(BM) * n.div_ceil(BN);
    let sms = stream.gpu().sm_count().max(1) as usize;
    let grid = Grid::try_x(tiles.min(sms))?;
    let shared = (STAGES * STAGE_WORDS * 4) as u32;
    let config = LaunchConfig::new(grid, Block::x(THREADS)).with_shared_mem(shared);
    let (alpha, beta) = (spec.alpha, spec.beta);
    let a_map = TensorMap::new_2d(a, [m, k], k, [BM as u32, BK as u32], Swizzle::B128)?;
    gemm_tf32_rs::launch(stream, config, m, n, k, alpha, beta, &a_map, b, c)
}
