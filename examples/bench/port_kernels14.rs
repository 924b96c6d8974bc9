//! The fourteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): the CUDA samples' templated `matrixMul` (its block size a const
//! generic, its tiles 2-D shared arrays), PMPP's merge of two sorted arrays by co-rank binary
//! searches, and the CUDA samples' block scan by warp shuffles (`shfl_scan`).

use gpu_dsl::prelude::*;

/// The tile side the bench launches `matrix_mul` with, as the CUDA samples do.
pub const BLOCK_SIZE: usize = 32;

/// `C = A·B` for `A` of width `wa` and `B` of width `wb`, both multiples of `BLOCK`, as the
/// CUDA samples' `MatrixMulCUDA<BLOCK_SIZE>` walks it: a block per `BLOCK x BLOCK` tile of C,
/// `ia` and `ib` stepping through A's row of tiles and B's column of them.
#[kernel]
pub fn matrix_mul<const BLOCK: usize>(wa: usize, wb: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let a_tile = shared_array::<[f32; BLOCK], BLOCK>();
    let b_tile = shared_array::<[f32; BLOCK], BLOCK>();
    let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let a_begin = wa * BLOCK * by;
    let a_end = a_begin + wa - 1;
    let mut sum = 0.0f32;
    let mut ia = a_begin;
    let mut ib = BLOCK * bx;
    while ia <= a_end {
        a_tile[ty][tx] = a[ia + wa * ty + tx];
        b_tile[ty][tx] = b[ib + wb * ty + tx];
        sync_threads();
        for k in 0..BLOCK {
            sum += a_tile[ty][k] * b_tile[k][tx];
        }
        sync_threads();
        ia += BLOCK;
        ib += BLOCK * wb;
    }
    let ic = wb * BLOCK * by + BLOCK * bx;
    c[ic + wb * ty + tx] = sum;
}

/// How many of the first `k` outputs of merging sorted `a` and `b` come from `a` (PMPP's
/// `co_rank`): a binary search on the split `i + j = k`, stable (ties from `a` first).
#[device]
pub fn co_rank(k: usize, a: &[f32], b: &[f32]) -> usize {
    let (m, n) = (a.len(), b.len());
    let mut i = k.min(m);
    let mut j = k - i;
    let mut i_low = k.saturating_sub(n);
    let mut j_low = k.saturating_sub(m);
    loop {
        if i > 0 && j < n && a[i - 1] > b[j] {
            let delta = (i - i_low + 1) / 2;
            j_low = j;
            j += delta;
            i -= delta;
        } else if j > 0 && i < m && b[j - 1] >= a[i] {
            let delta = (j - j_low + 1) / 2;
            i_low = i;
            i += delta;
            j -= delta;
        } else {
            return i;
        }
    }
}

/// Merges sorted `a` and `b` into `c` (`a.len() + b.len()` long), ties from `a` first.
#[device]
pub fn merge_sequential(a: &[f32], b: &[f32], c: &mut [f32]) {
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            c[k] = a[i];
            i += 1;
        } else {
            c[k] = b[j];
            j += 1;
        }
        k += 1;
    }
    while i < a.len() {
        c[k] = a[i];
        i += 1;
        k += 1;
    }
    while j < b.len() {
        c[k] = b[j];
        j += 1;
        k += 1;
    }
}

/// PMPP's basic parallel merge: each thread finds where its share of `c` starts and ends in
/// `a` and `b` by co-rank, then merges those parts sequentially.
#[kernel]
pub fn merge_basic(a: &[f32], b: &[f32], c: &mut [f32]) {
    let total = c.len();
    let tid = global_idx().x;
    let per_thread = total.div_ceil(grid_size().x);
    let k_curr = (tid * per_thread).min(total);
    let k_next = ((tid + 1) * per_thread).min(total);
    let i_curr = co_rank(k_curr, a, b);
    let i_next = co_rank(k_next, a, b);
    let (j_curr, j_next) = (k_curr - i_curr, k_next - i_next);
    merge_sequential(
        &a[i_curr..i_next],
        &b[j_curr..j_next],
        &mut c[k_curr..k_next],
    );
}

/// The CUDA samples' `shfl_scan`: an inclusive prefix sum of each block's elements of `data`,
/// in place: each warp scans by shuffles up, the first warp scans the warps' totals (kept in
/// dynamic shared memory), and every element adds the totals of the warps before its own.
/// Each block's total also goes to `block_sums`.
#[kernel]
pub fn shfl_scan(data: &mut [i32], block_sums: &mut [i32]) {
    let sums = dynamic_shared::<i32>();
    let id = global_idx().x;
    let lane = thread_idx().x as usize % 32;
    let warp = thread_idx().x as usize / 32;
    let warps = block_dim().x as usize / 32;
    let mut value = data[id];
    let mut offset = 1;
    while offset < 32 {
        let n = shfl_up_sync(0xffff_ffff, value, offset as u32);
        if lane >= offset {
            value += n;
        }
        offset *= 2;
    }
    if lane == 31 {
        sums[warp] = value;
    }
    sync_threads();
    if warp == 0 {
        let mut warp_sum = if lane < warps { sums[lane] } else { 0 };
        let mut offset = 1;
        while offset < warps {
            let n = shfl_up_sync(0xffff_ffff, warp_sum, offset as u32);
            if lane >= offset {
                warp_sum += n;
            }
            offset *= 2;
        }
        if lane < warps {
            sums[lane] = warp_sum;
        }
    }
    sync_threads();
    if warp > 0 {
        value += sums[warp - 1];
    }
    data[id] = value;
    if thread_idx().x == block_dim().x - 1 {
        block_sums[block_idx().x as usize] = value;
    }
}
