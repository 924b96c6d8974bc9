//! Reductions: the sum, minimum or maximum of a device buffer in one kernel launch, with the
//! same bits for the same input length on the same device.
//!
//! Every kernel runs one algorithm. Each thread walks the input with a grid-stride loop and
//! combines its elements in registers (four 16-byte `load4`s in flight for `f32`, `i32` and
//! `u32`, eight scalar loads for `f64`, eight 8-byte `load4`s for `f16`/`bf16`); the block combines
//! its threads' values with warp shuffles and one value per warp in shared memory; thread 0
//! stores the block's partial in a scratch buffer, fences, and takes a ticket from an atomic
//! counter. The block that draws the last ticket combines every partial in block order and
//! writes the result, then resets the counter for the next launch. The grid depends only on
//! the length and [`ReduceScratch::max_blocks`], and each step combines in a fixed order, so
//! the result does not depend on how blocks are scheduled.
//!
//! ```no_run
//! use gpu_dsl_kernels::reduce;
//! use gpu_dsl_runtime::{DeviceBuffer, Gpu};
//!
//! fn main() -> gpu_dsl_runtime::Result<()> {
//!     let gpu = Gpu::best()?;
//!     let stream = gpu.default_stream();
//!     let x = DeviceBuffer::from_host(&stream, &[3.0f32, -1.0, 4.0])?;
//!     assert_eq!(reduce::sum(&stream, &x)?, 6.0);
//!     assert_eq!(reduce::min(&stream, &x)?, -1.0);
//!     Ok(())
//! }
//! ```

use gpu_dsl_macros::{device, kernel};
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{
    Block, DeviceBuffer, Error, Grid, Kernel, LaunchConfig, Number, Result, Scalar, Stream,
    TemplateArg,
};

use crate::block::{block_combine, combine, combine_f64};
use crate::map::same_len;

/// Threads per block of every reduction kernel: eight warps.
const THREADS: u32 = 256;
/// Blocks per multiprocessor in the default grid, one resident wave. On an H100 (1 GiB inputs)
/// 4- and 8-byte types read at copy bandwidth from 2 blocks per SM on; 16-bit types, with
/// scalar 2-byte loads, need more threads in flight: 0.80 of copy bandwidth at 4, 0.87 at 6.
const BLOCKS_PER_SM: u32 = 6;
/// Elements per thread below which another block is not worth starting.
const ITEMS_PER_THREAD: usize = 16;

/// The kernels' `OP` template argument for [`ReduceOp::Sum`].
const OP_SUM: usize = 0;
/// The kernels' `OP` template argument for [`ReduceOp::Min`].
const OP_MIN: usize = 1;
/// The kernels' `OP` template argument for [`ReduceOp::Max`].
const OP_MAX: usize = 2;

/// Combines the block's thread values into the block's partial with `op`, and in the last
/// block to finish, every block's partial in block order into `out[0]`.
#[device]
fn finish<T: Number, F: Fn(T, T) -> T>(
    value: T,
    identity: T,
    partials: &mut [T],
    counter: &mut [u32],
    out: &mut [T],
    op: F,
) {
    let is_last = shared_array::<u32, 1>();
    let t = thread_idx().x;
    let mut v = value;
    // Round 0 combines this block's threads; round 1, run by the last block only, the
    // partials. One loop rather than two calls keeps one inlined copy of the block reduction
    // in the kernel.
    let mut round = 0u32;
    loop {
        v = block_combine(v, identity, op);
        if round == 1 {
            if t == 0 {
                out[0] = v;
                counter[0] = 0;
            }
            return;
        }
        if t == 0 {
            partials[block_idx().x as usize] = v;
            // The partial is visible device-wide before the ticket that announces it.
            thread_fence();
            let ticket = counter.atomic_add(0, 1);
            // ...and the last block sees every partial announced before its ticket.
            thread_fence();
            is_last[0] = (ticket == grid_dim().x - 1) as u32;
        }
        sync_threads();
        if is_last[0] == 0 {
            return;
        }
        v = identity;
        for b in (t as usize..grid_dim().x as usize).step_by(block_dim().x as usize) {
            v = op(v, partials[b]);
        }
        round = 1;
    }
}

