//! The small configuration of the `f32` GEMM on the CUDA cores (see `simt.rs` for the
//! algorithm the three share): 32×32 tiles of C, and for shapes with too few tiles to fill the
//! device and a long k, slices of k whose partial products a second kernel sums.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{Block, DeviceBuffer, Grid, Kernel, LaunchConfig, Result, Stream};

use super::{Gemm, GemmScratch};

/// The small configuration, for shapes that would leave most multiprocessors idle even with
/// 64×64 tiles (a batch of 64 in an MLP): a 32×32 tile of C per block, k-tiles of 64 (few
/// steps, since each waits on global memory), one row and four columns of outputs per thread.
/// Element loads are scalar (coalesced along whichever dimension is contiguous), which lets any
/// shape use it. With few tiles and a long k, blocks along z split k in slices of `k_slice`,
/// each writing its partial product to its own m×n slab of `c` (see [`sum_k_slices`]).
#[kernel(launch_bounds(256, 2))]
fn gemm_f32_32x32(
    m: usize,
    n: usize,
    k: usize,
    k_slice: usize,
    trans_a: u32,
    trans_b: u32,
    alpha: f32,
    beta: f32,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    const BK: usize = 64;
    // A is read one element at a time, so an odd stride avoids bank conflicts; B's rows are
    // read with 16-byte loads and need a multiple of 4.
    const A_STRIDE: usize = 33;
    const B_STRIDE: usize = 36;
    const A_BUFFER: usize = 2112;
    const B_BUFFER: usize = 2304;
    let a_tile = shared_array::<f32, 4224>();
    let b_tile = shared_array::<f32, 4608>();
    let t = thread_idx().x as usize;
    let bm = block_idx().y as usize * 32;
    let bn = block_idx().x as usize * 32;
    let ty = t / 8;
    let tx = t % 8;

    // Block z multiplies k in [k_begin, k_end) and writes its m×n result at offset z·m·n.
    let k_begin = block_idx().z as usize * k_slice;
    let k_end = (k_begin + k_slice).min(k);
    let out_base = block_idx().z as usize * m * n;

    let mut acc = [0.0f32; 4];
    let mut va = [0.0f32; 8];
    let mut vb = [0.0f32; 8];
    let tiles = (k_end - k_begin + BK - 1) / BK;
    for step in 0..tiles + 1 {
        let kt = k_begin + step * BK;
        if step < tiles {
            #[unroll]
            for r in 0..8 {
                // Element e of the 32×64 tile: consecutive threads take consecutive addresses,
                // along k (64 per row) for an along-k operand, across (32 per k) otherwise.
                let e = r * 256 + t;
                if trans_a == 0 {
                    let row = bm + e / 64;
                    let kk = kt + e % 64;
                    va[r] = if row < m && kk < k_end {
                        a[row * k + kk]
                    } else {
                        0.0
                    };
                } else {
                    let row = bm + e % 32;
                    let kk = kt + e / 32;
                    va[r] = if row < m && kk < k_end {
                        a[kk * m + row]
                    } else {
                        0.0
                    };
                }
                if trans_b == 0 {
                    let col = bn + e % 32;
                    let kk = kt + e / 32;
                    vb[r] = if col < n && kk < k_end {
                        b[kk * n + col]
                    } else {
                        0.0
                    };
                } else {
                    let col = bn + e / 64;
                    let kk = kt + e % 64;
                    vb[r] = if col < n && kk < k_end {
                        b[col * k + kk]
                    } else {
                        0.0
                    };
                }
            }
        }
        if step > 0 {
            let a_base = ((step - 1) % 2) * A_BUFFER;
            let b_base = ((step - 1) % 2) * B_BUFFER;
            #[unroll]
            for p in 0..BK {
                let av = a_tile[a_base + p * A_STRIDE + ty];
                let bv = b_tile.load4(b_base + p * B_STRIDE + tx * 4);
                #[unroll]
                for j in 0..4 {
                    acc[j] += av * bv[j];
                }
            }
        }
        if step < tiles {
            let a_base = (step % 2) * A_BUFFER;
            let b_base = (step % 2) * B_BUFFER;
            #[unroll]
            for r in 0..8 {
                let e = r * 256 + t;
                if trans_a == 0 {
                    a_tile[a_base + (e % 64) * A_STRIDE + e / 64] = va[r];
                } else {
                    a_tile[a_base + (e / 32) * A_STRIDE + e % 32] = va[r];
                }
                if trans_b == 0 {
                    b_tile[b_base + (e / 32) * B_STRIDE + e % 32] = vb[r];
                } else {
                    b_tile[b_base + (e % 64) * B_STRIDE + e / 64] = vb[r];
                }
            }
            sync_threads();
        }
    }

    let row = bm + ty;
    if row < m {
        #[unroll]
        for j in 0..4 {
            let col = bn + tx * 4 + j;
            if col < n {
                let index = out_base + row * n + col;
                c[index] = if beta != 0.0 {
                    alpha * acc[j] + beta * c[index]
                } else {
                    alpha * acc[j]
                };
            }
        }
    }
}

