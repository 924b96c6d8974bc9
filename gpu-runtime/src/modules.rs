//! Getting a launchable function for a kernel: in-process cache, then disk cache, then NVRTC.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUfunction_attribute_enum as FuncAttr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use sha2::{Digest, Sha256};

use crate::cache::{self, ArtifactKind, CacheConfig, Lookup};
use crate::compile::{self, choose_target, describe_archs};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch::FunctionLimits;

/// A loaded kernel function and what it allows.
pub(crate) struct LoadedKernel {
    pub(crate) function: CudaFunction,
    pub(crate) limits: FunctionLimits,
    /// The dynamic shared memory this function has been opted into so far.
    dynamic_smem_allowed: AtomicU32,
}

impl LoadedKernel {
    /// Raises the function's dynamic shared-memory allowance to at least `bytes`.
    pub(crate) fn allow_dynamic_shared_mem(&self, ctx: &CudaContext, bytes: u32) -> Result<()> {
        if self.dynamic_smem_allowed.load(Ordering::Relaxed) >= bytes {
            return Ok(());
        }
        let value = i32::try_from(bytes).map_err(|_| {
            Error::InvalidLaunch(format!(
                "dynamic shared memory of {bytes} bytes is too large"
            ))
        })?;
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        self.function
            .set_attribute(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
            .map_err(Error::driver(
                "opting a kernel into more than 48 KiB of dynamic shared memory",
            ))?;
        self.dynamic_smem_allowed
            .fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }
}

/// Kernels already loaded on one device.
#[derive(Default)]
pub(crate) struct ModuleCache {
    maps: Mutex<Maps>,
}

#[derive(Default)]
struct Maps {
    /// By the address of the `static Kernel`: the launch fast path, no hashing of source.
    by_kernel: HashMap<usize, Arc<LoadedKernel>>,
    /// By sha256 of (source, entry): kernels with identical code share one module. Options are
    /// fixed per device and process, so they need not be part of this key.
    by_content: HashMap<[u8; 32], Arc<LoadedKernel>>,
}

fn kernel_address(kernel: &'static Kernel) -> usize {
    kernel as *const Kernel as usize
}

fn content_key(kernel: &Kernel) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [kernel.source(), kernel.entry()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// Where a kernel's function came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleOrigin {
    /// Compiled by NVRTC just now.
    Nvrtc,
    /// Loaded from the on-disk cache.
    DiskCache,
    /// Already loaded in this process.
    MemoryCache,
}

/// How [`Gpu::precompile`] obtained a kernel, and how long it took.
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
        };
        write!(f, "{how} in {:.3} ms", self.elapsed.as_secs_f64() * 1e3)
    }
}

/// Process-wide counts of how kernels were obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompileStats {
    /// NVRTC compilations.
    pub nvrtc_compiles: u64,
    /// Kernels loaded from the disk cache.
    pub disk_hits: u64,
    /// Lookups answered by the in-process cache (every launch after the first).
    pub memory_hits: u64,
    /// Disk entries found damaged or unloadable, deleted and rebuilt.
    pub disk_rejected: u64,
    /// Disk-cache writes that failed (the kernel still ran).
    pub disk_write_failures: u64,
}

#[derive(Default)]
struct Counters {
    nvrtc_compiles: AtomicU64,
    disk_hits: AtomicU64,
    memory_hits: AtomicU64,
    disk_rejected: AtomicU64,
    disk_write_failures: AtomicU64,
}

static COUNTERS: Counters = Counters {
    nvrtc_compiles: AtomicU64::new(0),
    disk_hits: AtomicU64::new(0),
    memory_hits: AtomicU64::new(0),
    disk_rejected: AtomicU64::new(0),
    disk_write_failures: AtomicU64::new(0),
};

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Process-wide counts of NVRTC compiles, disk-cache hits and in-process hits.
pub fn compile_stats() -> CompileStats {
    let c = &COUNTERS;
    CompileStats {
        nvrtc_compiles: c.nvrtc_compiles.load(Ordering::Relaxed),
        disk_hits: c.disk_hits.load(Ordering::Relaxed),
        memory_hits: c.memory_hits.load(Ordering::Relaxed),
        disk_rejected: c.disk_rejected.load(Ordering::Relaxed),
        disk_write_failures: c.disk_write_failures.load(Ordering::Relaxed),
    }
}