/// The reduction of `x` with `OP` (0 sum, 1 min, 2 max) into `out[0]`, four 16-byte loads in
/// flight per thread; launched for the 4-byte types `f32`, `i32` and `u32` (sums wrap for the
/// integers).
#[kernel]
fn reduce_vec4<T: Number, const OP: usize>(
    x: &[T],
    identity: T,
    partials: &mut [T],
    counter: &mut [u32],
    out: &mut [T],
) {
    let n = x.len();
    let quads = n / 4;
    let stride = grid_size().x;
    let mut acc = [identity; 4];
    let mut q = global_idx().x;
    while q + 3 * stride < quads {
        let a = x.load4(4 * q);
        let b = x.load4(4 * (q + stride));
        let c = x.load4(4 * (q + 2 * stride));
        let d = x.load4(4 * (q + 3 * stride));
        for k in 0..4 {
            acc[k] = combine(OP, acc[k], a[k]);
            acc[k] = combine(OP, acc[k], b[k]);
            acc[k] = combine(OP, acc[k], c[k]);
            acc[k] = combine(OP, acc[k], d[k]);
        }
        q += 4 * stride;
    }
    while q < quads {
        let a = x.load4(4 * q);
        for k in 0..4 {
            acc[k] = combine(OP, acc[k], a[k]);
        }
        q += stride;
    }
    // The last `n % 4` elements, one each for the first threads.
    let rest = 4 * quads + global_idx().x;
    if rest < n {
        acc[0] = combine(OP, acc[0], x[rest]);
    }
    let v = combine(OP, combine(OP, acc[0], acc[1]), combine(OP, acc[2], acc[3]));
    finish(v, identity, partials, counter, out, |a, b| {
        combine(OP, a, b)
    });
}

/// The `f64` reduction with `OP` (0 sum, 1 min, 2 max), eight scalar loads in flight per
/// thread.
#[kernel]
fn reduce_f64<const OP: usize>(
    x: &[f64],
    identity: f64,
    partials: &mut [f64],
    counter: &mut [u32],
    out: &mut [f64],
) {
    let n = x.len();
    let stride = grid_size().x;
    let mut acc = [identity; 8];
    let mut i = global_idx().x;
    while i + 7 * stride < n {
        for k in 0..8 {
            acc[k] = combine_f64(OP, acc[k], x[i + k * stride]);
        }
        i += 8 * stride;
    }
    while i < n {
        acc[0] = combine_f64(OP, acc[0], x[i]);
        i += stride;
    }
    // Constant indices only: an index the compiler cannot resolve would move `acc` from
    // registers to local memory.
    for k in 1..8 {
        acc[0] = combine_f64(OP, acc[0], acc[k]);
    }
    finish(acc[0], identity, partials, counter, out, |a, b| {
        combine_f64(OP, a, b)
    });
}

/// The sum of `x` in `f32` into `out[0]`, eight 8-byte loads (four values each) in flight per
/// thread; launched for the 16-bit floats `f16` and `bf16`, which `as f32` widens exactly.
#[kernel]
fn reduce_sum_half<T: Float>(x: &[T], partials: &mut [f32], counter: &mut [u32], out: &mut [f32]) {
    let n = x.len();
    let vectors = n / 4;
    let stride = grid_size().x;
    let mut acc = [0.0f32; 8];
    let mut v = global_idx().x;
    while v + 7 * stride < vectors {
        #[unroll]
        for j in 0..8 {
            let q = x.load4((v + j * stride) * 4);
            acc[j] += (q[0] as f32 + q[1] as f32) + (q[2] as f32 + q[3] as f32);
        }
        v += 8 * stride;
    }
    while v < vectors {
        let q = x.load4(v * 4);
        acc[0] += (q[0] as f32 + q[1] as f32) + (q[2] as f32 + q[3] as f32);
        v += stride;
    }
    for i in (vectors * 4 + global_idx().x..n).step_by(stride) {
        acc[1] += x[i] as f32;
    }
    let mut total = 0.0f32;
    for k in 0..8 {
        total += acc[k];
    }
    finish(total, 0.0, partials, counter, out, |a: f32, b: f32| a + b);
}

