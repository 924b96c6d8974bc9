//! The thirteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): a matrix product with 2-D register blocking (each thread keeps an 8x8
//! tile of C in registers, the step after shared-memory tiling in the SGEMM tutorials), a
//! radix-2 Stockham FFT pass over complex numbers held in a `#[device]` struct, and a layer
//! normalization with a warp per row.

use gpu_dsl::prelude::*;

/// Rows of C a block computes.
pub const BM: usize = 128;
/// Columns of C a block computes.
pub const BN: usize = 128;
/// The depth of the A and B tiles staged in shared memory.
pub const BK: usize = 8;
/// Rows of C a thread computes.
pub const TM: usize = 8;
/// Columns of C a thread computes.
pub const TN: usize = 8;

/// `C = A·B` for row-major `m x k` A and `k x n` B, `m` and `n` multiples of 128 and `k` of 8,
/// in blocks of `(BM / TM) * (BN / TN)` = 256 threads: each block stages a 128x8 slice of A and
/// an 8x128 slice of B in shared memory, and each thread multiplies a column of the one by a
/// row of the other into its 8x8 tile of C, held in registers.
#[kernel]
pub fn sgemm_blocked(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let a_tile = shared_array::<f32, { BM * BK }>();
    let b_tile = shared_array::<f32, { BK * BN }>();
    let block_row = block_idx().y as usize;
    let block_col = block_idx().x as usize;
    let tid = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    let thread_row = tid / (BN / TN);
    let thread_col = tid % (BN / TN);
    // Where this thread loads A's and B's tiles from, a column (or row) of threads apart.
    let (a_row, a_col) = (tid / BK, tid % BK);
    let (b_row, b_col) = (tid / BN, tid % BN);
    let a_stride = threads / BK;
    let b_stride = threads / BN;
    let mut results = [0.0f32; TM * TN];
    let mut reg_m = [0.0f32; TM];
    let mut reg_n = [0.0f32; TN];
    for block_k in (0..k).step_by(BK) {
        for offset in (0..BM).step_by(a_stride) {
            a_tile[(a_row + offset) * BK + a_col] =
                a[(block_row * BM + a_row + offset) * k + block_k + a_col];
        }
        for offset in (0..BK).step_by(b_stride) {
            b_tile[(b_row + offset) * BN + b_col] =
                b[(block_k + b_row + offset) * n + block_col * BN + b_col];
        }
        sync_threads();
        for dot in 0..BK {
            for i in 0..TM {
                reg_m[i] = a_tile[(thread_row * TM + i) * BK + dot];
            }
            for i in 0..TN {
                reg_n[i] = b_tile[dot * BN + thread_col * TN + i];
            }
            for i in 0..TM {
                for j in 0..TN {
                    results[i * TN + j] += reg_m[i] * reg_n[j];
                }
            }
        }
        sync_threads();
    }
    for i in 0..TM {
        for j in 0..TN {
            let row = block_row * BM + thread_row * TM + i;
            let col = block_col * BN + thread_col * TN + j;
            if row < m {
                c[row * n + col] = results[i * TN + j];
            }
        }
    }
}

/// A complex number of `f32`s.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Cf32 {
    pub re: f32,
    pub im: f32,
}

#[device]
impl Cf32 {
    /// `e^(i·angle)`.
    pub fn unit(angle: f32) -> Cf32 {
        let (s, c) = angle.sin_cos();
        Cf32 { re: c, im: s }
    }

    /// The product `self · other`.
    pub fn mul(self, other: Cf32) -> Cf32 {
        Cf32 {
            re: self.re * other.re - self.im * other.im,
            im: self.re * other.im + self.im * other.re,
        }
    }

    /// The sum `self + other`.
    pub fn add(self, other: Cf32) -> Cf32 {
        Cf32 {
            re: self.re + other.re,
            im: self.im + other.im,
        }
    }

    /// The difference `self - other`.
    pub fn sub(self, other: Cf32) -> Cf32 {
        Cf32 {
            re: self.re - other.re,
            im: self.im - other.im,
        }
    }
}

/// One radix-2 pass of a Stockham FFT of `input.len()` points (a power of two), whose
/// sub-transforms so far have `span` points: butterfly `j` reads points `j` and `j + n/2`,
/// turns the second by its twiddle and writes their sum and difference `span` apart in
/// `output` (Govindaraju et al.'s formulation, as OpenCL and CUDA FFT tutorials write it).
#[kernel]
pub fn fft_radix2(span: usize, input: &[Cf32], output: &mut [Cf32]) {
    let n = input.len();
    let j = global_idx().x;
    if j < n / 2 {
        let k = j % span;
        let angle = -2.0 * core::f32::consts::PI * k as f32 / (2 * span) as f32;
        let a = input[j];
        let b = input[j + n / 2].mul(Cf32::unit(angle));
        let out = (j / span) * span * 2 + k;
        output[out] = a.add(b);
        output[out + span] = a.sub(b);
    }
}

/// Layer normalization of each `cols`-long row of `x`, a warp per row: the mean and the
/// variance by warp sums, then `(x - mean) / sqrt(var + eps) · gamma + beta`.
#[kernel]
pub fn layer_norm(cols: usize, eps: f32, x: &[f32], gamma: &[f32], beta: &[f32], y: &mut [f32]) {
    let row = global_idx().x / 32;
    let lane = thread_idx().x as usize % 32;
    let rows = x.len() / cols;
    if row < rows {
        let xs = &x[row * cols..(row + 1) * cols];
        let mut sum = 0.0f32;
        for j in (lane..cols).step_by(32) {
            sum += xs[j];
        }
        let mean = warp_sum(sum) / cols as f32;
        let mut squares = 0.0f32;
        for j in (lane..cols).step_by(32) {
            let d = xs[j] - mean;
            squares += d * d;
        }
        let inv = 1.0 / (warp_sum(squares) / cols as f32 + eps).sqrt();
        let ys = &mut y[row * cols..(row + 1) * cols];
        for j in (lane..cols).step_by(32) {
            ys[j] = (xs[j] - mean) * inv * gamma[j] + beta[j];
        }
    }
}

/// The sum of `v` over the warp, in every lane.
#[device]
fn warp_sum(v: f32) -> f32 {
    let mut v = v;
    let mut offset = 16;
    while offset > 0 {
        v += shfl_xor_sync(0xffff_ffff, v, offset);
        offset /= 2;
    }
    v
}
