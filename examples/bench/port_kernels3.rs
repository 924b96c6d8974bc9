//! A third set of classic CUDA programs written as a Rust user writes them: the first kernel
//! of every CUDA course (the naive matrix product, `usize` indices and a loop bound that is a
//! parameter), Conway's game of life on a byte grid that wraps around with `%`, an RGBA to
//! grayscale conversion ending in a float-to-byte `as`, and the shared-memory tree reduction
//! whose stride is a mutable `usize` halved each step. `ports3.rs` times each against its
//! CUDA C twin; `tests/ports.rs` checks each against plain Rust.

use gpu_dsl::prelude::*;

/// Threads per block of the tree reduction (the CUDA sample's `reduce3` with 256 threads).
pub const REDUCE_BLOCK: usize = 256;

/// `c = a · b` for `n × n` row-major matrices, a thread per element of `c`, every operand read
/// from global memory (the first matrix product of the CUDA programming guide).
#[kernel]
pub fn matmul_naive(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let row = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    let col = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if row < n && col < n {
        let mut sum = 0.0f32;
        for k in 0..n {
            sum += a[row * n + k] * b[k * n + col];
        }
        c[row * n + col] = sum;
    }
}

/// One generation of Conway's game of life on a `width × height` torus of cells (0 or 1), a
/// thread per cell, its neighbours found with `%` as the textbook version finds them.
#[kernel]
pub fn life_step(width: usize, height: usize, cells: &[u8], next: &mut [u8]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let left = (x + width - 1) % width;
        let right = (x + 1) % width;
        let up = (y + height - 1) % height;
        let down = (y + 1) % height;
        let alive = cells[up * width + left]
            + cells[up * width + x]
            + cells[up * width + right]
            + cells[y * width + left]
            + cells[y * width + right]
            + cells[down * width + left]
            + cells[down * width + x]
            + cells[down * width + right];
        let me = cells[y * width + x];
        next[y * width + x] = if alive == 3 || (alive == 2 && me == 1) {
            1
        } else {
            0
        };
    }
}

/// Luma of each RGBA pixel (ITU-R BT.601 weights), rounded down to a byte, a thread per pixel
/// reading its four bytes in one load.
#[kernel]
pub fn rgba_to_gray(rgba: &[u8], gray: &mut [u8]) {
    let p = global_idx().x;
    if p < gray.len() {
        let px = rgba.load4(p * 4);
        let luma = 0.299f32 * px[0] as f32 + 0.587 * px[1] as f32 + 0.114 * px[2] as f32;
        gray[p] = luma as u8;
    }
}

/// Each block's sum of `REDUCE_BLOCK · 2` elements of `x` into `sums`, the first add on the
/// way into shared memory and a tree with a halving stride after (the CUDA sample `reduce3`).
#[kernel]
pub fn reduce_tree(x: &[f32], sums: &mut [f32]) {
    let cache = shared_array::<f32, REDUCE_BLOCK>();
    let tid = thread_idx().x as usize;
    let dim = block_dim().x as usize;
    let i = block_idx().x as usize * (dim * 2) + tid;
    let n = x.len();
    let mut sum = if i < n { x[i] } else { 0.0 };
    if i + dim < n {
        sum += x[i + dim];
    }
    cache[tid] = sum;
    sync_threads();
    let mut s = dim / 2;
    while s > 0 {
        if tid < s {
            cache[tid] += cache[tid + s];
        }
        sync_threads();
        s >>= 1;
    }
    if tid == 0 {
        sums[block_idx().x as usize] = cache[0];
    }
}
