//! The Hopper half-precision GEMM fed by tensor copies (TMA): one producer thread issues a
//! stage's copies of A and B (`tma_load_2d`, 128-byte swizzled, zeros beyond the matrix) and
//! announces their bytes on the stage's "full" mbarrier; two consumer warpgroups multiply
//! 64×256 each with `wgmma.m64n256k16` straight from shared memory, as in
//! [`super::tensor_core`]'s `cp.async` kernel, whose layout the copies reproduce: a k-contiguous
//! operand is one box of 64-wide rows, an m- or n-contiguous one a box per 64 columns, 8 KiB
//! apart. The grid has a block per multiprocessor (fewer for small products), each striding over
//! C's tiles in the grouped order; stage use is counted across tiles, so the producer fills the
//! next tile's stages while the consumers store this one.
//!
//! The epilogue stores each thread's pairs of C with one 8-byte store where C's rows start on
//! 8-byte boundaries (n even), so the four lanes of a row fill a 32-byte sector: the stores
//! had been the kernel's limit. Without any stores (timing only) the kernel ran 753-766
//! TFLOP/s (f16) at 4096³ against 568-582 with two 4-byte stores a pair; with the 8-byte
//! stores, 681-684 (0.94 of cuBLAS in the same runs) and 722-725 at 8192³ (0.98-1.01); bf16
//! 688-706 (0.92-0.94) and 753-760 (1.00-1.02).
//!
//! Before that, with 4-byte stores, six runs: f16 557-574 TFLOP/s at 4096³ (0.78-0.81) and
//! 646-670 at 8192³ (0.89-1.03, cuBLAS itself moving between 647 and 724); bf16 576-586 and
//! 676-699. The `cp.async` producer warpgroup the tensor copies replaced gave 502-514 and
//! 568-594 in the same calls. One tile per block (a grid of every tile) against the striding
//! grid: within 2% either way. Half the multiprocessors (66 blocks) ran 21% faster each, a
//! quarter 26%. Under ncu at 4096³ the tensor pipe was busy 74% of the active cycles.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{
    Block, DeviceBuffer, Grid, LaunchConfig, Result, Scalar, Stream, Swizzle, TensorMap,
};

use super::tensor_core::store_pair;
use super::{grouped_block_col, grouped_block_row};

/// Rows of C per block.
const BM: usize = 128;
/// Columns of C per block.
const BN: usize = 256;
/// Stages of A and B tiles in flight.
const STAGES: usize = 4;
/// Bytes per stage: a 128×64 tile of A and a 256×64 tile of B, two bytes an element.
const STAGE_BYTES: usize = (BM + BN) * 64 * 2;

