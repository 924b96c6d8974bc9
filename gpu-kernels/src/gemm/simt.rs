//! `f32` GEMM on the CUDA cores: `C = alpha·op(A)·op(B) + beta·C`, row-major.
//!
//! Three tile configurations of one algorithm (128×128, 64×64 and 32×32 tiles of C per block,
//! the largest that still gives every multiprocessor work). Each block owns a tile of C and
//! walks k in steps of a k-tile: its threads copy the A and B tiles into shared memory, stored
//! k-major (`[k][row]` for A, `[k][col]` for B) so that every thread reads its column of A and
//! row of B fragments with 16-byte loads, and accumulate outer products in registers. The next
//! k-tile is loaded from global memory into registers while the current one is multiplied, and
//! shared memory is double-buffered, so each k-tile costs one barrier. The smallest
//! configuration also splits a long k across blocks, for shapes like an MLP's batch of 64.
//!
//! An operand is read "along k" when consecutive elements in memory are consecutive k (A as
//! stored, B transposed) and "across" otherwise (A transposed, B as stored); the copy to shared
//! memory transposes in the first case and not in the second, so all four transpose
//! combinations run the same inner loop.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{
    Block, DeviceBuffer, Grid, Kernel, LaunchConfig, Result, Stream, TemplateArg,
};

use super::simt_small::small;
use super::{grouped_block_col, grouped_block_row, Gemm, GemmScratch, Tiles, Transpose};

