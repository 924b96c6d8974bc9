//! Kernels with one planted bug each, beside a correct twin: what the CPU backend's race
//! checker and compute-sanitizer are asked to find. The comment `// planted: NAME` marks each
//! line a report must name; tests find the lines by those markers.

use gpu_dsl::prelude::*;

/// A block's tree reduction of `x` into `out[block]` — without the barrier between the
/// stores of the tile and the first reads of it.
#[kernel]
pub fn sum_missing_barrier(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    tile[t] = x[global_idx().x as usize]; // planted: missing-barrier-store
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            tile[t] += tile[t + stride]; // planted: missing-barrier-load
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = tile[0];
    }
}

/// The same reduction, with the barrier.
#[kernel]
pub fn sum_with_barrier(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    tile[t] = x[global_idx().x as usize];
    sync_threads();
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            tile[t] += tile[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = tile[0];
    }
}

/// Half the block waits at a barrier the other half never reaches.
#[kernel]
pub fn barrier_in_branch(out: &mut [u32]) {
    let t = thread_idx().x;
    if t < 16 {
        sync_threads(); // planted: branch-barrier
    }
    out[global_idx().x as usize] = t; // planted: branch-exit
}

/// Every thread reaches the barrier.
#[kernel]
pub fn barrier_for_all(out: &mut [u32]) {
    let t = thread_idx().x;
    sync_threads();
    out[global_idx().x as usize] = t;
}

/// Each block writes `out[0..block_dim]`: the block offset is missing, so every block writes
/// the same elements.
#[kernel]
pub fn blocks_share_output(x: &[f32], out: &mut [f32]) {
    let i = thread_idx().x as usize;
    out[i] = 2.0 * x[global_idx().x as usize]; // planted: shared-output
}

/// Each block writes its own part of `out`.
#[kernel]
pub fn blocks_own_output(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x as usize;
    out[i] = 2.0 * x[i];
}

/// The block's second half reads shared memory only the first half wrote.
#[kernel]
pub fn reads_unwritten_shared(out: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx().x as usize;
    if t < 32 {
        tile[t] = t as f32;
    }
    sync_threads();
    out[global_idx().x as usize] = tile[t]; // planted: unwritten-read
}

/// Every element read was written.
#[kernel]
pub fn reads_written_shared(out: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx().x as usize;
    tile[t] = t as f32;
    sync_threads();
    out[global_idx().x as usize] = tile[63 - t];
}

/// Lanes past the end return, then the rest shuffle with a mask naming every lane.
#[kernel]
pub fn shuffle_after_exit(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x as usize;
    if i >= x.len() {
        return; // planted: shuffle-exit
    }
    let v = x[i];
    let next = shfl_down_sync(0xffff_ffff, v, 1); // planted: shuffle
    out[i] = v + next;
}

/// Every lane takes part in the shuffle; only the stores are guarded.
#[kernel]
pub fn shuffle_then_guard(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x as usize;
    let v = if i < x.len() { x[i] } else { 0.0 };
    let next = shfl_down_sync(0xffff_ffff, v, 1);
    if i < x.len() {
        out[i] = v + next;
    }
}
