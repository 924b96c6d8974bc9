//! The eighth set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): a breadth-first search level over a graph in CSR form (Rodinia's `bfs`),
//! a sparse matrix-vector product in ELL form (PMPP's `spmv_ell`), and a one-pass sum whose last
//! block adds the blocks' partial sums (the CUDA samples' `threadFenceReduction`).

use gpu_dsl::prelude::*;

/// Threads per block of the one-pass sum.
pub const FENCE_THREADS: usize = 256;

/// A graph node of Rodinia's BFS: where its edges start in the edge list, and how many.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Node {
    pub start: u32,
    pub edges: u32,
}

/// One level of Rodinia's breadth-first search: each node of the frontier (`mask`) leaves it
/// and gives each unvisited neighbour its cost plus one, marking it for the next frontier.
#[kernel]
pub fn bfs_expand(
    nodes: &[Node],
    edges: &[u32],
    mask: &mut [bool],
    updating: &mut [bool],
    visited: &[bool],
    cost: &mut [i32],
) {
    let tid = global_idx().x;
    if tid < nodes.len() && mask[tid] {
        mask[tid] = false;
        let node = nodes[tid];
        for i in node.start..node.start + node.edges {
            let id = edges[i as usize] as usize;
            if !visited[id] {
                cost[id] = cost[tid] + 1;
                updating[id] = true;
            }
        }
    }
}

/// `y = A·x` for `A` in ELL form, column-major: row `r`'s `k`-th entry at `k * rows + r`
/// (`cols` and `vals`), padded rows pointing at column 0 with value 0; a thread per row.
#[kernel]
pub fn spmv_ell(rows: usize, width: usize, cols: &[u32], vals: &[f32], x: &[f32], y: &mut [f32]) {
    let row = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if row < rows {
        let mut sum = 0.0f32;
        for k in 0..width {
            let at = k * rows + row;
            sum += vals[at] * x[cols[at] as usize];
        }
        y[row] = sum;
    }
}

/// The sum of `input` in one launch: each block sums its part in shared memory and writes it to
/// `partial`; the last block to finish (counted in `done[0]`, after a fence that makes the
/// partial visible) adds the partials into `total[0]` and resets the count for the next launch.
#[kernel]
pub fn fence_sum(input: &[f32], partial: &mut [f32], done: &mut [u32], total: &mut [f32]) {
    let cache = shared_array::<f32, FENCE_THREADS>();
    let last = shared_array::<bool, 1>();
    let tid = thread_idx().x as usize;
    let mut sum = 0.0f32;
    let mut i = global_idx().x;
    while i < input.len() {
        sum += input[i];
        i += grid_size().x;
    }
    cache[tid] = sum;
    sync_threads();
    let mut stride = FENCE_THREADS / 2;
    while stride > 0 {
        if tid < stride {
            cache[tid] += cache[tid + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if tid == 0 {
        partial[block_idx().x as usize] = cache[0];
        thread_fence();
        let ticket = done.atomic_add(0, 1);
        last[0] = ticket == grid_dim().x - 1;
    }
    sync_threads();
    if last[0] {
        let mut sum = 0.0f32;
        let mut i = tid;
        while i < grid_dim().x as usize {
            sum += partial[i];
            i += FENCE_THREADS;
        }
        cache[tid] = sum;
        sync_threads();
        let mut stride = FENCE_THREADS / 2;
        while stride > 0 {
            if tid < stride {
                cache[tid] += cache[tid + stride];
            }
            sync_threads();
            stride /= 2;
        }
        if tid == 0 {
            total[0] = cache[0];
            done[0] = 0;
        }
    }
}
