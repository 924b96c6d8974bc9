//! Kernels written with `#[kernel]`, with safe functions over device buffers that pick the
//! launch configuration: map, reduce, scan, stencil, gemm, the MLP's training-step kernels, and
//! that step as one cooperative launch.

mod block;
pub mod gemm;
pub mod map;
pub mod mlp;
pub mod mlp_step;
pub mod reduce;
pub mod scan;
pub mod stencil;

use gpu_dsl_runtime::Kernel;

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