/// `c = alpha·Σ partials + beta·c`, summing the k-slices' partial products in slice order, so
/// the result does not depend on how the blocks were scheduled.
#[kernel]
fn sum_k_slices(slices: usize, alpha: f32, beta: f32, partials: &[f32], c: &mut [f32]) {
    let len = c.len();
    for i in (global_idx().x..len).step_by(grid_size().x) {
        let mut sum = 0.0f32;
        for s in 0..slices {
            sum += partials[s * len + i];
        }
        c[i] = if beta != 0.0 {
            alpha * sum + beta * c[i]
        } else {
            alpha * sum
        };
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&Kernel] = &[&gemm_f32_32x32::KERNEL, &sum_k_slices::KERNEL];

/// Multiprocessors' worth of blocks below which the small configuration splits k.
const SPLIT_BELOW_BLOCKS_PER_SM: usize = 2;
/// The least k per slice when splitting: two of the kernel's 64-wide k-tiles.
const MIN_K_SLICE: usize = 128;

/// The small configuration; with too few blocks to fill the device (or `force_split`) and k
/// long enough, split along k into slices whose partial products a second kernel sums.
// The operands, the shape and the two memory inputs are all needed; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub(super) fn small(
    stream: &Stream,
    spec: &Gemm,
    (trans_a, trans_b): (u32, u32),
    force_split: bool,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
    scratch: &mut GemmScratch,
) -> Result<()> {
    let (m, n, k, alpha, beta) = (spec.m, spec.n, spec.k, spec.alpha, spec.beta);
    let grid = Grid::try_xy(n.div_ceil(32), m.div_ceil(32))?;
    let blocks = grid.blocks() as usize;
    let sms = stream.gpu().sm_count().max(1) as usize;
    let wanted = if force_split {
        usize::MAX
    } else {
        (SPLIT_BELOW_BLOCKS_PER_SM * sms).div_ceil(blocks)
    };
    let slices = wanted.min(k / MIN_K_SLICE).min(64);
    if slices < 2 {
        let config = LaunchConfig::new(grid, Block::x(256));
        return gemm_f32_32x32::launch(
            stream, config, m, n, k, k, trans_a, trans_b, alpha, beta, a, b, c,
        );
    }
    // Slices are whole k-tiles; rounding up may leave fewer slices than asked for.
    let k_slice = k.div_ceil(slices).next_multiple_of(64);
    let slices = k.div_ceil(k_slice);
    // Every slab is written whole (beta 0), so reused memory needs no clearing.
    let partials = scratch.partials(stream, slices * m * n)?;
    let config = LaunchConfig::new(Grid::xyz(grid.x, grid.y, slices as u32), Block::x(256));
    gemm_f32_32x32::launch(
        stream, config, m, n, k, k_slice, trans_a, trans_b, 1.0, 0.0, a, b, partials,
    )?;
    let config = crate::map::grid_stride_config(stream, m * n);
    sum_k_slices::launch(stream, config, slices, alpha, beta, partials, c)
}
