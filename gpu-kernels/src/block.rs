//! Block-wide reductions: what [`crate::reduce`] and [`crate::mlp`] combine a block's values
//! with.
//!
//! Each element type has a combining step, `combine_<type>(op, a, b)` with `op` 0 sum, 1 min
//! and 2 max (the reduction kernels pass their `OP` template argument, so the choice is made at
//! compile time), and a block reduction built on it, `block_combine_<type>(op, value,
//! identity)`: warp shuffles combine each warp's values, lane 0 of every warp leaves its value in
//! shared memory, and after one barrier every warp combines those values the same way, so no
//! warp waits on another. The order of the combining steps depends only on the block size, so a
//! block gives the same bits on every run.

use gpu_macros::device;

/// Stamps out the combining step of a type whose `min`/`max` are CUDA's: fminf/fmaxf for
/// `f32`, which ignore a NaN operand as `f32::min` does.
macro_rules! combine {
    ($t:ident: $combine:ident) => {
        /// `a` and `b` combined by `op`: 0 sum (wrapping for integers), 1 min, 2 max.
        #[device]
        pub(crate) fn $combine(op: usize, a: $t, b: $t) -> $t {
            if op == 0 {
                a + b
            } else if op == 1 {
                a.min(b)
            } else {
                a.max(b)
            }
        }
    };
}

combine!(f32: combine_f32);
combine!(i32: combine_i32);
combine!(u32: combine_u32);

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

/// Stamps out the block reduction of one element type on its combining step. Device functions
/// are not generic in the kernel language, so each type has its own copy, named by the
/// invocation; the text is the same for every type.
macro_rules! block_reduction {
    ($t:ident: $block_combine:ident, $combine:ident) => {
        /// `value` combined by `op` over the block's threads, returned to lane 0 of every warp
        /// (thread 0 included). Every thread of the block must call it, and the block must be
        /// whole warps. Calls for one type share one shared array, so two in a row need a
        /// `sync_threads()` between them.
        #[device]
        pub(crate) fn $block_combine(op: usize, value: $t, identity: $t) -> $t {
            let warp_values = shared_array::<$t, 32>();
            let t = thread_idx().x;
            let lane = lane_id();
            let warps = block_dim().x / 32;
            let mut v = value;
            // Level 0 combines within each warp, level 1 the warps' values (every warp does it,
            // so no warp waits on another).
            for level in 0..2 {
                let mut offset = 16u32;
                // A kernel gathers the device functions it reaches from its own module, so the
                // path works wherever the kernel is.
                while offset > 0 {
                    v = crate::block::$combine(op, v, shfl_down_sync(0xffff_ffff, v, offset));
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
    };
}

block_reduction!(f32: block_combine_f32, combine_f32);
block_reduction!(i32: block_combine_i32, combine_i32);
block_reduction!(u32: block_combine_u32, combine_u32);
block_reduction!(f64: block_combine_f64, combine_f64);