/// The large configuration: a 128×128 tile of C per block of 128 threads, k-tiles of 16,
/// 16×8 outputs per thread: rows `32·h + 4·ty + i` (h < 4, i < 4), columns `64·h + 4·tx + j`
/// (h < 2, j < 4), so each k costs six 16-byte shared loads for 128 multiply-adds. A warp is
/// 4×8 threads: its A fragment loads touch 4 consecutive 16-byte words and its B loads 8, so
/// none conflict. The transposes are template arguments (1 for transposed), so each
/// combination compiles to straight-line code.
///
/// Measured on an H100 at 4096³ (ratio to cuBLAS SGEMM in the same run; as stored, Aᵀ, Bᵀ,
/// AᵀBᵀ): the previous kernel, 256 threads of 8×8 outputs with k-tiles of 8 and two blocks per
/// multiprocessor, held 128 registers and spilled: 0.82, 0.87, 0.79, 0.84. 16×8 outputs per
/// thread leave fewer instructions besides the multiply-adds, and 255 registers hold the 128
/// accumulators, the fragments and the prefetched k-tile without spilling, though only 8 warps
/// run per multiprocessor; k-tiles of 16 then halve the per-tile costs (barrier, copy,
/// address updates): 0.87, 0.96, 0.82, 0.92. The along-k copy below brought the rest up:
/// 0.91, 0.95, 0.88, 0.96; padding its shared stores out of their bank conflicts, grouping
/// tiles along n when only A is read along k, and the multiply-adds' zigzag order (below),
/// to 0.95-0.96, 0.97-0.98, 0.96, 0.99-1.00 (48.6-48.8 TFLOP/s as stored). Slower, and
/// dropped: k-tiles of 8 with this tile (0.82 as stored);
/// a cp.async ring of three or four k-tiles copied as stored, an along-k operand's fragments
/// then read as four k of one row (0.76 as stored, a tie for Aᵀ); a warp loading 16 rows' 32
/// bytes of an along-k operand into padded rows (0.83 as stored). Also dropped, against
/// 0.90-0.91, 0.95-0.96, 0.88, 0.95-0.96 in the same runs: a ring of four k-tiles in 64 KiB
/// of dynamic shared memory with a barrier every second k-tile (0.88, 0.93, 0.86, 0.95), or
/// of six with one every third (0.88, 0.93, 0.87, 0.95); on that ring, the next k-tile's first
/// fragments read before its loop, at 255 registers (0.84, 0.92, 0.82, 0.92), or along-k
/// operands read as 64 rows' full 128-byte lines of 32 k, which doubles the passes of their
/// shared stores (0.86, 0.93, 0.77, 0.90); the medium configuration's order of lanes (0.89,
/// 0.96, 0.87, 0.96). And against the padded kernel (TFLOP/s as stored, Aᵀ): an XOR swizzle
/// instead of the padding (46.5 as stored, in an earlier run); computing Cᵀ =
/// Bᵀ·Aᵀ to move the along-k operand to B (a tie); running offsets for the buffers and no
/// interior test per k-tile (-0.5%); the last, partial wave's tiles (232 of 1024 here) shared
/// along k by all 264 slots with flags ordering their sums into C, as stream-K does: in one
/// kernel every tile slowed 6% (255 registers), in a second launch the shared tiles ran slower
/// than the wave they replaced (46.1-46.4, 47.0-47.4); multiply-adds column by column (a tie,
/// but AᵀBᵀ 8% slower), column by column in zigzag (43.0 as stored), as two zigzags over
/// halves of the row (45.1), or snaking over pairs of rows (47.6); the operands read across
/// copied by cp.async instead of through registers (44.4, 45.8); a second instantiation for
/// shapes without edge tiles, free of bounds checks (46.7, 50.1).
#[kernel(launch_bounds(128, 2))]
fn gemm_f32_128x128<const TRANS_A: usize, const TRANS_B: usize>(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    beta: f32,
    group_along_n: bool,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    const BK: usize = 16;
    // Two buffers of BK rows of 128 floats per operand, every fourth row followed by 8 floats
    // of padding (see the stores below).
    const BUFFER: usize = 2080;
    const GROUP: usize = 8;
    let a_tile = shared_array::<f32, 4160>();
    let b_tile = shared_array::<f32, 4160>();
    let t = thread_idx().x as usize;
    // Grouped block order: GROUP block rows sweep the block columns together (or columns the
    // rows), so the blocks running at once share A's rows and B's columns in L2 (groups of 4
    // or 16 measured the same). The host groups columns when only A is read along k: 0.5-1%
    // faster at 4096³ on an H100 than rows, which suit the other layouts as well or better.
    let grid_m = (m + 127) / 128;
    let grid_n = (n + 127) / 128;
    let pid = block_idx().x as usize;
    // Grouping columns is grouping rows of the transposed grid.
    let bm = if group_along_n {
        grouped_block_col(pid, grid_n, grid_m, GROUP)
    } else {
        grouped_block_row(pid, grid_m, grid_n, GROUP)
    } * 128;
    let bn = if group_along_n {
        grouped_block_row(pid, grid_n, grid_m, GROUP)
    } else {
        grouped_block_col(pid, grid_m, grid_n, GROUP)
    } * 128;
    let warp = t / 32;
    let lane = t % 32;
    let ty = (warp / 2) * 4 + lane / 8;
    let tx = (warp % 2) * 8 + lane % 8;

    // What this thread copies, in 16-byte chunks p < BK / 4. Along k, k `4·c..4·c + 4` of row
    // `along_row + p`: a warp's load reads 8 rows' 64 bytes, 4 threads to a row (one row per
    // thread, each load touching 32 rows, took 4-7% longer at 4096³; the same 8 rows with a
    // quarter-warp's 8 threads in 8 of them, 9% longer), and the thread's 4×4 block, read
    // transposed, stores as 4 rows of one k with 16-byte stores. Across, 4 consecutive rows
    // from `4·(t % 32)` at k `t / 32 + 4·p`.
    let along_row = (t / 4) * 4;
    let along_c = t % 4;
    let across_k = t / 32;
    let across_col = (t % 32) * 4;
    // 16-byte global loads need the four elements contiguous and 16-byte aligned: the leading
    // dimension a multiple of 4 (buffers themselves are 256-byte aligned).
    let a_vector = if TRANS_A == 0 { k % 4 == 0 } else { m % 4 == 0 };
    let b_vector = if TRANS_B == 0 { n % 4 == 0 } else { k % 4 == 0 };
    // A block whose tile lies inside C, with 16-byte loads possible, reads every full k-tile
    // through running offsets without bounds checks.
    let interior = a_vector && b_vector && bm + 128 <= m && bn + 128 <= n;
    let mut a_offset = if TRANS_A == 0 {
        (bm + along_row) * k + 4 * along_c
    } else {
        across_k * m + bm + across_col
    };
    let mut b_offset = if TRANS_B == 0 {
        across_k * n + bn + across_col
    } else {
        (bn + along_row) * k + 4 * along_c
    };
    // From one chunk to the next, and from one k-tile to the next.
    let a_chunk = if TRANS_A == 0 { k } else { 4 * m };
    let b_chunk = if TRANS_B == 0 { 4 * n } else { k };
    let a_step = if TRANS_A == 0 { BK } else { BK * m };
    let b_step = if TRANS_B == 0 { BK * n } else { BK };

    let mut acc = [0.0f32; 128];
    let mut va = [0.0f32; 16];
    let mut vb = [0.0f32; 16];
    let tiles = (k + BK - 1) / BK;
    // Step s loads k-tile s into registers, multiplies k-tile s - 1 (already in shared memory),
    // then stores k-tile s into the other buffer.
    for step in 0..tiles + 1 {
        let kt = step * BK;
        if interior && kt + BK <= k {
            #[unroll]
            for p in 0..BK / 4 {
                let x = a.load4(a_offset + p * a_chunk);
                let y = b.load4(b_offset + p * b_chunk);
                #[unroll]
                for j in 0..4 {
                    va[p * 4 + j] = x[j];
                    vb[p * 4 + j] = y[j];
                }
            }
        } else if step < tiles {
            #[unroll]
            for p in 0..BK / 4 {
                // The chunk's first element, and whether each of its four is inside A.
                let row = if TRANS_A == 0 {
                    bm + along_row + p
                } else {
                    bm + across_col
                };
                let kk = if TRANS_A == 0 {
                    kt + 4 * along_c
                } else {
                    kt + across_k + 4 * p
                };
                let at = a_offset + p * a_chunk;
                if a_vector && row < m && kk < k {
                    let v = a.load4(at);
                    #[unroll]
                    for j in 0..4 {
                        va[p * 4 + j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        let inside = if TRANS_A == 0 {
                            row < m && kk + j < k
                        } else {
                            row + j < m && kk < k
                        };
                        va[p * 4 + j] = if inside { a[at + j] } else { 0.0 };
                    }
                }
                let col = if TRANS_B == 0 {
                    bn + across_col
                } else {
                    bn + along_row + p
                };
                let kk = if TRANS_B == 0 {
                    kt + across_k + 4 * p
                } else {
                    kt + 4 * along_c
                };
                let at = b_offset + p * b_chunk;
                if b_vector && col < n && kk < k {
                    let v = b.load4(at);
                    #[unroll]
                    for j in 0..4 {
                        vb[p * 4 + j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        let inside = if TRANS_B == 0 {
                            col + j < n && kk < k
                        } else {
                            col < n && kk + j < k
                        };
                        vb[p * 4 + j] = if inside { b[at + j] } else { 0.0 };
                    }
                }
            }
        }
        a_offset += a_step;
        b_offset += b_step;
        if step > 0 {
            let base = ((step - 1) % 2) * BUFFER;
            #[unroll]
            for p in 0..BK {
                let row = base + p * 128 + 8 * (p / 4);
                let mut fa = [0.0f32; 16];
                let mut fb = [0.0f32; 8];
                #[unroll]
                for h in 0..4 {
                    let v = a_tile.load4(row + 32 * h + 4 * ty);
                    #[unroll]
                    for i in 0..4 {
                        fa[4 * h + i] = v[i];
                    }
                }
                #[unroll]
                for h in 0..2 {
                    let v = b_tile.load4(row + 64 * h + 4 * tx);
                    #[unroll]
                    for j in 0..4 {
                        fb[4 * h + j] = v[j];
                    }
                }
                // Row by row, odd rows backwards: each multiply-add shares an operand register
                // with the one before it, also across rows, so the operand reuse cache can
                // serve it (at 4096³, about 1% faster than restarting each row at column 0 as
                // stored, Aᵀ and Bᵀ, 0.5% slower for AᵀBᵀ).
                #[unroll]
                for i in 0..16 {
                    #[unroll]
                    for jj in 0..8 {
                        let j = if i % 2 == 0 { jj } else { 7 - jj };
                        acc[i * 8 + j] += fa[i] * fb[j];
                    }
                }
            }
        }
        if step < tiles {
            let base = (step % 2) * BUFFER;
            // Across, chunk p is 4 rows of k `across_k + 4·p`; along k, element j of the four
            // chunks is 4 rows of k `4·along_c + j`. The 8 floats after every fourth k-row put
            // a quarter-warp's along-k stores (two chunks in each of four k-rows, 512 bytes
            // apart) in eight different banks; without them they conflict four ways, which
            // cost 4-7% at 4096³ per operand read along k (H100).
            #[unroll]
            for p in 0..BK / 4 {
                let along = base + (4 * along_c + p) * 128 + 8 * along_c + along_row;
                let across = base + (across_k + 4 * p) * 128 + 8 * p + across_col;
                let mut x = [0.0f32; 4];
                let mut y = [0.0f32; 4];
                #[unroll]
                for j in 0..4 {
                    x[j] = if TRANS_A == 0 {
                        va[4 * j + p]
                    } else {
                        va[4 * p + j]
                    };
                    y[j] = if TRANS_B == 1 {
                        vb[4 * j + p]
                    } else {
                        vb[4 * p + j]
                    };
                }
                a_tile.store4(if TRANS_A == 0 { along } else { across }, x);
                b_tile.store4(if TRANS_B == 1 { along } else { across }, y);
            }
            sync_threads();
        }
    }

    let c_vector = n % 4 == 0;
    #[unroll]
    for i in 0..16 {
        let row = bm + (i / 4) * 32 + ty * 4 + i % 4;
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

/// The medium configuration, for shapes with too few 128×128 tiles to fill the device (1024²
/// on an H100): a 64×64 tile of C per block of 128 threads, k-tiles of 32, 4×8 outputs per
/// thread (rows `4·ty..4·ty+4`, columns `4·tx..` and `32+4·tx..`). Otherwise as the large one,
/// but for the order of a warp's lanes, which halves the passes of its fragment loads (H100,
/// 1024³: 0.70-0.73 -> 0.79-0.80 × cuBLAS). With only about eight warps a multiprocessor at
/// 1024³, each k-tile's barrier and copy weigh on the few warps left to hide them: k-tiles of
/// 8, 16 and 32 ran 0.80-0.84, 0.85-0.88 and 0.93-0.94 × cuBLAS at 1024³ in the same runs
/// (81.6-81.8, 75.7-78.2 and 71.8-74.3 µs), and 2048³ (large tiles) unchanged.
#[kernel(launch_bounds(128))]
fn gemm_f32_64x64<const TRANS_A: usize, const TRANS_B: usize>(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    beta: f32,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    const BK: usize = 32;
    const STRIDE: usize = 68;
    const BUFFER: usize = 2176;
    let a_tile = shared_array::<f32, 4352>();
    let b_tile = shared_array::<f32, 4352>();
    let t = thread_idx().x;
    let bm = block_idx().y as usize * 64;
    let bn = block_idx().x as usize * 64;
    // Lanes 2i and 2i + 1 share a row of A fragments and lanes i and i + 2 of every four a
    // column of B fragments: a warp's 16-byte shared load whose lanes pair up so returns its
    // data in two passes instead of four.
    let warp = t / 32;
    let lane = t % 32;
    let ty = (warp * 4 + ((lane >> 1) & 1) + ((lane >> 3) & 2)) as usize;
    let tx = ((lane & 1) + ((lane >> 1) & 6)) as usize;
    // A thread copies four 16-byte chunks of each operand per k-tile: along k, k
    // `along_k + 8·p..` of row `along_row`; across, row `across_k + 8·p` of k.
    let along_row = (t / 2) as usize;
    let along_k = ((t % 2) * 4) as usize;
    let across_k = (t / 16) as usize;
    let across_col = ((t % 16) * 4) as usize;
    let a_vector = if TRANS_A == 0 { k % 4 == 0 } else { m % 4 == 0 };
    let b_vector = if TRANS_B == 0 { n % 4 == 0 } else { k % 4 == 0 };

    let mut acc = [0.0f32; 32];
    let mut va = [0.0f32; 16];
    let mut vb = [0.0f32; 16];
    let tiles = (k + BK - 1) / BK;
    for step in 0..tiles + 1 {
        let kt = step * BK;
        if step < tiles {
            #[unroll]
            for p in 0..4 {
                // The chunk's first element, and whether each of its four is inside A, as in
                // the large configuration.
                let row = if TRANS_A == 0 {
                    bm + along_row
                } else {
                    bm + across_col
                };
                let kk = if TRANS_A == 0 {
                    kt + along_k + 8 * p
                } else {
                    kt + across_k + 8 * p
                };
                let at = if TRANS_A == 0 {
                    row * k + kk
                } else {
                    kk * m + row
                };
                if a_vector && row < m && kk < k {
                    let v = a.load4(at);
                    #[unroll]
                    for j in 0..4 {
                        va[4 * p + j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        let inside = if TRANS_A == 0 {
                            row < m && kk + j < k
                        } else {
                            row + j < m && kk < k
                        };
                        va[4 * p + j] = if inside { a[at + j] } else { 0.0 };
                    }
                }
                let col = if TRANS_B == 0 {
                    bn + across_col
                } else {
                    bn + along_row
                };
                let kk = if TRANS_B == 0 {
                    kt + across_k + 8 * p
                } else {
                    kt + along_k + 8 * p
                };
                let at = if TRANS_B == 0 {
                    kk * n + col
                } else {
                    col * k + kk
                };
                if b_vector && col < n && kk < k {
                    let v = b.load4(at);
                    #[unroll]
                    for j in 0..4 {
                        vb[4 * p + j] = v[j];
                    }
                } else {
                    #[unroll]
                    for j in 0..4 {
                        let inside = if TRANS_B == 0 {
                            col + j < n && kk < k
                        } else {
                            col < n && kk + j < k
                        };
                        vb[4 * p + j] = if inside { b[at + j] } else { 0.0 };
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
                let b0 = b_tile.load4(row + tx * 4);
                let b1 = b_tile.load4(row + 32 + tx * 4);
                #[unroll]
                for i in 0..4 {
                    #[unroll]
                    for j in 0..4 {
                        acc[i * 8 + j] += a0[i] * b0[j];
                        acc[i * 8 + 4 + j] += a0[i] * b1[j];
                    }
                }
            }
        }
        if step < tiles {
            let base = (step % 2) * BUFFER;
            #[unroll]
            for p in 0..4 {
                if TRANS_A == 0 {
                    #[unroll]
                    for j in 0..4 {
                        a_tile[base + (along_k + 8 * p + j) * STRIDE + along_row] = va[4 * p + j];
                    }
                } else {
                    let chunk = [va[4 * p], va[4 * p + 1], va[4 * p + 2], va[4 * p + 3]];
                    a_tile.store4(base + (across_k + 8 * p) * STRIDE + across_col, chunk);
                }
                if TRANS_B == 0 {
                    let chunk = [vb[4 * p], vb[4 * p + 1], vb[4 * p + 2], vb[4 * p + 3]];
                    b_tile.store4(base + (across_k + 8 * p) * STRIDE + across_col, chunk);
                } else {
                    #[unroll]
                    for j in 0..4 {
                        b_tile[base + (along_k + 8 * p + j) * STRIDE + along_row] = vb[4 * p + j];
                    }
                }
            }
            sync_threads();
        }
    }

    let c_vector = n % 4 == 0;
    #[unroll]
    for i in 0..4 {
        let row = bm + ty * 4 + i;
        if row < m {
            #[unroll]
            for half in 0..2 {
                let col = bn + half * 32 + tx * 4;
                let mut out = [0.0f32; 4];
                #[unroll]
                for j in 0..4 {
                    out[j] = alpha * acc[i * 8 + half * 4 + j];
                }
                if c_vector && col < n {
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

/// The kernels of this module.
pub(crate) const KERNELS: &[&Kernel] = super::simt_small::KERNELS;

/// Every instantiation of the generic kernels this module launches.
pub(crate) fn instantiations() -> Vec<(&'static Kernel, Vec<TemplateArg>)> {
    let mut all = Vec::new();
    for trans_a in [0, 1] {
        for trans_b in [0, 1] {
            let args = vec![TemplateArg::Const(trans_a), TemplateArg::Const(trans_b)];
            all.push((&gemm_f32_128x128::KERNEL, args.clone()));
            all.push((&gemm_f32_64x64::KERNEL, args));
        }
    }
    all
}

/// Runs `spec` with the configuration that suits its shape; the caller has checked the lengths
/// and that m, n and k are not zero.
pub(crate) fn gemm_f32(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
    scratch: &mut GemmScratch,
) -> Result<()> {
    gemm_f32_tiles(stream, spec, a, b, c, Tiles::Auto, scratch)
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
    scratch: &mut GemmScratch,
) -> Result<()> {
    let flag = |t: Transpose| match t {
        Transpose::No => 0u32,
        Transpose::Yes => 1u32,
    };
    let (trans_a, trans_b) = (flag(spec.trans_a), flag(spec.trans_b));
    let blocks = |tile: usize| spec.m.div_ceil(tile) * spec.n.div_ceil(tile);
    let sms = stream.gpu().sm_count().max(1) as usize;
    // The largest tiles that still give every multiprocessor a block, when k is more than one
    // k-tile of 64; 64×64 tiles while they give a quarter of the multiprocessors one and both
    // m and n fill a tile; 32×32 below that. On an H100 (bench's `gemm shape` rows, 15 shapes
    // timed round-robin against every configuration) the first version of this rule, without
    // the conditions on k, m and n and with 64×64 tiles only from half the multiprocessors,
    // ran 512³ at 0.75 of the best configuration; with the quarter, 3000×50×2000 ran at 0.82
    // without the m and n condition, and 8192²×64 at 0.93-0.96 without the one on k.
    let tiles = match tiles {
        Tiles::Auto if blocks(128) >= sms && spec.k >= 128 => Tiles::Large,
        Tiles::Auto if blocks(64) >= sms / 4 && spec.m.min(spec.n) >= 64 => Tiles::Medium,
        Tiles::Auto => Tiles::Small,
        chosen => chosen,
    };
    let (tile, threads) = match tiles {
        Tiles::Large => (128, 128),
        Tiles::Medium => (64, 128),
        _ => (32, 256),
    };
    let (m, n, k, alpha, beta) = (spec.m, spec.n, spec.k, spec.alpha, spec.beta);
    if tiles == Tiles::Large {
        // The large kernel takes its tiles from a one-dimensional grid in grouped order.
        let config = LaunchConfig::new(Grid::try_x(blocks(128))?, Block::x(threads));
        let launch = match (trans_a, trans_b) {
            (0, 0) => gemm_f32_128x128::launch::<0, 0>,
            (0, _) => gemm_f32_128x128::launch::<0, 1>,
            (_, 0) => gemm_f32_128x128::launch::<1, 0>,
            (_, _) => gemm_f32_128x128::launch::<1, 1>,
        };
        let group_along_n = trans_a == 0 && trans_b == 0;
        return launch(stream, config, m, n, k, alpha, beta, group_along_n, a, b, c);
    }
    let grid = Grid::try_xy(spec.n.div_ceil(tile), spec.m.div_ceil(tile))?;
    let config = LaunchConfig::new(grid, Block::x(threads));
    let launch = match (tiles, trans_a, trans_b) {
        (Tiles::Medium, 0, 0) => gemm_f32_64x64::launch::<0, 0>,
        (Tiles::Medium, 0, _) => gemm_f32_64x64::launch::<0, 1>,
        (Tiles::Medium, _, 0) => gemm_f32_64x64::launch::<1, 0>,
        (Tiles::Medium, _, _) => gemm_f32_64x64::launch::<1, 1>,
        (Tiles::SmallSplitK, _, _) => {
            return small(stream, spec, (trans_a, trans_b), true, a, b, c, scratch)
        }
        _ => return small(stream, spec, (trans_a, trans_b), false, a, b, c, scratch),
    };
    launch(stream, config, m, n, k, alpha, beta, a, b, c)
}