macro_rules! tma_gemm {
    ($(#[$attr:meta])* $name:ident, $elem:ident, $wgmma:ident) => {
        $(#[$attr])*
        #[kernel(launch_bounds(384, 1))]
        fn $name<const A_T: usize, const B_T: usize>(
            m: usize,
            n: usize,
            k: usize,
            alpha: f32,
            beta: f32,
            a: &TensorMap<$elem>,
            b: &TensorMap<$elem>,
            c: &mut [f32],
        ) {
            const BM: usize = 128;
            const BN: usize = 256;
            const BK: usize = 64;
            const STAGES: usize = 4;
            // Words per stage; A's tile comes first (4096 words, 16 KiB).
            const STAGE_WORDS: usize = 12288;
            const A_WORDS: usize = 4096;
            // A 64×64 box: 8 KiB.
            const BOX_WORDS: usize = 2048;
            const GROUP_M: usize = 8;
            let smem = dynamic_shared::<u32>();
            // Barriers 0..4: stage s is full; 4..8: stage s is free again.
            let bars = shared_array::<u64, 8>();
            let tid = thread_idx().x as usize;
            let group = tid / 128;
            let grid_m = (m + BM - 1) / BM;
            let grid_n = (n + BN - 1) / BN;
            let total = grid_m * grid_n;
            let blocks = grid_dim().x as usize;
            let k_tiles = (k + BK - 1) / BK;
            if tid == 0 {
                for s in 0..STAGES {
                    // Full: the producer's one arrival, with the stage's bytes.
                    mbarrier_init(bars, s, 1);
                    // Free: one arrival per consumer warp, once its warpgroup's MMAs are done.
                    mbarrier_init(bars, STAGES + s, 8);
                }
            }
            sync_threads();
            // The block strides over C's tiles; stage use is counted across them (`it`), so the
            // producer fills the next tile's stages while the consumers store this one.
            if group == 0 {
                if tid == 0 {
                    let mut it = 0;
                    let mut tile = block_idx().x as usize;
                    while tile < total {
                        let block_m = grouped_block_row(tile, grid_m, grid_n, GROUP_M) * BM;
                        let block_n = grouped_block_col(tile, grid_m, grid_n, GROUP_M) * BN;
                        for i in 0..k_tiles {
                            let s = it % STAGES;
                            if it >= STAGES {
                                mbarrier_wait(bars, STAGES + s, ((it / STAGES + 1) % 2) as u32);
                            }
                            let k0 = (i * BK) as i32;
                            let a_base = s * STAGE_WORDS;
                            let b_base = a_base + A_WORDS;
                            mbarrier_arrive_expect_tx(bars, s, 49152);
                            if A_T == 0 {
                                tma_load_2d(smem, a_base, a, k0, block_m as i32, bars, s);
                            } else {
                                for j in 0..2 {
                                    let x = (block_m + 64 * j) as i32;
                                    tma_load_2d(smem, a_base + j * BOX_WORDS, a, x, k0, bars, s);
                                }
                            }
                            if B_T == 1 {
                                tma_load_2d(smem, b_base, b, k0, block_n as i32, bars, s);
                            } else {
                                for j in 0..4 {
                                    let x = (block_n + 64 * j) as i32;
                                    tma_load_2d(smem, b_base + j * BOX_WORDS, b, x, k0, bars, s);
                                }
                            }
                            it += 1;
                        }
                        tile += blocks;
                    }
                }
            } else {
                // Consumer warpgroup g (1 or 2) multiplies rows 64(g - 1).. of each tile.
                let rows = group - 1;
                let mut it = 0;
                let mut tile = block_idx().x as usize;
                while tile < total {
                    let block_m = grouped_block_row(tile, grid_m, grid_n, GROUP_M) * BM;
                    let block_n = grouped_block_col(tile, grid_m, grid_n, GROUP_M) * BN;
                    let mut acc = [0.0f32; 128];
                    for j in 0..k_tiles {
                        let s = it % STAGES;
                        mbarrier_wait(bars, s, ((it / STAGES) % 2) as u32);
                        let a_base = s * STAGE_WORDS;
                        let b_base = a_base + A_WORDS;
                        wgmma_fence();
                        #[unroll]
                        for kk in 0..BK / 16 {
                            // A step of 16 k: 32 bytes along a k-contiguous row, 16 rows
                            // (2 KiB) down an m- or n-contiguous tile.
                            let a_at = if A_T == 0 {
                                a_base + rows * 2048 + kk * 8
                            } else {
                                a_base + rows * 2048 + kk * 512
                            };
                            let b_at = if B_T == 1 { b_base + kk * 8 } else { b_base + kk * 512 };
                            let da = wgmma_desc(smem, a_at, 8192, 1024);
                            let db = wgmma_desc(smem, b_at, 8192, 1024);
                            $wgmma(&mut acc, smem, da, db, true, A_T, 1 - B_T);
                        }
                        wgmma_commit();
                        // This tile's MMAs stay in flight; the previous tile's are done, so its
                        // stage goes back to the producer.
                        wgmma_wait(1, &mut acc);
                        if j > 0 && tid % 32 == 0 {
                            mbarrier_arrive(bars, STAGES + (it - 1) % STAGES);
                        }
                        it += 1;
                    }
                    wgmma_wait(0, &mut acc);
                    if tid % 32 == 0 {
                        mbarrier_arrive(bars, STAGES + (it - 1) % STAGES);
                    }
                    // Thread (warp w of its warpgroup, lane l) holds rows 16w + l / 4 and 8
                    // below, columns 8j + 2(l % 4) and the next, for j in 0..32.
                    let row = block_m + rows * 64 + ((tid % 128) / 32) * 16 + (tid % 32) / 4;
                    let col = block_n + 2 * (tid % 4);
                    // Where C's rows start on 8-byte boundaries each pair is one store, and the
                    // four lanes of a row fill a 32-byte sector.
                    #[unroll]
                    for j in 0..32 {
                        store_pair(c, m, n, row, col + 8 * j, alpha * acc[4 * j], alpha * acc[4 * j + 1], beta);
                        store_pair(c, m, n, row + 8, col + 8 * j, alpha * acc[4 * j + 2], alpha * acc[4 * j + 3], beta);
                    }
                    tile += blocks;
                }
            }
        }
    };
}

tma_gemm!(
    /// `C = alpha·op(A)·op(B) + beta·C` for `f16` on Hopper: tensor copies into a 4-stage
    /// pipeline, two `wgmma` consumer warpgroups of 64×256; `A_T`/`B_T` 1 for k×m A / n×k B.
    gemm_f16_tma,
    f16,
    wgmma_m64n256k16_f16
);
tma_gemm!(
    /// [`gemm_f16_tma`] for `bf16`.
    gemm_bf16_tma,
    bf16,
    wgmma_m64n256k16_bf16
);

/// The TMA kernels with every template instantiation they are launched with.
pub(super) fn instantiations() -> Vec<(
    &'static gpu_dsl_runtime::Kernel,
    Vec<gpu_dsl_runtime::TemplateArg>,
)> {
    use gpu_dsl_runtime::TemplateArg;
    let mut all = Vec::new();
    for kernel in [&gemm_f16_tma::KERNEL, &gemm_bf16_tma::KERNEL] {
        for a_t in 0..2u64 {
            for b_t in 0..2u64 {
                all.push((
                    kernel,
                    vec![TemplateArg::Const(a_t), TemplateArg::Const(b_t)],
                ));
            }
        }
    }
    all
}

/// The 16-bit input types, with their TMA kernels.
pub(super) trait TmaHalf: Scalar {
    /// Launches this type's kernel for the layout (A transposed, B transposed).
    #[allow(clippy::too_many_arguments)]
    fn launch_tma(
        stream: &Stream,
        config: LaunchConfig,
        layout: (bool, bool),
        shape: (usize, usize, usize),
        scale: (f32, f32),
        a: &TensorMap<'_, Self>,
        b: &TensorMap<'_, Self>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()>;
}

macro_rules! impl_tma_half {
    ($ty:ident, $kernel:ident) => {
        impl TmaHalf for $ty {
            fn launch_tma(
                stream: &Stream,
                config: LaunchConfig,
                layout: (bool, bool),
                (m, n, k): (usize, usize, usize),
                (alpha, beta): (f32, f32),
                a: &TensorMap<'_, Self>,
                b: &TensorMap<'_, Self>,
                c: &mut DeviceBuffer<f32>,
            ) -> Result<()> {
                match layout {
                    (false, false) => {
                        $kernel::launch::<0, 0>(stream, config, m, n, k, alpha, beta, a, b, c)
                    }
                    (false, true) => {
                        $kernel::launch::<0, 1>(stream, config, m, n, k, alpha, beta, a, b, c)
                    }
                    (true, false) => {
                        $kernel::launch::<1, 0>(stream, config, m, n, k, alpha, beta, a, b, c)
                    }
                    (true, true) => {
                        $kernel::launch::<1, 1>(stream, config, m, n, k, alpha, beta, a, b, c)
                    }
                }
            }
        }
    };
}

impl_tma_half!(f16, gemm_f16_tma);
impl_tma_half!(bf16, gemm_bf16_tma);

/// `C = alpha·op(A)·op(B) + beta·C` by the TMA kernel: `k > 0`, rows of A and B a multiple of
/// 8 elements (`lda`, `ldb`: the stored matrices' row strides), on Hopper or the CPU backend.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_tma<T: TmaHalf>(
    stream: &Stream,
    (a_t, b_t): (bool, bool),
    (m, n, k, lda, ldb): (usize, usize, usize, usize, usize),
    scale: (f32, f32),
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    // A k-contiguous operand is copied as one box of 64-wide rows per tile, an m- or
    // n-contiguous one as boxes of 64 × 64.
    let a_map = if a_t {
        TensorMap::new_2d(a, [k, m], lda, [64, 64], Swizzle::B128)?
    } else {
        TensorMap::new_2d(a, [m, k], lda, [BM as u32, 64], Swizzle::B128)?
    };
    let b_map = if b_t {
        TensorMap::new_2d(b, [n, k], ldb, [BN as u32, 64], Swizzle::B128)?
    } else {
        TensorMap::new_2d(b, [k, n], ldb, [64, 64], Swizzle::B128)?
    };
    let tiles = m.div_ceil(BM) * n.div_ceil(BN);
    let sms = stream.gpu().sm_count().max(1) as usize;
    let blocks = tiles.min(sms);
    let grid = Grid::try_x(blocks)?;
    let config =
        LaunchConfig::new(grid, Block::x(384)).with_shared_mem((STAGES * STAGE_BYTES) as u32);
    T::launch_tma(
        stream,
        config,
        (a_t, b_t),
        (m, n, k),
        scale,
        &a_map,
        &b_map,
        c,
    )
}