impl Gpu {
    /// Compiles (or loads) `kernel` for this device now instead of at its first launch.
    pub fn precompile(&self, kernel: &'static Kernel) -> Result<CompileSource> {
        self.precompile_with(kernel, &self.cache_config())
    }

    /// Like [`Gpu::precompile`], with an explicit disk-cache setting.
    pub fn precompile_with(
        &self,
        kernel: &'static Kernel,
        cache: &CacheConfig,
    ) -> Result<CompileSource> {
        let start = Instant::now();
        let (_, origin) = self.lookup_or_build(kernel, cache)?;
        Ok(CompileSource {
            origin,
            elapsed: start.elapsed(),
        })
    }

    /// Drops this device's in-process entry for `kernel` (not the disk cache), so the next use
    /// goes to disk or NVRTC. Functions already handed out stay valid.
    #[doc(hidden)]
    pub fn forget_compiled(&self, kernel: &'static Kernel) {
        let mut maps = self.modules().lock();
        maps.by_kernel.remove(&kernel_address(kernel));
        maps.by_content.remove(&content_key(kernel));
    }

    /// Drops every in-process entry of this device.
    #[doc(hidden)]
    pub fn clear_compiled(&self) {
        let mut maps = self.modules().lock();
        maps.by_kernel.clear();
        maps.by_content.clear();
    }

    pub(crate) fn loaded_kernel(&self, kernel: &'static Kernel) -> Result<Arc<LoadedKernel>> {
        // Fast path without reading the cache setting.
        if let Some(found) = self.modules().lock().by_kernel.get(&kernel_address(kernel)) {
            bump(&COUNTERS.memory_hits);
            return Ok(found.clone());
        }
        self.lookup_or_build(kernel, &self.cache_config())
            .map(|(loaded, _)| loaded)
    }

    fn modules(&self) -> &ModuleCache {
        &self.inner.modules
    }

    fn lookup_or_build(
        &self,
        kernel: &'static Kernel,
        cache: &CacheConfig,
    ) -> Result<(Arc<LoadedKernel>, ModuleOrigin)> {
        // The lock is held through compilation so each kernel compiles once per device even
        // when several threads launch it first at the same time.
        let mut maps = self.modules().lock();
        let address = kernel_address(kernel);
        if let Some(found) = maps.by_kernel.get(&address) {
            bump(&COUNTERS.memory_hits);
            return Ok((found.clone(), ModuleOrigin::MemoryCache));
        }
        let content = content_key(kernel);
        if let Some(found) = maps.by_content.get(&content).cloned() {
            bump(&COUNTERS.memory_hits);
            maps.by_kernel.insert(address, found.clone());
            return Ok((found, ModuleOrigin::MemoryCache));
        }
        kernel.check_well_formed()?;
        let (module, origin) = self.build_module(kernel, cache)?;
        let loaded = Arc::new(self.load_function(kernel, &module)?);
        maps.by_kernel.insert(address, loaded.clone());
        maps.by_content.insert(content, loaded.clone());
        Ok((loaded, origin))
    }

