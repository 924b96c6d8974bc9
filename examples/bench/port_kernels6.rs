//! A sixth set of classic CUDA programs, each written with the Rust a port reaches for where
//! CUDA C has an index loop or a chain of `if`s: a separable Gaussian's row pass whose weights
//! are a module `const` array walked with `.iter().enumerate()`, Collatz path lengths counted
//! by `loop { .. break n }` over a `match` with a guard, a 1-D convolution computing several
//! outputs a thread in an array updated through `iter_mut` and written out with `zip`, and a
//! luminance histogram whose bin is a `match` on a float with guards. `ports6.rs` times each
//! against its CUDA C twin; `tests/ports6.rs` checks each against plain Rust.

use gpu_dsl::prelude::*;

/// The 7-tap binomial filter (weights / 64), as CUDA's separable convolution sample keeps its
/// filter in `__constant__` memory.
pub const GAUSS7: [f32; 7] = [
    0.015625, 0.09375, 0.234375, 0.3125, 0.234375, 0.09375, 0.015625,
];
/// The 1-D convolution's taps.
pub const TAPS9: [f32; 9] = [0.05, 0.1, 0.1, 0.15, 0.2, 0.15, 0.1, 0.1, 0.05];
/// Outputs of the 1-D convolution a thread computes.
pub const PER_THREAD: usize = 4;

/// The row pass of a separable Gaussian blur, clamped at the image's edges.
#[kernel]
pub fn gauss_rows(width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let row = &input[y * width..(y + 1) * width];
        let mut sum = 0.0f32;
        for (k, w) in GAUSS7.iter().enumerate() {
            let nx = (x + k).saturating_sub(3).min(width - 1);
            sum += w * row[nx];
        }
        output[y * width + x] = sum;
    }
}

/// The number of Collatz steps from each start to 1 (a start of 0 counts as 1).
#[kernel]
pub fn collatz_steps(start: &[u32], steps: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < start.len() {
        let mut v = start[i].max(1);
        let mut n = 0u32;
        steps[i] = loop {
            v = match v {
                1 => break n,
                even if even % 2 == 0 => even / 2,
                odd => odd.wrapping_mul(3).wrapping_add(1),
            };
            n += 1;
        };
    }
}

/// `y[i] = Σ_k TAPS9[k] · x[i + k]`, `PER_THREAD` consecutive outputs a thread.
#[kernel]
pub fn conv1d_blocked(x: &[f32], y: &mut [f32]) {
    let t = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let base = t * PER_THREAD;
    if base + PER_THREAD <= y.len() && base + PER_THREAD + TAPS9.len() - 1 <= x.len() {
        let mut acc = [0.0f32; PER_THREAD];
        for (k, w) in TAPS9.iter().enumerate() {
            for (j, a) in acc.iter_mut().enumerate() {
                *a += w * x[base + j + k];
            }
        }
        for (out, a) in y[base..base + PER_THREAD].iter_mut().zip(acc.iter()) {
            *out = *a;
        }
    }
}

/// Counts RGB pixels (three `f32` each, in [0, 1]) into four bins of luminance, per block in
/// shared memory, then once a block into `counts`.
#[kernel]
pub fn tone_histogram(rgb: &[f32], counts: &mut [u32]) {
    let bins = shared_array::<u32, 4>();
    let t = thread_idx().x as usize;
    if t < 4 {
        bins[t] = 0;
    }
    sync_threads();
    let i = block_idx().x as usize * block_dim().x as usize + t;
    if i * 3 + 2 < rgb.len() {
        let (r, g, b) = (rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2]);
        let lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let bin = match lum {
            l if l < 0.25 => 0,
            l if l < 0.5 => 1,
            l if l < 0.75 => 2,
            _ => 3,
        };
        bins.atomic_add(bin, 1);
    }
    sync_threads();
    if t < 4 {
        counts.atomic_add(t, bins[t]);
    }
}
