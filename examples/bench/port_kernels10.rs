//! The tenth set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): block-matching stereo disparity by sums of absolute differences of bytes
//! (the CUDA samples' `stereoDisparity`, without its SIMD intrinsics), the 8×8 DCT of JPEG by
//! a table of cosines through a shared tile (the CUDA samples' `dct8x8`, its first kernel), and
//! a quantized matrix-vector product of `i8` weights accumulated in `i32`.

use gpu_dsl::prelude::*;

/// Half the side of the stereo matcher's window: `(2R + 1)²` pixels.
pub const SAD_RADIUS: i32 = 4;
/// Disparities the stereo matcher tries, `0..MAX_DISPARITY`.
pub const MAX_DISPARITY: i32 = 32;
/// The DCT's block side.
pub const DCT_SIZE: usize = 8;

/// `cos((2x + 1)·u·π / 16) · c(u)`, row `u`, column `x`: the orthonormal 8-point DCT-II matrix
/// (the twin's table, to the same digits).
#[allow(clippy::excessive_precision)]
const DCT_COS: [f32; 64] = [
    0.35355339,
    0.35355339,
    0.35355339,
    0.35355339,
    0.35355339,
    0.35355339,
    0.35355339,
    0.35355339,
    0.49039264,
    0.41573481,
    0.27778512,
    0.09754516,
    -0.09754516,
    -0.27778512,
    -0.41573481,
    -0.49039264,
    0.46193977,
    0.19134172,
    -0.19134172,
    -0.46193977,
    -0.46193977,
    -0.19134172,
    0.19134172,
    0.46193977,
    0.41573481,
    -0.09754516,
    -0.49039264,
    -0.27778512,
    0.27778512,
    0.49039264,
    0.09754516,
    -0.41573481,
    0.35355339,
    -0.35355339,
    -0.35355339,
    0.35355339,
    0.35355339,
    -0.35355339,
    -0.35355339,
    0.35355339,
    0.27778512,
    -0.49039264,
    0.09754516,
    0.41573481,
    -0.41573481,
    -0.09754516,
    0.49039264,
    -0.27778512,
    0.19134172,
    -0.46193977,
    0.46193977,
    -0.19134172,
    -0.19134172,
    0.46193977,
    -0.46193977,
    0.19134172,
    0.09754516,
    -0.27778512,
    0.41573481,
    -0.49039264,
    0.49039264,
    -0.41573481,
    0.27778512,
    -0.09754516,
];

/// For each pixel of the left image, the disparity `d` whose window in the right image,
/// shifted `d` pixels left, differs least (sum of absolute differences, edges clamped).
#[kernel]
pub fn stereo_sad(width: usize, height: usize, left: &[u8], right: &[u8], disparity: &mut [u32]) {
    let x = (block_idx().x * block_dim().x + thread_idx().x) as i32;
    let y = (block_idx().y * block_dim().y + thread_idx().y) as i32;
    let (w, h) = (width as i32, height as i32);
    if x >= w || y >= h {
        return;
    }
    let mut best = u32::MAX;
    let mut best_d = 0u32;
    for d in 0..MAX_DISPARITY {
        let mut sad = 0u32;
        for dy in -SAD_RADIUS..=SAD_RADIUS {
            let row = (y + dy).clamp(0, h - 1) * w;
            for dx in -SAD_RADIUS..=SAD_RADIUS {
                let lx = (x + dx).clamp(0, w - 1);
                let rx = (x + dx - d).clamp(0, w - 1);
                let a = left[(row + lx) as usize] as i32;
                let b = right[(row + rx) as usize] as i32;
                sad += (a - b).unsigned_abs();
            }
        }
        if sad < best {
            best = sad;
            best_d = d as u32;
        }
    }
    disparity[(y * w + x) as usize] = best_d;
}

/// The 2-D DCT of each 8×8 block of a `width`-wide image: a block of 8×8 threads loads its
/// tile, transforms the rows and then the columns with the cosine table, each through shared
/// memory.
#[kernel]
pub fn dct8x8(width: usize, src: &[f32], dst: &mut [f32]) {
    let tile = shared_array::<[f32; DCT_SIZE], DCT_SIZE>();
    let rows = shared_array::<[f32; DCT_SIZE], DCT_SIZE>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let x = block_idx().x as usize * DCT_SIZE + tx;
    let y = block_idx().y as usize * DCT_SIZE + ty;
    tile[ty][tx] = src[y * width + x];
    sync_threads();
    // Row transform: coefficient `tx` of row `ty`.
    let mut sum = 0.0f32;
    for k in 0..DCT_SIZE {
        sum += DCT_COS[tx * DCT_SIZE + k] * tile[ty][k];
    }
    rows[ty][tx] = sum;
    sync_threads();
    // Column transform: coefficient `ty` of column `tx`.
    let mut sum = 0.0f32;
    for k in 0..DCT_SIZE {
        sum += DCT_COS[ty * DCT_SIZE + k] * rows[k][tx];
    }
    dst[y * width + x] = sum;
}

/// `y = W·x` for `i8` weights (`rows × cols`, row-major) and `i8` activations, accumulated in
/// `i32` and scaled to `f32`: a warp per row, each lane taking every 32nd column, the lanes'
/// sums added by shuffles.
#[kernel]
pub fn gemv_i8(rows: usize, cols: usize, w: &[i8], x: &[i8], scale: f32, y: &mut [f32]) {
    let warp = global_idx().x / 32;
    let lane = lane_id() as usize;
    if warp < rows {
        let mut acc = 0i32;
        let mut c = lane;
        while c < cols {
            acc += w[warp * cols + c] as i32 * x[c] as i32;
            c += 32;
        }
        let mut offset = 16;
        while offset > 0 {
            acc += shfl_down_sync(0xffff_ffff, acc, offset);
            offset /= 2;
        }
        if lane == 0 {
            y[warp] = acc as f32 * scale;
        }
    }
}