/// The kernels of this module that take no template arguments: `all_kernels()` lists only
/// those, since its callers compile each kernel without any (every reduction is generic now).
/// [`instantiations`] has them all.
pub(crate) const KERNELS: &[&Kernel] = &[];

/// Every kernel instantiation this module launches, for compiling them all ahead of time.
pub fn instantiations() -> Vec<(&'static Kernel, Vec<TemplateArg>)> {
    let ops = [OP_SUM, OP_MIN, OP_MAX].map(|op| TemplateArg::Const(op as u64));
    let mut all = Vec::new();
    for op in ops {
        all.push((&reduce_vec4::KERNEL, vec![TemplateArg::of::<f32>(), op]));
        all.push((&reduce_vec4::KERNEL, vec![TemplateArg::of::<i32>(), op]));
        all.push((&reduce_vec4::KERNEL, vec![TemplateArg::of::<u32>(), op]));
        all.push((&reduce_f64::KERNEL, vec![op]));
    }
    all.push((&reduce_sum_half::KERNEL, vec![TemplateArg::of::<f16>()]));
    all.push((&reduce_sum_half::KERNEL, vec![TemplateArg::of::<bf16>()]));
    all
}

/// How a reduction combines elements, each with an identity: what an empty input gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `a + b`, identity 0. Integer sums wrap on overflow, as `wrapping_add` (and `+` in
    /// release builds) does; float sums propagate NaN.
    Sum,
    /// The smaller, identity the type's largest value (`INFINITY`, `i32::MAX`, `u32::MAX`).
    /// Float NaNs are ignored, as `f32::min` ignores them, so only-NaN input gives `INFINITY`.
    Min,
    /// The larger, identity the type's smallest value (`NEG_INFINITY`, `i32::MIN`, `0`). Float
    /// NaNs are ignored, as `f32::max` ignores them.
    Max,
}

impl ReduceOp {
    /// This op's identity for `T`: `x` combined with it is `x`, and an empty input reduces to it.
    pub fn identity<T: Reducible>(self) -> T {
        T::identity(self)
    }
}

/// The element types [`reduce`] handles: `f32`, `f64`, `i32` and `u32`. Sealed.
pub trait Reducible: Number + sealed::Launch {
    /// `op`'s identity for this type (see [`ReduceOp`]).
    fn identity(op: ReduceOp) -> Self;
}

mod sealed {
    use super::ReduceOp;
    use gpu_dsl_runtime::{DeviceBuffer, LaunchConfig, Result, Scalar, Stream};

    /// Launches the kernel for one element type; outside this module the trait cannot be named,
    /// so [`super::Reducible`] cannot be implemented for other types.
    pub trait Launch: Scalar {
        /// Queues the reduction of `x` with `op` into `out[0]`.
        #[allow(clippy::too_many_arguments)]
        fn launch(
            stream: &Stream,
            config: LaunchConfig,
            op: ReduceOp,
            x: &DeviceBuffer<Self>,
            identity: Self,
            partials: &mut DeviceBuffer<Self>,
            counter: &mut DeviceBuffer<u32>,
            out: &mut DeviceBuffer<Self>,
        ) -> Result<()>;
    }
}

