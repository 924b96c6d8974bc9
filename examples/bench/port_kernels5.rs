//! A fifth set of classic CUDA programs written as a Rust user writes them: a box filter whose
//! neighbour offsets are `isize` and run over `-RADIUS..=RADIUS`, one step of Floyd-Warshall's
//! all-pairs shortest paths in `i32`, a row of Rodinia's pathfinder (each cell the cheapest of
//! its three neighbours above, clamped at the edges with `isize` arithmetic), and stream
//! compaction with warp-aggregated atomics (a ballot, a population count, one atomic a warp),
//! and three in Rust's idioms: a matrix-vector product that walks each row with
//! `.iter().enumerate()`, a heat step on a ring wrapped with `rem_euclid`, and MurmurHash3's
//! mix with `rotate_left`. `ports5.rs` times each against its CUDA C twin; `tests/ports5.rs`
//! checks each against plain Rust.

use gpu_dsl::prelude::*;

/// The box filter's radius: a `(2R + 1)²` window.
pub const RADIUS: isize = 2;
/// Floyd-Warshall's "no path": large, and twice it still fits an `i32`.
pub const NO_PATH: i32 = 1 << 29;

/// The mean of each pixel's `(2R + 1)²` window, over the pixels that lie inside the image.
#[kernel]
pub fn box_filter(width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let mut sum = 0.0f32;
        let mut count = 0u32;
        for dy in -RADIUS..=RADIUS {
            for dx in -RADIUS..=RADIUS {
                let nx = x as isize + dx;
                let ny = y as isize + dy;
                if nx >= 0 && nx < width as isize && ny >= 0 && ny < height as isize {
                    sum += input[ny as usize * width + nx as usize];
                    count += 1;
                }
            }
        }
        output[y * width + x] = sum / count as f32;
    }
}

/// Floyd-Warshall's step for intermediate vertex `k`: every path `i → j` becomes `i → k → j`
/// where that is shorter. A thread per `(i, j)`, row `i` along y.
#[kernel]
pub fn floyd_step(n: usize, k: usize, dist: &mut [i32]) {
    let j = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let i = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if i < n && j < n {
        let via = dist[i * n + k] + dist[k * n + j];
        if via < dist[i * n + j] {
            dist[i * n + j] = via;
        }
    }
}

/// One row of Rodinia's pathfinder: each cell of `next` is its own cost in row `row` of `wall`
/// plus the cheapest of the three cells above it in `prev` (two at the edges, by clamping).
#[kernel]
pub fn path_row(width: usize, row: usize, wall: &[i32], prev: &[i32], next: &mut [i32]) {
    let j = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if j < width {
        let left = (j as isize - 1).max(0) as usize;
        let right = (j + 1).min(width - 1);
        let best = prev[left].min(prev[j]).min(prev[right]);
        next[j] = wall[row * width + j] + best;
    }
}

/// The positive values of `input`, in no particular order, into `output`; their count into
/// `count[0]`. Each warp counts its survivors with a ballot and reserves their places with one
/// atomic, its first survivor's; each survivor's place is the number below it in the warp.
#[kernel]
pub fn compact_positive(input: &[f32], output: &mut [f32], count: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let lane = lane_id();
    let value = if i < input.len() { input[i] } else { 0.0 };
    let keep = i < input.len() && value > 0.0;
    let votes = ballot_sync(0xffff_ffff, keep);
    let mut base = 0u32;
    if votes != 0 && lane == votes.trailing_zeros() {
        base = count.atomic_add(0, votes.count_ones());
    }
    base = shfl_sync(0xffff_ffff, base, votes.trailing_zeros().min(31));
    if keep {
        let below = (votes & ((1u32 << lane) - 1)).count_ones();
        output[(base + below) as usize] = value;
    }
}

/// `y = A·x` for a row-major `rows × n` matrix, a thread per row walking it with an
/// iterator, as Rust code sums a row: the naive matrix-vector product.
#[kernel]
pub fn gemv_rows(n: usize, a: &[f32], x: &[f32], y: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < y.len() {
        let row = &a[i * n..(i + 1) * n];
        let mut sum = 0.0f32;
        for (j, &v) in row.iter().enumerate() {
            sum += v * x[j];
        }
        y[i] = sum;
    }
}

/// One explicit step of the 1-D heat equation on a ring: each cell moves toward the mean of
/// its neighbours, which wrap around with `rem_euclid`.
#[kernel]
pub fn heat_ring(alpha: f32, u: &[f32], next: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let n = u.len();
    if i < n {
        let left = (i as isize - 1).rem_euclid(n as isize) as usize;
        let right = (i + 1) % n;
        next[i] = u[i] + alpha * (u[left] - 2.0 * u[i] + u[right]);
    }
}

/// MurmurHash3's 32-bit mix of each key with a seed: multiplies, rotations and xor-shifts.
#[kernel]
pub fn murmur_mix(seed: u32, keys: &[u32], hashes: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < keys.len() {
        let mut k = keys[i].wrapping_mul(0xcc9e_2d51);
        k = k.rotate_left(15).wrapping_mul(0x1b87_3593);
        let mut h = seed ^ k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        h ^= 4;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        hashes[i] = h ^ (h >> 16);
    }
}
