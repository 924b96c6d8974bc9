//! How a device obtained a kernel's code, as [`crate::Gpu::precompile`] reports it.

use std::fmt;
use std::time::Duration;

/// Where a kernel's function came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleOrigin {
    /// Compiled by NVRTC just now.
    Nvrtc,
    /// Loaded from the on-disk cache.
    DiskCache,
    /// Already loaded in this process.
    MemoryCache,
    /// Loaded from a CUBIN of a registered ahead-of-time bundle (`aot`).
    AotCubin,
    /// Compiled by the driver from PTX of a registered ahead-of-time bundle.
    AotPtx,
    /// Nothing to compile: the CPU backend runs the kernel's CPU twin.
    CpuTwin,
}

/// How [`crate::Gpu::precompile`] obtained a kernel, and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompileSource {
    /// Where the function came from.
    pub origin: ModuleOrigin,
    /// Wall time of the whole lookup, compile and load.
    pub elapsed: Duration,
}

impl fmt::Display for CompileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.origin {
            ModuleOrigin::Nvrtc => "compiled by NVRTC",
            ModuleOrigin::DiskCache => "loaded from the disk cache",
            ModuleOrigin::MemoryCache => "found in the in-process cache",
            ModuleOrigin::AotCubin => "loaded from an ahead-of-time CUBIN",
            ModuleOrigin::AotPtx => "JIT-compiled by the driver from ahead-of-time PTX",
            ModuleOrigin::CpuTwin => "ready as a CPU twin (nothing to compile)",
        };
        write!(f, "{how} in {:.3} ms", self.elapsed.as_secs_f64() * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_source_display() {
        let s = CompileSource {
            origin: ModuleOrigin::DiskCache,
            elapsed: Duration::from_micros(1500),
        };
        assert_eq!(s.to_string(), "loaded from the disk cache in 1.500 ms");
        let aot = CompileSource {
            origin: ModuleOrigin::AotCubin,
            ..s
        };
        assert_eq!(
            aot.to_string(),
            "loaded from an ahead-of-time CUBIN in 1.500 ms"
        );
    }
}