/// Implements [`Reducible`] for a type: its identities, and the kernel launched for each op
/// (`$kernel::launch::<$($types,)* OP>`).
macro_rules! reducible {
    ($ty:ty, $zero:expr, $min:expr, $max:expr, $kernel:ident $(<$($types:ty),*>)?) => {
        impl Reducible for $ty {
            fn identity(op: ReduceOp) -> Self {
                match op {
                    ReduceOp::Sum => $zero,
                    ReduceOp::Min => $max,
                    ReduceOp::Max => $min,
                }
            }
        }

        impl sealed::Launch for $ty {
            fn launch(
                stream: &Stream,
                config: LaunchConfig,
                op: ReduceOp,
                x: &DeviceBuffer<Self>,
                identity: Self,
                partials: &mut DeviceBuffer<Self>,
                counter: &mut DeviceBuffer<u32>,
                out: &mut DeviceBuffer<Self>,
            ) -> Result<()> {
                match op {
                    ReduceOp::Sum => $kernel::launch::<$($($types,)*)? OP_SUM>(
                        stream, config, x, identity, partials, counter, out,
                    ),
                    ReduceOp::Min => $kernel::launch::<$($($types,)*)? OP_MIN>(
                        stream, config, x, identity, partials, counter, out,
                    ),
                    ReduceOp::Max => $kernel::launch::<$($($types,)*)? OP_MAX>(
                        stream, config, x, identity, partials, counter, out,
                    ),
                }
            }
        }
    };
}

reducible!(f32, 0.0, f32::NEG_INFINITY, f32::INFINITY, reduce_vec4<f32>);
reducible!(i32, 0, i32::MIN, i32::MAX, reduce_vec4<i32>);
reducible!(u32, 0, u32::MIN, u32::MAX, reduce_vec4<u32>);
reducible!(f64, 0.0, f64::NEG_INFINITY, f64::INFINITY, reduce_f64);

/// Scratch memory for reductions: one partial per block and the counter that elects the last
/// block. Reusable launch after launch (each leaves the counter at zero), by one stream at a
/// time, since concurrent launches would share the counter.
#[derive(Debug)]
pub struct ReduceScratch<T: Scalar> {
    partials: DeviceBuffer<T>,
    counter: DeviceBuffer<u32>,
}

impl<T: Number> ReduceScratch<T> {
    /// Scratch for the default grid on `stream`'s device: up to 6 blocks per multiprocessor.
    pub fn new(stream: &Stream) -> Result<Self> {
        let max_blocks = stream.gpu().sm_count().max(1).saturating_mul(BLOCKS_PER_SM);
        Self::with_max_blocks(stream, max_blocks)
    }

    /// Scratch for grids of at most `max_blocks` blocks (at least 1); the result's bits depend
    /// on the input length and this number only.
    pub fn with_max_blocks(stream: &Stream, max_blocks: u32) -> Result<Self> {
        let limit = stream.gpu().limits().max_grid_dim[0];
        if max_blocks == 0 || max_blocks > limit {
            return Err(Error::InvalidLaunch(format!(
                "ReduceScratch::with_max_blocks({max_blocks}): a reduction needs between 1 and \
                 {limit} blocks on this device"
            )));
        }
        Ok(ReduceScratch {
            partials: DeviceBuffer::zeroed(stream, max_blocks as usize)?,
            counter: DeviceBuffer::zeroed(stream, 1)?,
        })
    }

    /// The most blocks a reduction with this scratch launches.
    pub fn max_blocks(&self) -> u32 {
        // `with_max_blocks` allocated a `u32` count of partials.
        self.partials.len() as u32
    }
}

/// The grid for `n` elements: enough blocks for `ITEMS_PER_THREAD` elements per thread, at
/// most `max_blocks`, at least one (which writes the identity for an empty input).
fn launch_config(n: usize, max_blocks: u32) -> LaunchConfig {
    let wanted = n.div_ceil(THREADS as usize * ITEMS_PER_THREAD).max(1);
    let blocks = wanted.min(max_blocks as usize) as u32;
    LaunchConfig::new(Grid::x(blocks), Block::x(THREADS))
}

/// Reduces `x` with `op` into `out[0]` (a 1-element buffer) with one kernel launch; returns once
/// the launch is queued, without waiting for it.
pub fn reduce_into<T: Reducible>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    op: ReduceOp,
    out: &mut DeviceBuffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<()> {
    same_len("reduce_into: the output buffer", 1, out.len())?;
    let config = launch_config(x.len(), scratch.max_blocks());
    T::launch(
        stream,
        config,
        op,
        x,
        op.identity(),
        &mut scratch.partials,
        &mut scratch.counter,
        out,
    )
}

