//! Block-wide reductions: what [`crate::reduce`] and [`crate::mlp`] combine a block's values
//! with.
//!
//! [`combine`] is one combining step of any number type, `combine(op, a, b)` with `op` 0 sum, 1
//! min and 2 max (the reduction kernels pass their `OP` template argument, so the choice is
//! made at compile time); `f64` has its own, [`combine_f64`]. [`block_combine`] combines every
//! thread's value with a closure: warp shuffles combine each warp's values, lane 0 of every
//! warp leaves its value in shared memory, and after one barrier every warp combines those
//! values the same way, so no warp waits on another. The order of the combining steps depends
//! only on the block size, so a block gives the same bits on every run.

use gpu_dsl_macros::device;

/// `a` and `b` combined by `op`: 0 sum (wrapping for integers), 1 min, 2 max. For `f32` the
/// minimum and maximum are CUDA's fminf/fmaxf, which ignore a NaN operand as `f32::min` does.
#[device]
pub(crate) fn combine<T: Number>(op: usize, a: T, b: T) -> T {
    if op == 0 {
        a + b
    } else if op == 1 {
        a.min(b)
    } else {
        a.max(b)
    }
}

/// `a` and `b` combined by `op`: 0 sum, 1 min, 2 max. `min` and `max` are spelled out: `b < a
/// || a != a` picks `b` when it is smaller or `a` is NaN, which ignores a NaN operand as
/// `f64::min` does. (`a.min(b)`, CUDA's fmin, gives the same results with other instructions
/// than the `f64` reduction was measured with.)
#[device]
pub(crate) fn combine_f64(op: usize, a: f64, b: f64) -> f64 {
    if op == 0 {
        a + b
    } else if op == 1 {
        if b < a || a != a {
            b
        } else {
            a
        }
    } else if b > a || a != a {
        b
    } else {
        a
    }
}

/// `value` combined by `op` over the block's threads, returned to lane 0 of every warp (thread
/// 0 included); `identity` combined with any value gives that value. Every thread of the block
/// must call it, and the block must be whole warps. Each instantiation (element type and
/// closure) has its own shared array; two calls of one in a row need a `sync_threads()`
/// between them.
#[device]
pub(crate) fn block_combine<T: Number, F: Fn(T, T) -> T>(value: T, identity: T, op: F) -> T {
    let warp_values = shared_array::<T, 32>();
    let t = thread_idx().x;
    let lane = lane_id();
    let warps = block_dim().x / 32;
    let mut v = value;
    // Level 0 combines within each warp, level 1 the warps' values (every warp does it, so no
    // warp waits on another).
    for level in 0..2 {
        let mut offset = 16u32;
        while offset > 0 {
            v = op(v, shfl_down_sync(0xffff_ffff, v, offset));
            offset /= 2;
        }
        if level == 0 {
            if lane == 0 {
                warp_values[(t / 32) as usize] = v;
            }
            sync_threads();
            v = if lane < warps {
                warp_values[lane as usize]
            } else {
                identity
            };
        }
    }
    v
}
