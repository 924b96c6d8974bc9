//! The runtime behind `#[kernel]`: devices, streams, buffers, NVRTC compilation with caching,
//! and checked launches. It is the only crate of the project that talks to CUDA (through
//! `cudarc`), and it loads the CUDA libraries at run time, so it builds and its errors are
//! readable on machines without them.
//!
//! Buffers live on a device and move through streams; without a GPU, the CPU backend stands in
//! with the same API and semantics, as here:
//!
//! ```
//! use gpu_dsl_runtime::{Backend, DeviceBuffer, Gpu};
//!
//! # fn main() -> gpu_dsl_runtime::Result<()> {
//! // `Gpu::best()` picks CUDA device 0 where there is one.
//! let gpu = Gpu::cpu();
//! assert_eq!(gpu.backend(), Backend::Cpu);
//! let stream = gpu.default_stream();
//! let tracker = gpu.track_memory();
//! let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0])?;
//! let mut y = DeviceBuffer::<f32>::zeroed(&stream, 3)?;
//! y.copy_from(&stream, &x)?;
//! assert_eq!(y.to_host(&stream)?, [1.0, 2.0, 3.0]);
//! assert_eq!(tracker.peak_increase_bytes(), 2 * 3 * 4);
//! # Ok(())
//! # }
//! ```
//!
//! Kernels are usually written with `#[kernel]` (the `gpu-dsl` facade), which emits a `static`
//! [`Kernel`] and a typed launcher. The same thing by hand (CUDA only: a hand-written kernel has
//! no CPU twin):
//!
//! ```no_run
//! use gpu_dsl_runtime::{
//!     DeviceBuffer, ElemType, Gpu, Kernel, KernelArg, LaunchConfig, ParamKind, ScalarType,
//! };
//!
//! static ADD_ONE: Kernel = Kernel::__generated(
//!     "add_one",
//!     "add_one",
//!     r#"extern "C" __global__ void add_one(float* x, unsigned long long x_len) {
//!         unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
//!         if (i < x_len) x[i] += 1.0f;
//!     }"#,
//!     &[ParamKind::Slice { elem: ElemType::Scalar(ScalarType::F32), mutable: true }],
//! );
//!
//! fn main() -> gpu_dsl_runtime::Result<()> {
//!     let gpu = Gpu::new(0)?;
//!     let stream = gpu.default_stream();
//!     let mut x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0])?;
//!     let config = LaunchConfig::for_len(x.len(), 256);
//!     stream.launch(&ADD_ONE, config, &[KernelArg::slice_mut(&mut x)])?;
//!     assert_eq!(x.to_host(&stream)?, [2.0, 3.0, 4.0]);
//!     Ok(())
//! }
//! ```
//!
//! Kernel ABI: every scalar parameter is passed by value with its natural C type, an array or
//! `#[device]` struct ([`Value`]) by value in its C layout, and every slice parameter becomes
//! two CUDA parameters, a `T*` and an `unsigned long long` length.
//!
//! Checked mode: a kernel compiled with `-DGPU_CHECKED` reports out-of-bounds indexing and
//! integer division errors through a per-device error slot; the next synchronizing call
//! returns them as [`Error::KernelPanic`], worded like Rust's panics and naming the failing
//! block and thread. A launch picks the mode from [`LaunchConfig::checked`], else
//! `GPU_CHECKED=1`/`0`, else [`Kernel::checked_by_default`]. A kernel's `assert!`s and
//! `panic!`s report the same way in every mode, through the same slot.
//!
//! Every kernel can also run on the CPU backend ([`Gpu::cpu`], or [`Gpu::best`] without a GPU):
//! the macro emits a CPU twin of each kernel (see [`cpu`]) that the backend runs for every
//! thread of the grid with the kernel's GPU semantics, so tests run everywhere and kernels can
//! be debugged with `println!` and a debugger.
//!
//! Memory: buffers come from a caching allocator (on a GPU, the device's memory pool, which keeps
//! freed memory for reuse), and [`Gpu`] reports it with PyTorch's names:
//! [`Gpu::memory_allocated`], [`Gpu::max_memory_allocated`], [`Gpu::memory_reserved`],
//! [`Gpu::reset_peak_memory`], [`Gpu::empty_cache`]; [`Gpu::track_memory`] measures a scope
//! ([`MemoryTracker`]), and a buffer that does not fit is [`Error::OutOfMemory`].
//!
//! Profiling: [`profile`] (or a [`Profiler`] guard) times every launch and copy of the process
//! with events on their streams and returns a [`ProfileReport`], with torch.profiler's summary
//! table ([`ProfileReport::table`]) and a Chrome trace ([`ProfileReport::chrome_trace`]).
//!
//! Generic kernels are C++ templates; [`Stream::launch_generic`] instantiates one per set of
//! [`TemplateArg`]s, each compiled once per process and cached on disk.
//!
//! Ahead of time: [`aot::Builder`] compiles kernels with NVRTC in a build script into a bundle
//! that [`include_aot!`] embeds and registers; their first launches then load its CUBIN (or
//! PTX) without loading NVRTC, and [`compile_stats`] counts them.

#![warn(missing_docs)]

