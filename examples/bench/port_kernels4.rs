//! A fourth set of classic CUDA programs written as a Rust user writes them: a 3-D seven-point
//! stencil that walks z in a loop, the naive double-buffered (Hillis-Steele) scan of GPU Gems 3,
//! a 2-D convolution with its mask in constant memory and signed neighbour offsets, Rodinia's
//! k-means assignment step (features stored feature-major), and a histogram of floats whose
//! bin comes from a float-to-`usize` `as`. `ports4.rs` times each against its CUDA C twin;
//! `tests/ports.rs` checks each against plain Rust.

use gpu_dsl::prelude::*;

/// Threads per block (and elements per block) of the naive scan.
pub const SCAN_BLOCK: usize = 1024;
/// The convolution mask's width (an odd square).
pub const MASK_WIDTH: usize = 5;
/// Bins of the float histogram.
pub const HIST_BINS: usize = 256;

/// One Jacobi sweep of the 3-D heat equation on an `nx × ny × nz` grid, x fastest: each
/// interior point becomes `c0 · itself + c1 · (its six neighbours)`. A thread per (x, y)
/// column walks z, as the textbook 3-D stencil does before any tiling.
#[kernel]
pub fn stencil7(
    nx: usize,
    ny: usize,
    nz: usize,
    c0: f32,
    c1: f32,
    input: &[f32],
    output: &mut [f32],
) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x > 0 && x < nx - 1 && y > 0 && y < ny - 1 {
        let plane = nx * ny;
        for z in 1..nz - 1 {
            let i = z * plane + y * nx + x;
            output[i] = c0 * input[i]
                + c1 * (input[i - 1]
                    + input[i + 1]
                    + input[i - nx]
                    + input[i + nx]
                    + input[i - plane]
                    + input[i + plane]);
        }
    }
}

/// Exclusive prefix sums of each `block_dim` elements, the naive scan of GPU Gems 3 (chapter
/// 39, example 1): two buffers of `n` floats in dynamic shared memory, read from one and
/// written to the other at every doubling of the offset (`2 · n · 4` bytes of it).
#[kernel]
pub fn scan_naive(input: &[f32], output: &mut [f32]) {
    let temp = dynamic_shared::<f32>();
    let n = block_dim().x as usize;
    let thid = thread_idx().x as usize;
    let base = block_idx().x as usize * n;
    let mut pout = 0;
    let mut pin = 1;
    temp[pout * n + thid] = if thid > 0 {
        input[base + thid - 1]
    } else {
        0.0
    };
    sync_threads();
    let mut offset = 1;
    while offset < n {
        pout = 1 - pout;
        pin = 1 - pout;
        if thid >= offset {
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        } else {
            temp[pout * n + thid] = temp[pin * n + thid];
        }
        sync_threads();
        offset *= 2;
    }
    output[base + thid] = temp[pout * n + thid];
}

/// `output = input ⊛ mask` on a `width × height` image, zero outside it: a thread per pixel
/// sums the `MASK_WIDTH²` products around it, the mask in constant memory (the basic 2-D
/// convolution of Kirk and Hwu's chapter 7). The neighbour offsets are signed.
#[kernel]
pub fn conv2d(
    #[constant] mask: &[f32; MASK_WIDTH * MASK_WIDTH],
    width: usize,
    height: usize,
    input: &[f32],
    output: &mut [f32],
) {
    let col = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let row = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if col < width && row < height {
        let radius = (MASK_WIDTH / 2) as i64;
        let start_row = row as i64 - radius;
        let start_col = col as i64 - radius;
        let mut sum = 0.0f32;
        for j in 0..MASK_WIDTH {
            for k in 0..MASK_WIDTH {
                let r = start_row + j as i64;
                let c = start_col + k as i64;
                if r >= 0 && r < height as i64 && c >= 0 && c < width as i64 {
                    sum += input[r as usize * width + c as usize] * mask[j * MASK_WIDTH + k];
                }
            }
        }
        output[row * width + col] = sum;
    }
}

/// [`conv2d`] with the signed neighbour offsets in `i32`, as the CUDA C code's `int`s.
#[kernel]
pub fn conv2d_i32(
    #[constant] mask: &[f32; MASK_WIDTH * MASK_WIDTH],
    width: usize,
    height: usize,
    input: &[f32],
    output: &mut [f32],
) {
    let col = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let row = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if col < width && row < height {
        let radius = (MASK_WIDTH / 2) as i32;
        let start_row = row as i32 - radius;
        let start_col = col as i32 - radius;
        let mut sum = 0.0f32;
        for j in 0..MASK_WIDTH as i32 {
            for k in 0..MASK_WIDTH as i32 {
                let r = start_row + j;
                let c = start_col + k;
                if r >= 0 && r < height as i32 && c >= 0 && c < width as i32 {
                    let tap = (j * MASK_WIDTH as i32 + k) as usize;
                    sum += input[r as usize * width + c as usize] * mask[tap];
                }
            }
        }
        output[row * width + col] = sum;
    }
}

/// Each point's nearest cluster centre (squared Euclidean distance, the first on ties):
/// Rodinia's k-means `kmeansPoint`, features stored feature-major (`features[f · points + p]`)
/// so that a warp's reads of one feature are contiguous; centres are `nfeatures` floats each.
#[kernel]
pub fn kmeans_assign(nfeatures: usize, features: &[f32], clusters: &[f32], membership: &mut [u32]) {
    let points = membership.len();
    let p = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if p < points {
        let nclusters = clusters.len() / nfeatures;
        let mut best = 0;
        let mut best_dist = f32::MAX;
        for c in 0..nclusters {
            let mut dist = 0.0f32;
            for f in 0..nfeatures {
                let d = features[f * points + p] - clusters[c * nfeatures + f];
                dist += d * d;
            }
            if dist < best_dist {
                best_dist = dist;
                best = c;
            }
        }
        membership[p] = best as u32;
    }
}

/// Counts `data` (floats in `[lo, hi)`) into `HIST_BINS` equal bins with global atomics, a
/// value at or past `hi` in the last bin; a grid-stride loop, the bin from a float-to-integer
/// conversion as the CUDA histogram examples compute it.
#[kernel]
pub fn histogram_f32(data: &[f32], lo: f32, hi: f32, bins: &mut [u32]) {
    let scale = HIST_BINS as f32 / (hi - lo);
    for i in (global_idx().x..data.len()).step_by(grid_size().x) {
        let bin = (((data[i] - lo) * scale) as usize).min(HIST_BINS - 1);
        bins.atomic_add(bin, 1);
    }
}
