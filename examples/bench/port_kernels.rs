//! Classic CUDA programs written as a Rust user writes them: `usize` indices, slices, the
//! intrinsics by their Rust names. `ports.rs` times each against its CUDA C twin;
//! `tests/ports.rs` checks each against plain Rust on both backends.

use gpu_dsl::prelude::*;

/// The side of the matmul and transpose tiles.
pub const TILE: usize = 32;
/// Rows of a transpose tile each thread moves (the tile is 32 × 32, the block 32 × 8).
pub const TRANSPOSE_ROWS: usize = 8;
/// Threads per block of the histogram and the reduction.
pub const BLOCK: usize = 256;
/// Bodies per block and per shared-memory tile of the n-body step.
pub const BODIES_PER_TILE: usize = 256;

/// `c = a · b` for square `n × n` row-major matrices, `n` a multiple of 32, 32 × 32 blocks: the
/// shared-memory tiled product of every CUDA course.
#[kernel]
pub fn matmul_tiled(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile_a = shared_array::<f32, { TILE * TILE }>();
    let tile_b = shared_array::<f32, { TILE * TILE }>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = block_idx().y as usize * TILE + ty;
    let col = block_idx().x as usize * TILE + tx;
    let mut sum = 0.0f32;
    for t in 0..n / TILE {
        tile_a[ty * TILE + tx] = a[row * n + t * TILE + tx];
        tile_b[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        sync_threads();
        for k in 0..TILE {
            sum += tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        }
        sync_threads();
    }
    c[row * n + col] = sum;
}

/// `c (m × n) = a (m × k) · b (k × n)` for any sizes: 32 × 32 tiles in two-dimensional shared
/// arrays, zero-padded at the edges (the general form courses teach after the square one).
#[kernel]
pub fn matmul_general(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile_a = shared_array::<[f32; TILE], TILE>();
    let tile_b = shared_array::<[f32; TILE], TILE>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = block_idx().y as usize * TILE + ty;
    let col = block_idx().x as usize * TILE + tx;
    let mut sum = 0.0f32;
    for t in 0..(k + TILE - 1) / TILE {
        let a_col = t * TILE + tx;
        let b_row = t * TILE + ty;
        tile_a[ty][tx] = if row < m && a_col < k {
            a[row * k + a_col]
        } else {
            0.0
        };
        tile_b[ty][tx] = if b_row < k && col < n {
            b[b_row * n + col]
        } else {
            0.0
        };
        sync_threads();
        for i in 0..TILE {
            sum += tile_a[ty][i] * tile_b[i][tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[row * n + col] = sum;
    }
}

/// `output` (`height` rows of `width`) = `input`ᵀ through a padded shared tile, 32 × 8 blocks
/// each moving a 32 × 32 tile (the transpose of NVIDIA's sample).
#[kernel]
pub fn transpose_tiled(width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let tile = shared_array::<[f32; 33], 32>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let x = block_idx().x as usize * TILE + tx;
    let y = block_idx().y as usize * TILE + ty;
    for j in (0..TILE).step_by(TRANSPOSE_ROWS) {
        if x < width && y + j < height {
            tile[ty + j][tx] = input[(y + j) * width + x];
        }
    }
    sync_threads();
    let x = block_idx().y as usize * TILE + tx;
    let y = block_idx().x as usize * TILE + ty;
    for j in (0..TILE).step_by(TRANSPOSE_ROWS) {
        if x < height && y + j < width {
            output[(y + j) * height + x] = tile[tx][ty + j];
        }
    }
}

/// Adds the 256-bin histogram of `data` to `bins`: per-block counts in shared memory, merged
/// with one global atomic per bin and block. 256-thread blocks, grid-stride.
#[kernel]
pub fn histogram256(data: &[u8], bins: &mut [u32]) {
    let local = shared_array::<u32, 256>();
    let t = thread_idx().x as usize;
    local[t] = 0;
    sync_threads();
    let mut i = global_idx().x;
    while i < data.len() {
        local.atomic_add(data[i] as usize, 1);
        i += grid_size().x;
    }
    sync_threads();
    if local[t] != 0 {
        bins.atomic_add(t, local[t]);
    }
}

/// Adds the sum of `x` to `total[0]`: a grid-stride sum per thread, a shared-memory tree down
/// to one warp, shuffles, one atomic per block. 256-thread blocks.
#[kernel]
pub fn reduce_sum(x: &[f32], total: &mut [f32]) {
    let partial = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    let mut sum = 0.0f32;
    let mut i = global_idx().x;
    while i < x.len() {
        sum += x[i];
        i += grid_size().x;
    }
    partial[t] = sum;
    sync_threads();
    let mut stride = BLOCK / 2;
    while stride >= 32 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t < 32 {
        let mut v = partial[t];
        let mut offset = 16u32;
        while offset > 0 {
            v += shfl_down_sync(0xffff_ffff, v, offset);
            offset /= 2;
        }
        if t == 0 {
            total.atomic_add(0, v);
        }
    }
}

/// One explicit step of the heat equation on a `width × height` grid (edges kept): each
/// interior point reads its four neighbours from global memory.
#[kernel]
pub fn heat_step(width: usize, height: usize, k: f32, u: &[f32], next: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
        let i = y * width + x;
        let laplacian = u[i - 1] + u[i + 1] + u[i - width] + u[i + width] - 4.0 * u[i];
        next[i] = u[i] + k * laplacian;
    }
}

/// Accelerations of `n` bodies (`pos` holds x, y, z, mass per body) from every other body,
/// softened, a shared-memory tile of 256 bodies at a time (GPU Gems 3, chapter 31).
#[kernel]
pub fn nbody_accel(pos: &[[f32; 4]], acc: &mut [[f32; 4]]) {
    let tile = shared_array::<[f32; 4], 256>();
    let n = pos.len();
    let i = global_idx().x;
    let me = if i < n { pos[i] } else { [0.0f32; 4] };
    let mut a = [0.0f32; 3];
    let t = thread_idx().x as usize;
    for start in (0..n).step_by(BODIES_PER_TILE) {
        if start + t < n {
            tile[t] = pos[start + t];
        } else {
            tile[t] = [0.0f32; 4];
        }
        sync_threads();
        for j in 0..BODIES_PER_TILE {
            let other = tile[j];
            let dx = other[0] - me[0];
            let dy = other[1] - me[1];
            let dz = other[2] - me[2];
            let r2 = dx * dx + dy * dy + dz * dz + 1e-3;
            let inv = 1.0 / r2.sqrt();
            let s = other[3] * inv * inv * inv;
            a[0] += dx * s;
            a[1] += dy * s;
            a[2] += dz * s;
        }
        sync_threads();
    }
    if i < n {
        acc[i] = [a[0], a[1], a[2], 0.0];
    }
}
