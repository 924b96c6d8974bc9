//! The CPU backend: runs each kernel's CPU twin for every thread of the grid, and its side of
//! the twin contract, what a twin is given and may call. It uses only the core layer.
//!
//! `#[kernel]` emits, next to the CUDA source, a *CPU twin*: a plain Rust function that runs one
//! thread of the kernel. [`Gpu::cpu`](crate::Gpu::cpu) runs it for every thread of the grid,
//! with the semantics the kernel has on a GPU: each block's threads share its shared memory,
//! `sync_threads` is a real barrier, shuffles and votes exchange values among the 32 lanes of a
//! warp, atomics are atomic, and every index is bounds-checked, reported like checked mode.
//!
//! A twin for `fn saxpy(a: f32, x: &[f32], y: &mut [f32])`, as the macro writes it:
//!
//! ```
//! use gpu_dsl_runtime::cpu::{CpuArgs, ThreadCtx};
//!
//! fn saxpy_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
//!     let a: f32 = args.scalar(0);
//!     let x = args.slice::<f32>(1);
//!     let y = args.slice::<f32>(2);
//!     let i = (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize;
//!     if i < y.len() {
//!         y.set(i, a * x.get(i, t, 7) + y.get(i, t, 7), t, 7);
//!     }
//! }
//! # let _: gpu_dsl_runtime::cpu::CpuKernelFn = saxpy_twin;
//! ```

use crate::core::element::Element;
use crate::core::scalar::Scalar;

mod args;
mod block;
mod coroutine;
mod device;
mod exec;
mod launch_state;
mod mbarrier;
mod memory;
mod mma;
mod owned;
mod place;
mod racecheck;
mod schedule;
mod shared_memory;
mod slice;
mod thread;
mod tile_copy;
mod tma;
mod twin_thread;
mod warp;
mod wgmma;

pub use args::CpuArgs;
pub use mbarrier::{mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait};
pub use mma::mma_m16n8k16;
pub use owned::{CpuOwnedSlice, CpuReadSlice};
pub use place::CpuPlace;
pub use slice::CpuSlice;
pub use thread::{Dim3, ThreadCtx};
pub use tile_copy::{cp_async_16, ldmatrix};
pub use tma::{tma_load_2d, CpuTensorMap};
pub use twin_thread::{ThreadView, TwinThread};
pub use wgmma::{to_tf32, wgmma, wgmma_desc, wgmma_tf32, wgmma_tf32_rs};

pub(crate) use args::CpuArg;
pub(crate) use device::{device_info, CpuDevice, CpuStream};
pub(crate) use exec::{max_cooperative_blocks, twin_of, CpuLaunch};
pub(crate) use memory::HostBuffer;

/// `x.to_bits()` on a kernel's type parameter: its bits, zero-extended to a `u64`.
pub fn to_bits<T: Scalar>(x: T) -> u64 {
    Element::to_bits(x)
}

/// `T::from_bits(bits)` on a kernel's type parameter: the value from the low bits.
pub fn from_bits<T: Scalar>(bits: u64) -> T {
    Element::from_bits(bits)
}

/// A kernel's CPU twin: runs one thread of the kernel, reading the launch's arguments from
/// `args` and its indices, shared memory and warp from `t`.
pub type CpuKernelFn = fn(&CpuArgs<'_>, &ThreadCtx);

/// A barrier-free kernel's twin of a whole block: reads the arguments once and runs the
/// kernel for each thread of `t`'s block from linear index `first` on
/// ([`ThreadCtx::__each_thread`]), so the compiler sees one loop instead of a call per thread.
pub type CpuBlockFn = fn(&CpuArgs<'_>, &mut ThreadCtx, u32);
