//! `f32` GEMM on the CUDA cores: `C = alpha·op(A)·op(B) + beta·C`, row-major.
//!
//! Two tile configurations of one algorithm. Each block owns a tile of C and walks k in steps
//! of a k-tile: its threads copy the A and B tiles into shared memory, stored k-major (`[k][row]`
//! for A, `[k][col]` for B) so that every thread reads its column of A and row of B fragments
//! with 16-byte loads, and accumulate outer products in registers. The next k-tile is loaded
//! from global memory into registers while the current one is multiplied, and shared memory is
//! double-buffered, so each k-tile costs one barrier.
//!
//! An operand is read "along k" when consecutive elements in memory are consecutive k (A as
//! stored, B transposed) and "across" otherwise (A transposed, B as stored); the copy to shared
//! memory transposes in the first case and not in the second, so all four transpose
//! combinations run the same inner loop at the same speed.

use gpu_macros::kernel;
use gpu_runtime::{Block, DeviceBuffer, Grid, Kernel, LaunchConfig, Result, Stream};

use super::{Gemm, Tiles, Transpose};

/// Rows (and columns) of C per block of the large configuration.
const LARGE_TILE: usize = 128;
/// Rows (and columns) of C per block of the small configuration.
const SMALL_TILE: usize = 32;
/// Threads per block of both configurations.
const THREADS: u32 = 256;

