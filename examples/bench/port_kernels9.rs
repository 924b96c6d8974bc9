//! The ninth set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): Needleman-Wunsch alignment by anti-diagonals of a shared tile
//! (Rodinia's `nw`), a thermal simulation step through a shared tile with a halo (Rodinia's
//! `hotspot`), and a bilateral filter (the CUDA samples' `bilateralFilter`, without textures).

use gpu_dsl::prelude::*;

/// Side of Needleman-Wunsch's tiles: a block of `NW_BLOCK` threads fills one.
pub const NW_BLOCK: usize = 16;
/// Side of hotspot's blocks; each computes the `HOT_BLOCK - 2` square inside its halo.
pub const HOT_BLOCK: usize = 16;
/// The bilateral filter's radius: a `(2R + 1)²` window.
pub const BILATERAL_RADIUS: i32 = 3;

/// The best of three scores.
#[device]
pub fn maximum(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).max(c)
}

/// One anti-diagonal of tiles of Needleman-Wunsch's score matrix (`cols` columns, row and
/// column 0 the gap penalties), upper-left half: block `bx` fills tile (`diagonal - 1 - bx`,
/// `bx`) from its top row and left column, one anti-diagonal of the tile at a time.
#[kernel]
pub fn nw_diagonal(
    reference: &[i32],
    score: &mut [i32],
    cols: usize,
    penalty: i32,
    diagonal: usize,
) {
    let temp = shared_array::<[i32; NW_BLOCK + 1], { NW_BLOCK + 1 }>();
    let refs = shared_array::<[i32; NW_BLOCK], NW_BLOCK>();
    let bx = block_idx().x as usize;
    let tx = thread_idx().x as usize;
    let by = diagonal - 1 - bx;
    let corner = cols * NW_BLOCK * by + NW_BLOCK * bx;
    let index = corner + tx + cols + 1;
    if tx == 0 {
        temp[0][0] = score[corner];
    }
    for ty in 0..NW_BLOCK {
        refs[ty][tx] = reference[index + cols * ty];
    }
    sync_threads();
    temp[tx + 1][0] = score[corner + cols * (tx + 1)];
    sync_threads();
    temp[0][tx + 1] = score[corner + tx + 1];
    sync_threads();
    for m in 0..NW_BLOCK {
        if tx <= m {
            let x = tx + 1;
            let y = m - tx + 1;
            temp[y][x] = maximum(
                temp[y - 1][x - 1] + refs[y - 1][x - 1],
                temp[y][x - 1] - penalty,
                temp[y - 1][x] - penalty,
            );
        }
        sync_threads();
    }
    for m in (0..NW_BLOCK - 1).rev() {
        if tx <= m {
            let x = tx + NW_BLOCK - m;
            let y = NW_BLOCK - tx;
            temp[y][x] = maximum(
                temp[y - 1][x - 1] + refs[y - 1][x - 1],
                temp[y][x - 1] - penalty,
                temp[y - 1][x] - penalty,
            );
        }
        sync_threads();
    }
    for ty in 0..NW_BLOCK {
        score[index + ty * cols] = temp[ty + 1][tx + 1];
    }
}

/// One step of Rodinia's hotspot on a `rows × cols` grid: a block loads its 16×16 tile (the
/// neighbouring blocks' edges as its halo, clamped at the grid's edges) and updates the 14×14
/// inside from each cell's power and its four neighbours.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn hotspot_step(
    power: &[f32],
    temp_in: &[f32],
    temp_out: &mut [f32],
    cols: usize,
    rows: usize,
    cap: f32,
    rx: f32,
    ry: f32,
    rz: f32,
) {
    let tile = shared_array::<[f32; HOT_BLOCK], HOT_BLOCK>();
    const AMB_TEMP: f32 = 80.0;
    let small = HOT_BLOCK as isize - 2;
    let tx = thread_idx().x as isize;
    let ty = thread_idx().y as isize;
    // The tile's first row and column, one cell into the neighbouring blocks.
    let row = small * block_idx().y as isize - 1 + ty;
    let col = small * block_idx().x as isize - 1 + tx;
    let inside = row >= 0 && row < rows as isize && col >= 0 && col < cols as isize;
    if inside {
        tile[ty as usize][tx as usize] = temp_in[row as usize * cols + col as usize];
    }
    sync_threads();
    // The tile's rows and columns that hold grid cells.
    let (first_row, first_col) = (row - ty, col - tx);
    let top = if first_row < 0 { -first_row } else { 0 };
    let bottom = (rows as isize - 1 - first_row).min(HOT_BLOCK as isize - 1);
    let left = if first_col < 0 { -first_col } else { 0 };
    let right = (cols as isize - 1 - first_col).min(HOT_BLOCK as isize - 1);
    let n = (ty - 1).max(top) as usize;
    let s = (ty + 1).min(bottom) as usize;
    let w = (tx - 1).max(left) as usize;
    let e = (tx + 1).min(right) as usize;
    let (x, y) = (tx as usize, ty as usize);
    if tx >= 1 && tx <= small && ty >= 1 && ty <= small && inside {
        let here = tile[y][x];
        let at = row as usize * cols + col as usize;
        temp_out[at] = here
            + cap
                * (power[at]
                    + (tile[s][x] + tile[n][x] - 2.0 * here) * ry
                    + (tile[y][e] + tile[y][w] - 2.0 * here) * rx
                    + (AMB_TEMP - here) * rz);
    }
}

/// The CUDA samples' bilateral filter on a grey image: each pixel the mean of its window
/// weighted by distance (`gaussian`, a table of `exp(-d² / 2σ_d²)` by offset) and by
/// difference (`exp(-Δ² / 2σ_r²)`), the window clamped at the image's edges.
#[kernel]
pub fn bilateral(
    width: usize,
    height: usize,
    gaussian: &[f32],
    inv_2r2: f32,
    src: &[f32],
    dst: &mut [f32],
) {
    let x = (block_idx().x * block_dim().x + thread_idx().x) as i32;
    let y = (block_idx().y * block_dim().y + thread_idx().y) as i32;
    let (w, h) = (width as i32, height as i32);
    if x < w && y < h {
        let center = src[(y * w + x) as usize];
        let mut sum = 0.0f32;
        let mut total = 0.0f32;
        for dy in -BILATERAL_RADIUS..=BILATERAL_RADIUS {
            let sy = (y + dy).clamp(0, h - 1);
            for dx in -BILATERAL_RADIUS..=BILATERAL_RADIUS {
                let sx = (x + dx).clamp(0, w - 1);
                let v = src[(sy * w + sx) as usize];
                let d = v - center;
                let factor = gaussian[(dy + BILATERAL_RADIUS) as usize]
                    * gaussian[(dx + BILATERAL_RADIUS) as usize]
                    * (-d * d * inv_2r2).exp();
                sum += factor * v;
                total += factor;
            }
        }
        dst[(y * w + x) as usize] = sum / total;
    }
}
