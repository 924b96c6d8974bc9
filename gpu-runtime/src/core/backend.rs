//! Which backend runs kernels: a CUDA device, or the CPU backend that runs every kernel's CPU
//! twin with the same semantics.

use std::fmt;

/// What runs a device's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// A CUDA GPU: kernels are compiled by NVRTC and launched through the driver.
    Cuda,
    /// The host CPU: each kernel's CPU twin runs every thread of the grid.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "CUDA",
            Backend::Cpu => "CPU",
        })
    }
}