/// The large configuration: a 128×128 tile of C per block, k-tiles of 8, 8×8 outputs per thread
/// (rows `4·ty..4·ty+4` and `64+4·ty..`, columns likewise with `tx`, so the fragments are two
/// 16-byte shared loads each). Shared rows are padded from 128 to 132 floats so the transposing
/// stores of an along-k operand hit distinct banks.
#[kernel]
fn gemm_f32_128x128(
    m: usize,
    n: usize,
    k: usize,
    trans_a: u32,
    trans_b: u32,
    alpha: f32,
    beta: f32,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    const BK: usize = 8;
    const STRIDE: usize = 132;
    const BUFFER: usize = 1056;
    // Two buffers of BK rows of STRIDE floats.
    let a_tile = shared_array::<f32, 2112>();
    let b_tile = shared_array::<f32, 2112>();
    let t = thread_idx().x;
    let bm = block_idx().y as usize * 128;
    let bn = block_idx().x as usize * 128;
    // A warp computes a 4×8 arrangement of threads, so its A fragment loads touch 4 addresses
    // and its B fragment loads 8 consecutive ones: no bank conflicts.
    let warp = t / 32;
    let lane = t % 32;
    let ty = ((warp / 2) * 4 + lane / 8) as usize;
    let tx = ((warp % 2) * 8 + lane % 8) as usize;

    // What this thread copies: along k, 4 consecutive k of tile row `t / 2`; across, 4
    // consecutive rows of k-row `t / 32`.
    let along_row = (t / 2) as usize;
    let along_k = ((t % 2) * 4) as usize;
    let across_k = (t / 32) as usize;
    let across_col = ((t % 32) * 4) as usize;
    // 16-byte global loads need the four elements contiguous and 16-byte aligned: the leading
    // dimension a multiple of 4 (buffers themselves are 256-byte aligned).
    let a_vector = if trans_a == 0 { k % 4 == 0 } else { m % 4 == 0 };
    let b_vector = if trans_b == 0 { n % 4 == 0 } else { k % 4 == 0 };

    let mut acc = [0.0f32; 64];
    let mut va = [0.0f32; 4];
    let mut vb = [0.0f32; 4];
    let tiles = (k + BK - 1) / BK;
    // Step s loads k-tile s into registers, multiplies k-tile s - 1 (already in shared memory),
    // then stores k-tile s into the other buffer.
    for step in 0..tiles + 1 {
        let kt = step * BK;
        if step < tiles {
            if trans_a == 0 {
                let row = bm + along_row;
                let kk = kt + along_k;
                if a_vector && row < m && kk < k {
                    let v = a.load4(row * k + kk);
                    #[unroll]
                    for j in 0..4 {
                        va[j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        va[j] = if row < m && kk + j < k {
                            a[row * k + kk + j]
                        } else {
                            0.0
                        };
                    }
                }
            } else {
                let kk = kt + across_k;
                let col = bm + across_col;
                if a_vector && kk < k && col < m {
                    let v = a.load4(kk * m + col);
                    #[unroll]
                    for j in 0..4 {
                        va[j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        va[j] = if kk < k && col + j < m {
                            a[kk * m + col + j]
                        } else {
                            0.0
                        };
                    }
                }
            }
            if trans_b == 0 {
                let kk = kt + across_k;
                let col = bn + across_col;
                if b_vector && kk < k && col < n {
                    let v = b.load4(kk * n + col);
                    #[unroll]
                    for j in 0..4 {
                        vb[j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        vb[j] = if kk < k && col + j < n {
                            b[kk * n + col + j]
                        } else {
                            0.0
                        };
                    }
                }
            } else {
                let row = bn + along_row;
                let kk = kt + along_k;
                if b_vector && row < n && kk < k {
                    let v = b.load4(row * k + kk);
                    #[unroll]
                    for j in 0..4 {
                        vb[j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        vb[j] = if row < n && kk + j < k {
                            b[row * k + kk + j]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
        if step > 0 {
            let base = ((step - 1) % 2) * BUFFER;
            #[unroll]
            for p in 0..BK {
                let row = base + p * STRIDE;
                let a0 = a_tile.load4(row + ty * 4);
                let a1 = a_tile.load4(row + 64 + ty * 4);
                let b0 = b_tile.load4(row + tx * 4);
                let b1 = b_tile.load4(row + 64 + tx * 4);
                #[unroll]
                for i in 0..4 {
                    #[unroll]
                    for j in 0..4 {
                        acc[i * 8 + j] += a0[i] * b0[j];
                        acc[i * 8 + 4 + j] += a0[i] * b1[j];
                        acc[(i + 4) * 8 + j] += a1[i] * b0[j];
                        acc[(i + 4) * 8 + 4 + j] += a1[i] * b1[j];
                    }
                }
            }
        }
        if step < tiles {
            let base = (step % 2) * BUFFER;
            if trans_a == 0 {
                #[unroll]
                for j in 0..4 {
                    a_tile[base + (along_k + j) * STRIDE + along_row] = va[j];
                }
            } else {
                a_tile.store4(base + across_k * STRIDE + across_col, va);
            }
            if trans_b == 0 {
                b_tile.store4(base + across_k * STRIDE + across_col, vb);
            } else {
                #[unroll]
                for j in 0..4 {
                    b_tile[base + (along_k + j) * STRIDE + along_row] = vb[j];
                }
            }
            sync_threads();
        }
    }

    let c_vector = n % 4 == 0;
    #[unroll]
    for i in 0..8 {
        let row = bm + (i / 4) * 64 + ty * 4 + i % 4;
        if row < m {
            #[unroll]
            for half in 0..2 {
                let col = bn + half * 64 + tx * 4;
                let mut out = [0.0f32; 4];
                #[unroll]
                for j in 0..4 {
                    out[j] = alpha * acc[i * 8 + half * 4 + j];
                }
                if c_vector && col < n {
                    // beta = 0 never reads C, as in BLAS: C may hold NaN or garbage.
                    if beta != 0.0 {
                        let old = c.load4(row * n + col);
                        #[unroll]
                        for j in 0..4 {
                            out[j] += beta * old[j];
                        }
                    }
                    c.store4(row * n + col, out);
                } else {
                    #[unroll]
                    for j in 0..4 {
                        if col + j < n {
                            let index = row * n + col + j;
                            c[index] = if beta != 0.0 {
                                out[j] + beta * c[index]
                            } else {
                                out[j]
                            };
                        }
                    }
                }
            }
        }
    }
}

/// The small configuration, for shapes that would leave most multiprocessors idle with
/// 128×128 tiles (a batch of 64 in an MLP): a 32×32 tile of C per block, k-tiles of 32, one row
/// and four columns of outputs per thread. Element loads are scalar (coalesced along whichever
/// dimension is contiguous), which lets any shape use it.
#[kernel]
fn gemm_f32_32x32(
    m: usize,
    n: usize,
    k: usize,
    trans_a: u32,
    trans_b: u32,
    alpha: f32,
    beta: f32,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    const BK: usize = 32;
    // A is read one element at a time, so an odd stride avoids bank conflicts; B's rows are
    // read with 16-byte loads and need a multiple of 4.
    const A_STRIDE: usize = 33;
    const B_STRIDE: usize = 36;
    const A_BUFFER: usize = 1056;
    const B_BUFFER: usize = 1152;
    let a_tile = shared_array::<f32, 2112>();
    let b_tile = shared_array::<f32, 2304>();
    let t = thread_idx().x as usize;
    let bm = block_idx().y as usize * 32;
    let bn = block_idx().x as usize * 32;
    let ty = t / 8;
    let tx = t % 8;

    let mut acc = [0.0f32; 4];
    let mut va = [0.0f32; 4];
    let mut vb = [0.0f32; 4];
    let tiles = (k + BK - 1) / BK;
    for step in 0..tiles + 1 {
        let kt = step * BK;
        if step < tiles {
            #[unroll]
            for r in 0..4 {
                // Element e of the 32×32 tile: consecutive threads take consecutive addresses,
                // along k for an along-k operand and across otherwise.
                let e = r * 256 + t;
                let high = e / 32;
                let low = e % 32;
                if trans_a == 0 {
                    let row = bm + high;
                    let kk = kt + low;
                    va[r] = if row < m && kk < k {
                        a[row * k + kk]
                    } else {
                        0.0
                    };
                } else {
                    let row = bm + low;
                    let kk = kt + high;
                    va[r] = if row < m && kk < k {
                        a[kk * m + row]
                    } else {
                        0.0
                    };
                }
                if trans_b == 0 {
                    let col = bn + low;
                    let kk = kt + high;
                    vb[r] = if col < n && kk < k {
                        b[kk * n + col]
                    } else {
                        0.0
                    };
                } else {
                    let col = bn + high;
                    let kk = kt + low;
                    vb[r] = if col < n && kk < k {
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
            for r in 0..4 {
                let e = r * 256 + t;
                let high = e / 32;
                let low = e % 32;
                if trans_a == 0 {
                    a_tile[a_base + low * A_STRIDE + high] = va[r];
                } else {
                    a_tile[a_base + high * A_STRIDE + low] = va[r];
                }
                if trans_b == 0 {
                    b_tile[b_base + high * B_STRIDE + low] = vb[r];
                } else {
                    b_tile[b_base + low * B_STRIDE + high] = vb[r];
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
                let index = row * n + col;
                c[index] = if beta != 0.0 {
                    alpha * acc[j] + beta * c[index]
                } else {
                    alpha * acc[j]
                };
            }
        }
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&Kernel] = &[&gemm_f32_128x128::KERNEL, &gemm_f32_32x32::KERNEL];

/// Runs `spec` with the configuration that suits its shape; the caller has checked the lengths
/// and that m, n and k are not zero.
pub(crate) fn gemm_f32(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm_f32_tiles(stream, spec, a, b, c, Tiles::Auto)
}

/// [`gemm_f32`] with the tile configuration chosen by the caller, or from the shape for
/// [`Tiles::Auto`].
pub(crate) fn gemm_f32_tiles(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
    tiles: Tiles,
) -> Result<()> {
    let flag = |t: Transpose| match t {
        Transpose::No => 0u32,
        Transpose::Yes => 1u32,
    };
    let (trans_a, trans_b) = (flag(spec.trans_a), flag(spec.trans_b));
    let large_blocks = spec.m.div_ceil(LARGE_TILE) * spec.n.div_ceil(LARGE_TILE);
    // 128×128 tiles once they fill every multiprocessor at least once; below that, more and
    // smaller blocks finish sooner.
    let large = match tiles {
        Tiles::Auto => large_blocks >= stream.gpu().sm_count().max(1) as usize,
        Tiles::Small => false,
        Tiles::Large => true,
    };
    let tile = if large { LARGE_TILE } else { SMALL_TILE };
    let grid = Grid::xy(
        grid_dim(spec.n.div_ceil(tile))?,
        grid_dim(spec.m.div_ceil(tile))?,
    );
    let config = LaunchConfig::new(grid, Block::x(THREADS));
    let launch = if large {
        gemm_f32_128x128::launch
    } else {
        gemm_f32_32x32::launch
    };
    launch(
        stream, config, spec.m, spec.n, spec.k, trans_a, trans_b, spec.alpha, spec.beta, a, b, c,
    )
}

/// A grid dimension, or an error for a matrix too large for one launch.
fn grid_dim(blocks: usize) -> Result<u32> {
    // The y dimension of a grid is limited to 65535 blocks.
    if blocks <= 65_535 {
        Ok(blocks as u32)
    } else {
        Err(gpu_runtime::Error::InvalidLaunch(format!(
            "gemm: {blocks} tiles along one dimension exceeds a grid's 65535; split the matrix"
        )))
    }
}