    fn load_function(&self, kernel: &Kernel, module: &Arc<CudaModule>) -> Result<LoadedKernel> {
        let function =
            module
                .load_function(kernel.entry())
                .map_err(|source| Error::InvalidKernel {
                    kernel: kernel.name().to_string(),
                    reason: format!(
                        "its CUDA source defines no `extern \"C\" __global__` function named `{}` \
                     ({source})",
                        kernel.entry()
                    ),
                })?;
        let attr = |a: FuncAttr| -> Result<u32> {
            function
                .get_attribute(a)
                .map(|v| u32::try_from(v).unwrap_or(0))
                .map_err(Error::driver("reading kernel attributes"))
        };
        let limits = FunctionLimits {
            max_threads_per_block: attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            num_regs: attr(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            static_shared_bytes: attr(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        Ok(LoadedKernel {
            function,
            limits,
            dynamic_smem_allowed: AtomicU32::new(0),
        })
    }

    /// Disk cache, else NVRTC (storing the result on disk).
    fn build_module(
        &self,
        kernel: &Kernel,
        cache: &CacheConfig,
    ) -> Result<(Arc<CudaModule>, ModuleOrigin)> {
        let nvrtc = compile::nvrtc_info()?;
        let arch = self.compute_capability();
        let target =
            choose_target(arch, &nvrtc.supported_archs).ok_or_else(|| Error::UnsupportedArch {
                arch,
                nvrtc_version: nvrtc.version_string(),
                supported: describe_archs(&nvrtc.supported_archs),
            })?;
        let kind = target.kind();
        let options = target.options();
        let key = cache::cache_key(kernel.source(), arch, &options, nvrtc.version);

        if let Some(dir) = cache.dir() {
            match cache::read_entry(dir, &key, kind) {
                Lookup::Hit(image) => match self.load_image(kind, image) {
                    Ok(module) => {
                        bump(&COUNTERS.disk_hits);
                        return Ok((module, ModuleOrigin::DiskCache));
                    }
                    // Verified but unloadable (e.g. written by a driver-incompatible setup):
                    // replace it.
                    Err(_) => {
                        cache::remove_entry(dir, &key, kind);
                        bump(&COUNTERS.disk_rejected);
                    }
                },
                Lookup::Corrupt => bump(&COUNTERS.disk_rejected),
                Lookup::Miss => {}
            }
        }

        let image = compile::compile(kernel, &options, kind)?;
        bump(&COUNTERS.nvrtc_compiles);
        if let Some(dir) = cache.dir() {
            if cache::write_entry(dir, &key, kind, &image).is_err() {
                bump(&COUNTERS.disk_write_failures);
            }
        }
        let module = self
            .load_image(kind, image)
            .map_err(|source| Error::ModuleLoad {
                kernel: kernel.name().to_string(),
                nvrtc_version: nvrtc.version_string(),
                source,
            })?;
        Ok((module, ModuleOrigin::Nvrtc))
    }

    fn load_image(
        &self,
        kind: ArtifactKind,
        image: Vec<u8>,
    ) -> Result<Arc<CudaModule>, cudarc::driver::DriverError> {
        use cudarc::driver::sys::CUresult;
        let ptx = match kind {
            ArtifactKind::Cubin => Ptx::from_binary(image),
            // cudarc turns PTX text into a CString and panics on an interior NUL.
            ArtifactKind::Ptx => match String::from_utf8(image) {
                Ok(text) if !text.contains('\0') => Ptx::from_src(text),
                _ => {
                    return Err(cudarc::driver::DriverError(
                        CUresult::CUDA_ERROR_INVALID_IMAGE,
                    ))
                }
            },
        };
        self.ctx().load_module(ptx)
    }
}

impl ModuleCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Maps> {
        // A panic while holding the lock cannot leave the maps half-updated (each update is one
        // insert or remove), so a poisoned lock is still usable.
        self.maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_key_depends_on_source_and_entry() {
        let a = Kernel::__generated("a", "a", "src", &[]);
        let b = Kernel::__generated("b", "a", "src", &[]);
        let c = Kernel::__generated("a", "c", "src", &[]);
        let d = Kernel::__generated("a", "a", "src2", &[]);
        assert_eq!(
            content_key(&a),
            content_key(&b),
            "the Rust name does not change code"
        );
        assert_ne!(content_key(&a), content_key(&c));
        assert_ne!(content_key(&a), content_key(&d));
    }

    #[test]
    fn compile_source_display() {
        let s = CompileSource {
            origin: ModuleOrigin::DiskCache,
            elapsed: Duration::from_micros(1500),
        };
        assert_eq!(s.to_string(), "loaded from the disk cache in 1.500 ms");
        let _ = compile_stats();
    }
}
