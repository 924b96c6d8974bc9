//! The seventeenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): an activation chosen by a `#[device]` enum parameter and a `match`, an
//! in-place transpose of a square matrix by `swap`s above the diagonal, and stream compaction
//! within each warp by ballots (the warp-aggregated atomic of the CUDA programming guide).

use gpu_dsl::prelude::*;

/// An activation function.
#[device]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
// The bench times one of them; tests/ports17.rs runs every one.
#[allow(dead_code)]
pub enum Activation {
    Relu = 0,
    Tanh = 1,
    Sigmoid = 2,
    Gelu = 3,
}

/// `y = act(x + bias[column])` for a row-major matrix of `bias.len()` columns, a thread per
/// element, the activation picked per launch.
#[kernel]
pub fn bias_activation(act: Activation, x: &[f32], bias: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        let v = x[i] + bias[i % bias.len()];
        y[i] = match act {
            Activation::Relu => v.max(0.0),
            Activation::Tanh => v.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            Activation::Gelu => {
                0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh())
            }
        };
    }
}

/// Transposes the `n x n` matrix `a` in place: the thread of each element above the diagonal
/// swaps it with its mirror.
#[kernel]
pub fn transpose_in_place(n: usize, a: &mut [f32]) {
    let col = global_idx().x;
    let row = global_idx().y;
    if row < n && col < n && col > row {
        a.swap(row * n + col, col * n + row);
    }
}

/// Copies the positive elements of `input` to `output` in no particular order, counting them
/// in `count[0]`: each warp votes on which lanes keep theirs, one lane reserves the warp's
/// places with a single atomic, and each kept element goes to the reserved base plus the
/// number of kept lanes below its own.
#[kernel]
pub fn compact_warp_aggregated(input: &[f32], output: &mut [f32], count: &mut [u32]) {
    let i = global_idx().x;
    let lane = lane_id();
    let v = if i < input.len() { input[i] } else { 0.0 };
    let keep = v > 0.0;
    let votes = ballot_sync(0xffff_ffff, keep);
    let mut base = 0u32;
    if lane == 0 && votes != 0 {
        base = count.atomic_add(0, votes.count_ones());
    }
    base = shfl_sync(0xffff_ffff, base, 0);
    if keep {
        let below = (votes & ((1u32 << lane) - 1)).count_ones();
        output[(base + below) as usize] = v;
    }
}