// The layers, each importing only the ones below it:
//
// - `core/`: backend-neutral data (errors, scalar types, kernel descriptions, launch limits,
//   device properties, checked-mode records, the disk-cache format). Imports nothing above.
// - `cuda/`: the CUDA backend, the only importer of cudarc. Imports `core/`.
// - `cpu/`: the CPU backend, running kernels' CPU twins. Imports `core/`.
// - `dispatch`: one enum per resource with a variant per backend, the one place that picks a
//   backend's code. Imports the backends and `core/`.
// - the front: the public types (`Gpu`, `Stream`, `DeviceBuffer`, `PinnedBuffer`, `Event`,
//   `Graph`, `Kernel`, `Profiler`, `blas::Blas`), which check what is backend-neutral and call `dispatch`
//   (naming backend types only to hold or pass them, and cuBLAS, which is CUDA-only, and
//   `cuda/nvtx.rs`, whose ranges the profiler opens on either backend).
//
// Within a layer the files import each other in one direction too: a type's fields come from
// files below it, and a method that needs a type of a file above lives in that file
// (`Gpu::default_stream` in `stream.rs`, `Stream::launch` in `launch.rs`,
// `CudaDevice::new_queue` in `cuda/stream.rs`).
//
// A new backend operation is one method in `dispatch`, one implementation in `cuda/` and one
// in `cpu/`, and one front method (docs/ARCHITECTURE.md, "The runtime's layers").

pub mod aot;
mod buffer;
mod compile;
mod cooperative;
mod core;
pub mod cpu;
mod cuda;
mod device;
mod device_struct;
mod dispatch;
mod event;
mod graph;
mod kernel;
mod launch;
#[doc(hidden)]
pub use launch::__bench;
mod memory;
mod pinned;
mod profiler;
mod select;
mod stream;
mod tensor_map;

pub mod blas;
pub mod comm;
pub mod random;

pub use crate::core::backend::Backend;
pub use crate::core::cache::CacheConfig;
pub use crate::core::compiled::{CompileSource, ModuleOrigin};
pub use crate::core::error::{DriverStatus, Error, NvrtcStatus, Result};
pub use crate::core::generic::TemplateArg;
pub use crate::core::info::DeviceInfo;
pub use crate::core::kernel::{ParamKind, TemplateParam};
pub use crate::core::launch::{
    Block, DeviceLimits, Grid, LaunchConfig, DEFAULT_SHARED_MEM_PER_BLOCK,
};
pub use crate::core::memory::MemoryStats;
pub use crate::core::race::{RaceSite, SiteAction};
pub use crate::core::scalar::{Float, Integer, Number, Scalar, ScalarType};
pub use crate::core::value::{ElemType, Value, ValueType};
pub use crate::cuda::compile::nvrtc_version;
pub use crate::cuda::modules::{compile_stats, CompileStats};
#[doc(hidden)]
pub use crate::device_struct::__c_layout;
pub use buffer::DeviceBuffer;
pub use compile::{
    check_with_nvrtc, compile_to_ptx, compile_to_ptx_checked, compile_to_ptx_generic,
    compile_to_ptx_generic_checked, InstantiatedPtx,
};
pub use device::{Device, Gpu};
pub use event::Event;
pub use graph::Graph;
/// The 16-bit float types (`f16`, `bf16`) kernels take.
pub use half;
pub use kernel::{Kernel, KernelArg};
pub use memory::MemoryTracker;
pub use pinned::PinnedBuffer;
pub use profiler::{profile, Activity, CopyDirection, ProfileRecord, ProfileReport, Profiler};
pub use select::{test_device, BACKEND_ENV};
pub use stream::Stream;
pub use tensor_map::{Swizzle, TensorMap};

#[doc(hidden)]
pub use crate::core::assertion::{AssertionMessages, PanicArg};
#[doc(hidden)]
pub use crate::core::scalar::ScalarValue;

/// What generated code calls to join a kernel's source with constants from outside it.
#[doc(hidden)]
pub mod __source {
    pub use crate::core::source::{
        assumed_type, source_bytes, source_len, source_str, AssumedType, SourcePiece, Table,
    };
}

/// Device 0 for tests and examples, or `None` after printing why it is unavailable.
#[doc(hidden)]
pub fn test_gpu() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(err) => {
            say_skipped(&format!("no CUDA device ({err})"));
            None
        }
    }
}

/// Whether NVRTC can be used, for tests that compile without a GPU; prints why not otherwise.
///
/// Where the test command installed NVRTC (`GPU_REQUIRE_NVRTC` is set), its absence fails the
/// calling test instead of skipping it.
#[doc(hidden)]
pub fn test_nvrtc() -> bool {
    match nvrtc_version() {
        Ok(_) => true,
        Err(err) => {
            assert!(
                std::env::var_os("GPU_REQUIRE_NVRTC").is_none(),
                "GPU_REQUIRE_NVRTC is set but NVRTC is unusable: {err}"
            );
            say_skipped(&format!("NVRTC not available ({err})"));
            false
        }
    }
}

/// Whether NCCL can be used, for tests of communicators on CUDA devices; prints why not
/// otherwise. Where NCCL was installed for the tests (`GPU_REQUIRE_NCCL` is set), its absence
/// fails the calling test instead.
#[doc(hidden)]
pub fn test_nccl() -> bool {
    match comm::nccl_version() {
        Ok(_) => true,
        Err(err) => {
            assert!(
                std::env::var_os("GPU_REQUIRE_NCCL").is_none(),
                "GPU_REQUIRE_NCCL is set but NCCL is unusable: {err}"
            );
            say_skipped(&format!("NCCL not available ({err})"));
            false
        }
    }
}

/// Prints a skip notice past the test harness's output capture, so a skipped test is visible
/// in a passing run.
fn say_skipped(why: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("test");
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}
