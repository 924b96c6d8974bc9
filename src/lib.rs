//! Write CUDA kernels as Rust functions.
//!
//! `#[kernel]` compiles a Rust function to CUDA C++ at build time and generates a module with a
//! typed `launch`; at run time the source is compiled by NVRTC for the GPU at hand (once, then
//! cached in memory and on disk) and launched on a stream. With the `aot` feature the kernels of
//! [`kernels`] are compiled while cargo builds instead, and [`aot::Builder`] does the same for
//! your own kernels from a build script, so the machine that runs the program needs no NVRTC
//! (docs/AOT.md). Without a GPU the same kernel runs on the CPU backend, with CUDA's semantics,
//! so this example runs anywhere:
//!
//! ```
//! use gpu_dsl::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_idx().x;
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! fn main() -> gpu_dsl::Result<()> {
//!     // `Gpu::best()` picks CUDA device 0 where there is one.
//!     let gpu = Gpu::cpu();
//!     let stream = gpu.default_stream();
//!     let x = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
//!     let mut y = DeviceBuffer::from_host(&stream, &[2.0f32; 1024])?;
//!     saxpy::launch(&stream, LaunchConfig::for_len(1024, 256), 3.0, &x, &mut y)?;
//!     assert_eq!(y.to_host(&stream)?, vec![5.0; 1024]);
//!     assert!(saxpy::SOURCE.contains("__global__"));
//!     Ok(())
//! }
//! ```
//!
//! The crate re-exports the three it is made of: the attributes from `gpu-dsl-macros`, the
//! runtime ([`runtime`], `gpu-dsl-runtime`: devices, streams, buffers, compilation, the
//! profiler) and the kernel library ([`kernels`], `gpu-dsl-kernels`). [`prelude`] has what a
//! kernel author needs.

pub use gpu_dsl_kernels as kernels;
pub use gpu_dsl_macros::{device, kernel};
pub use gpu_dsl_runtime as runtime;

/// The macros crate, for the code `#[kernel]` generates.
#[doc(hidden)]
pub use gpu_dsl_macros as __macros;
pub use gpu_dsl_runtime::{include_aot, profile, Profiler};
pub use gpu_dsl_runtime::{Error, Result};

/// Ahead-of-time kernels: a [`Builder`](aot::Builder) for build scripts, bundle registration,
/// and what was compiled at run time instead (docs/AOT.md). With the `aot` feature the kernels
/// of [`kernels`] are compiled while cargo builds and registered before `main`.
pub mod aot {
    pub use gpu_dsl_runtime::aot::*;

    /// The bundle of [`crate::kernels`]' kernels built by this crate's build script; it is
    /// registered before `main` where the platform allows (Linux, macOS, Windows), and can be
    /// passed to [`register`] elsewhere.
    #[cfg(feature = "aot")]
    pub static LIBRARY_BUNDLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpu-kernels.aot"));

    #[cfg(feature = "aot")]
    gpu_dsl_runtime::__register_aot_at_startup!(LIBRARY_BUNDLE);
}

/// Everything a kernel author needs, in one import.
pub mod prelude {
    pub use gpu_dsl_macros::{device, kernel};
    pub use gpu_dsl_runtime::{
        Block, DeviceBuffer, Error, Event, Float, Gpu, Grid, Integer, LaunchConfig, Number,
        PinnedBuffer, Stream,
    };
    /// The 16-bit float types kernels take, from the `half` crate.
    pub use half::{bf16, f16};
}