/// Reduces `x` with `op` and returns the result; an empty `x` gives `op`'s identity.
pub fn reduce<T: Reducible>(stream: &Stream, x: &DeviceBuffer<T>, op: ReduceOp) -> Result<T> {
    read_back(stream, |out, scratch| {
        reduce_into(stream, x, op, out, scratch)
    })
}

/// The sum of `x` (0 when empty); integer sums wrap.
pub fn sum<T: Reducible>(stream: &Stream, x: &DeviceBuffer<T>) -> Result<T> {
    reduce(stream, x, ReduceOp::Sum)
}

/// The smallest element of `x`, ignoring NaNs (`T`'s largest value when empty).
pub fn min<T: Reducible>(stream: &Stream, x: &DeviceBuffer<T>) -> Result<T> {
    reduce(stream, x, ReduceOp::Min)
}

/// The largest element of `x`, ignoring NaNs (`T`'s smallest value when empty).
pub fn max<T: Reducible>(stream: &Stream, x: &DeviceBuffer<T>) -> Result<T> {
    reduce(stream, x, ReduceOp::Max)
}

/// Sums `f16` values in `f32` into `out[0]` with one launch; returns once it is queued.
pub fn sum_f16_into(
    stream: &Stream,
    x: &DeviceBuffer<f16>,
    out: &mut DeviceBuffer<f32>,
    scratch: &mut ReduceScratch<f32>,
) -> Result<()> {
    same_len("sum_f16_into: the output buffer", 1, out.len())?;
    launch_half_sum(stream, reduce_sum_half::launch::<f16>, x, out, scratch)
}

/// Sums `bf16` values in `f32` into `out[0]` with one launch; returns once it is queued.
pub fn sum_bf16_into(
    stream: &Stream,
    x: &DeviceBuffer<bf16>,
    out: &mut DeviceBuffer<f32>,
    scratch: &mut ReduceScratch<f32>,
) -> Result<()> {
    same_len("sum_bf16_into: the output buffer", 1, out.len())?;
    launch_half_sum(stream, reduce_sum_half::launch::<bf16>, x, out, scratch)
}

/// The sum of `f16` values, accumulated in `f32` (0 when empty).
pub fn sum_f16(stream: &Stream, x: &DeviceBuffer<f16>) -> Result<f32> {
    read_back(stream, |out, scratch| sum_f16_into(stream, x, out, scratch))
}

/// The sum of `bf16` values, accumulated in `f32` (0 when empty).
pub fn sum_bf16(stream: &Stream, x: &DeviceBuffer<bf16>) -> Result<f32> {
    read_back(stream, |out, scratch| {
        sum_bf16_into(stream, x, out, scratch)
    })
}

/// The `launch` of the 16-bit sum kernel for one type (`reduce_sum_half::launch::<f16>`).
type HalfSumLaunch<T> = fn(
    &Stream,
    LaunchConfig,
    &DeviceBuffer<T>,
    &mut DeviceBuffer<f32>,
    &mut DeviceBuffer<u32>,
    &mut DeviceBuffer<f32>,
) -> Result<()>;

/// Queues a 16-bit sum with the default grid for `x` and `scratch`.
fn launch_half_sum<T: Scalar>(
    stream: &Stream,
    launch: HalfSumLaunch<T>,
    x: &DeviceBuffer<T>,
    out: &mut DeviceBuffer<f32>,
    scratch: &mut ReduceScratch<f32>,
) -> Result<()> {
    let config = launch_config(x.len(), scratch.max_blocks());
    launch(
        stream,
        config,
        x,
        &mut scratch.partials,
        &mut scratch.counter,
        out,
    )
}

/// Runs a reduction `into` a new one-element buffer, with new scratch, and reads the result.
fn read_back<R: Number>(
    stream: &Stream,
    into: impl FnOnce(&mut DeviceBuffer<R>, &mut ReduceScratch<R>) -> Result<()>,
) -> Result<R> {
    let mut scratch = ReduceScratch::new(stream)?;
    let mut out = DeviceBuffer::zeroed(stream, 1)?;
    into(&mut out, &mut scratch)?;
    Ok(out.to_host(stream)?[0])
}
