//! Kernels written with `#[kernel]`, with safe functions over device buffers that pick the
//! launch configuration: map, reduce, scan, stencil, gemm, the MLP's training-step kernels, and
//! that step as one cooperative launch.
//!
//! Each runs on an NVIDIA GPU or, with the same results, on the CPU backend, as here:
//!
//! ```
//! use gpu_dsl_kernels::{map, reduce};
//! use gpu_dsl_runtime::{DeviceBuffer, Gpu};
//!
//! # fn main() -> gpu_dsl_runtime::Result<()> {
//! // `Gpu::best()` picks CUDA device 0 where there is one.
//! let stream = Gpu::cpu().default_stream();
//! let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0, 4.0])?;
//! let mut y = DeviceBuffer::from_host(&stream, &[1.0f32; 4])?;
//! map::axpy(&stream, 2.0, &x, &mut y)?; // y = 2x + y
//! assert_eq!(y.to_host(&stream)?, [3.0, 5.0, 7.0, 9.0]);
//! assert_eq!(reduce::sum(&stream, &y)?, 24.0);
//! # Ok(())
//! # }
//! ```
//!
//! Most users reach this crate through the `gpu-dsl` facade, as `gpu_dsl::kernels`.

mod block;
pub mod gemm;
pub mod map;
pub mod mlp;
pub mod mlp_step;
pub mod reduce;
pub mod scan;
pub mod stencil;

use gpu_dsl_runtime::{Kernel, TemplateArg};

/// What the code [`elementwise!`] generates refers to.
#[doc(hidden)]
pub mod __private {
    pub use gpu_dsl_macros::kernel;
    pub use gpu_dsl_runtime as runtime;
}

/// Every non-generic kernel of this crate, so tools and tests can compile them all ahead of
/// time; the generic ones are listed with their instantiations by each module
/// (`reduce::instantiations()`, `scan::KERNELS`, `gemm::instantiations()`,
/// `mlp_step::KERNELS`).
pub fn all_kernels() -> Vec<&'static Kernel> {
    let mut kernels = map::KERNELS.to_vec();
    kernels.extend_from_slice(reduce::KERNELS);
    kernels.extend_from_slice(stencil::KERNELS);
    kernels.extend_from_slice(mlp::KERNELS);
    kernels.extend(gemm::kernels());
    kernels
}

/// Every kernel of this crate with the template arguments of each instantiation its functions
/// launch (none for plain kernels): what an ahead-of-time build of the library compiles.
pub fn all_instantiations() -> Vec<(&'static Kernel, Vec<TemplateArg>)> {
    let mut all: Vec<_> = map::KERNELS
        .iter()
        .chain(reduce::KERNELS)
        .chain(stencil::KERNELS)
        .chain(mlp::KERNELS)
        .map(|&kernel| (kernel, Vec::new()))
        .collect();
    all.extend(reduce::instantiations());
    all.extend(scan::instantiations());
    all.extend(gemm::instantiations());
    all.extend(mlp_step::instantiations());
    all
}
