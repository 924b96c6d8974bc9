//! Getting a launchable function for a kernel: in-process cache, then a registered
//! ahead-of-time image, then disk cache, then NVRTC.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute_enum as FuncAttr;
use cudarc::driver::CudaModule;
use cudarc::nvrtc::Ptx;
use sha2::{Digest, Sha256};

use crate::core::aot::{self, ImageKind};
use crate::core::cache::{self, ArtifactKind, CacheConfig, Lookup};
use crate::core::checks::kernel_id;
use crate::core::compiled::ModuleOrigin;
use crate::core::error::{Error, Result};
use crate::core::generic::{name_expression, rust_instantiation, TemplateArg};
use crate::core::kernel::KernelSpec;
use crate::core::launch::FunctionLimits;
use crate::cuda::compile::{self, choose_target, describe_archs};
use crate::cuda::device::CudaDevice;
use crate::cuda::module_cache::LoadedKernel;

fn content_key(source: &str, entry: &str, checked: bool, kernel_id: u32) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [source, entry] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.update([u8::from(checked)]);
    hasher.update(kernel_id.to_le_bytes());
    hasher.finalize().into()
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
    /// Kernels loaded from a CUBIN of a registered ahead-of-time bundle.
    pub aot_cubin_loads: u64,
    /// Kernels the driver compiled from PTX of a registered ahead-of-time bundle.
    pub aot_ptx_jits: u64,
    /// Ahead-of-time images the driver refused to load (the kernel was then compiled by NVRTC).
    pub aot_rejected: u64,
}

#[derive(Default)]
struct Counters {
    nvrtc_compiles: AtomicU64,
    disk_hits: AtomicU64,
    memory_hits: AtomicU64,
    disk_rejected: AtomicU64,
    disk_write_failures: AtomicU64,
    aot_cubin_loads: AtomicU64,
    aot_ptx_jits: AtomicU64,
    aot_rejected: AtomicU64,
}

static COUNTERS: Counters = Counters {
    nvrtc_compiles: AtomicU64::new(0),
    disk_hits: AtomicU64::new(0),
    memory_hits: AtomicU64::new(0),
    disk_rejected: AtomicU64::new(0),
    disk_write_failures: AtomicU64::new(0),
    aot_cubin_loads: AtomicU64::new(0),
    aot_ptx_jits: AtomicU64::new(0),
    aot_rejected: AtomicU64::new(0),
};

/// What identifies a loaded non-generic kernel in a thread's recent launches.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RecentKey {
    /// The `CudaDevice`, which lives as long as the process (devices are never closed).
    device: usize,
    /// The kernel's `static`.
    kernel: usize,
    checked: bool,
    /// The device's module-cache generation: forgetting compiled kernels starts a new one.
    generation: u64,
}

/// Slots of a thread's recent launches: a training step's handful of kernels fits.
const RECENT_SLOTS: usize = 32;

/// One slot: the kernel it holds, and its function.
type RecentSlot = Option<(RecentKey, Arc<LoadedKernel>)>;

thread_local! {
    /// The kernels this thread launched lately, by the address of their `static`: a launch
    /// in a hot loop finds its function here without taking the device's cache lock.
    static RECENT: RefCell<[RecentSlot; RECENT_SLOTS]> =
        const { RefCell::new([const { None }; RECENT_SLOTS]) };
}

fn recent_slot(key: &RecentKey) -> usize {
    // Statics are at least 8-byte aligned; nearby kernels land in different slots.
    (key.kernel >> 3) % RECENT_SLOTS
}

/// The loaded kernel `key` names, if this thread launched it lately.
fn recent(key: &RecentKey) -> Option<Arc<LoadedKernel>> {
    RECENT
        .try_with(|recent| {
            let recent = recent.try_borrow().ok()?;
            match &recent[recent_slot(key)] {
                Some((found, loaded)) if found == key => Some(loaded.clone()),
                _ => None,
            }
        })
        .ok()
        .flatten()
}

/// Remembers `loaded` as the kernel `key` names, in place of whatever shared its slot.
fn remember(key: RecentKey, loaded: &Arc<LoadedKernel>) {
    let _ = RECENT.try_with(|recent| {
        if let Ok(mut recent) = recent.try_borrow_mut() {
            recent[recent_slot(&key)] = Some((key, loaded.clone()));
        }
    });
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Process-wide counts of NVRTC compiles, ahead-of-time loads, disk-cache hits and in-process
/// hits.
pub fn compile_stats() -> CompileStats {
    let c = &COUNTERS;
    CompileStats {
        nvrtc_compiles: c.nvrtc_compiles.load(Ordering::Relaxed),
        disk_hits: c.disk_hits.load(Ordering::Relaxed),
        memory_hits: c.memory_hits.load(Ordering::Relaxed),
        disk_rejected: c.disk_rejected.load(Ordering::Relaxed),
        disk_write_failures: c.disk_write_failures.load(Ordering::Relaxed),
        aot_cubin_loads: c.aot_cubin_loads.load(Ordering::Relaxed),
        aot_ptx_jits: c.aot_ptx_jits.load(Ordering::Relaxed),
        aot_rejected: c.aot_rejected.load(Ordering::Relaxed),
    }
}

impl CudaDevice {
    /// Compiles (or loads) one variant now: instantiation and mode, with a disk-cache setting.
    pub(crate) fn precompile(
        &self,
        kernel: &'static KernelSpec,
        template_args: &[TemplateArg],
        checked: bool,
        cache: &CacheConfig,
    ) -> Result<ModuleOrigin> {
        self.lookup_or_build(kernel, checked, template_args, cache)
            .map(|(_, origin)| origin)
    }

    /// Drops this device's in-process entries for every variant of `kernel` (not the disk
    /// cache), so the next use goes to disk or NVRTC. Functions already handed out stay valid.
    pub(crate) fn forget_compiled(&self, kernel: &'static KernelSpec) {
        let mut maps = self.modules.lock();
        self.modules.invalidate();
        let address = kernel.address();
        for checked in [false, true] {
            if let Some(variants) = maps.by_kernel.remove(&(address, checked)) {
                for loaded in variants.values() {
                    maps.by_content.remove(&loaded.content);
                }
            }
        }
    }

    /// Drops every in-process entry of this device.
    pub(crate) fn clear_compiled(&self) {
        let mut maps = self.modules.lock();
        self.modules.invalidate();
        maps.by_kernel.clear();
        maps.by_content.clear();
    }

    /// The function for one variant of `kernel`, compiling or loading it on first use.
    pub(crate) fn loaded_kernel(
        &self,
        kernel: &'static KernelSpec,
        checked: bool,
        template_args: &[TemplateArg],
        cache: impl FnOnce() -> CacheConfig,
    ) -> Result<Arc<LoadedKernel>> {
        // Fastest path: a kernel this thread launched lately on this device, without a lock.
        let recent_key = template_args.is_empty().then(|| RecentKey {
            device: self as *const CudaDevice as usize,
            kernel: kernel.address(),
            checked,
            generation: self.modules.generation(),
        });
        if let Some(found) = recent_key.as_ref().and_then(recent) {
            bump(&COUNTERS.memory_hits);
            return Ok(found);
        }
        // Fast path without reading the cache setting.
        if let Some(found) = self
            .modules
            .lock()
            .by_kernel
            .get(&(kernel.address(), checked))
            .and_then(|variants| variants.get(template_args))
        {
            bump(&COUNTERS.memory_hits);
            let found = found.clone();
            if let Some(key) = recent_key {
                remember(key, &found);
            }
            return Ok(found);
        }
        let (loaded, _) = self.lookup_or_build(kernel, checked, template_args, &cache())?;
        if let Some(key) = recent_key {
            remember(key, &loaded);
        }
        Ok(loaded)
    }

    fn lookup_or_build(
        &self,
        kernel: &'static KernelSpec,
        checked: bool,
        template_args: &[TemplateArg],
        cache: &CacheConfig,
    ) -> Result<(Arc<LoadedKernel>, ModuleOrigin)> {
        // The lock is held through compilation so each kernel compiles once per device even
        // when several threads launch it first at the same time.
        let mut maps = self.modules.lock();
        let slot = (kernel.address(), checked);
        if let Some(found) = maps
            .by_kernel
            .get(&slot)
            .and_then(|variants| variants.get(template_args))
        {
            bump(&COUNTERS.memory_hits);
            return Ok((found.clone(), ModuleOrigin::MemoryCache));
        }
        kernel.check_well_formed()?;
        let expression = kernel
            .is_generic()
            .then(|| name_expression(kernel, template_args));
        // Assertions report through the error slot in unchecked builds too.
        let reports = checked || kernel.assertions().is_some();
        let id = if reports {
            kernel_id(kernel, template_args)?
        } else {
            0
        };
        let entry_text = expression.as_deref().unwrap_or(kernel.entry());
        let content = content_key(kernel.source(), entry_text, checked, id);
        let loaded = match maps.by_content.get(&content).cloned() {
            Some(found) => {
                bump(&COUNTERS.memory_hits);
                (found, ModuleOrigin::MemoryCache)
            }
            None => {
                let (module, entry, origin) =
                    self.build_module(kernel, checked, expression.as_deref(), cache)?;
                if matches!(origin, ModuleOrigin::Nvrtc | ModuleOrigin::DiskCache) {
                    let mode = if checked { "checked" } else { "unchecked" };
                    aot::note_compiled_at_run_time(format!(
                        "`{}` ({mode})",
                        rust_instantiation(kernel, template_args)
                    ));
                }
                let has_checks = reports && self.wire_checks(kernel, &module, id)?;
                let mut loaded =
                    self.load_function(kernel, &module, &entry, has_checks, content)?;
                if let (Some(fits), None) = (kernel.fits_entry(), &expression) {
                    let fits = self.load_function(kernel, &module, fits, has_checks, content)?;
                    loaded.fits = Some(Arc::new(fits));
                }
                let loaded = Arc::new(loaded);
                maps.by_content.insert(content, loaded.clone());
                (loaded, origin)
            }
        };
        maps.by_kernel
            .entry(slot)
            .or_default()
            .insert(Box::from(template_args), loaded.0.clone());
        Ok(loaded)
    }

    fn load_function(
        &self,
        kernel: &KernelSpec,
        module: &Arc<CudaModule>,
        entry: &str,
        has_checks: bool,
        content: [u8; 32],
    ) -> Result<LoadedKernel> {
        let function = module.load_function(entry).map_err(|source| {
            let reason = if kernel.is_generic() {
                format!(
                    "its template instantiation lowered to `{entry}`, which the compiled module \
                     does not contain ({source})"
                )
            } else {
                format!(
                    "its CUDA source defines no `extern \"C\" __global__` function named \
                     `{entry}` ({source})"
                )
            };
            Error::InvalidKernel {
                kernel: kernel.name().to_string(),
                reason,
            }
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
        Ok(LoadedKernel::new(function, limits, has_checks, content))
    }

    /// A registered ahead-of-time image, else the disk cache, else NVRTC (storing the result
    /// on disk). Returns the module and the name of its entry point (the lowered name for a
    /// generic instantiation). NVRTC is not loaded when an AOT image serves.
    fn build_module(
        &self,
        kernel: &KernelSpec,
        checked: bool,
        name_expression: Option<&str>,
        cache: &CacheConfig,
    ) -> Result<(Arc<CudaModule>, String, ModuleOrigin)> {
        if let Some(found) = self.load_ahead_of_time(kernel, checked, name_expression) {
            return Ok(found);
        }
        let nvrtc = compile::nvrtc_info()?;
        let arch = self.arch;
        let target =
            choose_target(arch, &nvrtc.supported_archs).ok_or_else(|| Error::UnsupportedArch {
                arch,
                nvrtc_version: nvrtc.version_string(),
                supported: describe_archs(&nvrtc.supported_archs),
            })?;
        let kind = target.kind();
        let options = target.options_for(checked);
        let key = cache::cache_key(
            kernel.source(),
            arch,
            &options,
            nvrtc.version,
            name_expression,
        );

        if let Some(dir) = cache.dir() {
            match cache::read_entry(dir, &key, kind) {
                Lookup::Hit(payload) => {
                    let unpacked = match name_expression {
                        Some(_) => cache::unpack_named(&payload),
                        None => Some((kernel.entry().to_string(), payload)),
                    };
                    let loaded = unpacked.and_then(|(entry, image)| {
                        self.load_image(kind, image)
                            .ok()
                            .map(|module| (module, entry))
                    });
                    match loaded {
                        Some((module, entry)) => {
                            bump(&COUNTERS.disk_hits);
                            return Ok((module, entry, ModuleOrigin::DiskCache));
                        }
                        // Verified but unusable (e.g. written by a driver-incompatible setup,
                        // or not framed as its kind needs): replace it.
                        None => {
                            cache::remove_entry(dir, &key, kind);
                            bump(&COUNTERS.disk_rejected);
                        }
                    }
                }
                Lookup::Corrupt => bump(&COUNTERS.disk_rejected),
                // Already warned about; compiled below, and not written back there.
                Lookup::Untrusted | Lookup::Miss => {}
            }
        }

        let compiled = compile::compile(kernel, &options, kind, name_expression)?;
        bump(&COUNTERS.nvrtc_compiles);
        let entry = compiled
            .lowered_name
            .clone()
            .unwrap_or_else(|| kernel.entry().to_string());
        if let Some(dir) = cache.dir() {
            let payload = match name_expression {
                Some(_) => cache::pack_named(&entry, &compiled.image),
                None => compiled.image.clone(),
            };
            if cache::write_entry(dir, &key, kind, &payload).is_err() {
                bump(&COUNTERS.disk_write_failures);
            }
        }
        let module = self
            .load_image(kind, compiled.image)
            .map_err(|source| Error::ModuleLoad {
                kernel: kernel.name().to_string(),
                nvrtc_version: nvrtc.version_string(),
                source: source.into(),
            })?;
        Ok((module, entry, ModuleOrigin::Nvrtc))
    }

    /// The kernel from a registered AOT bundle's best image for this device, if one holds it
    /// and the driver loads it. Under `GPU_DEVICE_DEBUG` the bundles are passed over: their
    /// images were not built with `--device-debug`.
    fn load_ahead_of_time(
        &self,
        kernel: &KernelSpec,
        checked: bool,
        name_expression: Option<&str>,
    ) -> Option<(Arc<CudaModule>, String, ModuleOrigin)> {
        if compile::device_debug().is_some() {
            return None;
        }
        let entry_text = name_expression.unwrap_or(kernel.entry());
        let found = aot::lookup(&aot::entry_key(kernel.source(), entry_text, checked))?;
        let arch = self.arch.0 * 10 + self.arch.1;
        let image = aot::select_image(&found.images, arch)?;
        let (kind, origin, counter) = match image.kind {
            ImageKind::Cubin => (
                ArtifactKind::Cubin,
                ModuleOrigin::AotCubin,
                &COUNTERS.aot_cubin_loads,
            ),
            ImageKind::Ptx => (
                ArtifactKind::Ptx,
                ModuleOrigin::AotPtx,
                &COUNTERS.aot_ptx_jits,
            ),
        };
        let entry = match found.lowered {
            "" => kernel.entry().to_string(),
            lowered => lowered.to_string(),
        };
        match self.load_image(kind, image.bytes.to_vec()) {
            Ok(module) => {
                bump(counter);
                Some((module, entry, origin))
            }
            // E.g. a driver older than the toolkit that built the bundle: NVRTC may still serve.
            Err(_) => {
                bump(&COUNTERS.aot_rejected);
                None
            }
        }
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
        self.ctx.load_module(ptx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_count_up() {
        let before = compile_stats();
        bump(&COUNTERS.memory_hits);
        assert!(compile_stats().memory_hits > before.memory_hits);
    }

    #[test]
    fn content_key_depends_on_code_and_mode() {
        let a = content_key("src", "a", false, 0);
        assert_eq!(a, content_key("src", "a", false, 0));
        assert_ne!(a, content_key("src", "c", false, 0));
        assert_ne!(a, content_key("src2", "a", false, 0));
        assert_ne!(a, content_key("src", "a", true, 0), "checked builds differ");
        assert_ne!(
            content_key("src", "a", true, 1),
            content_key("src", "a", true, 2),
            "checked modules name their kernel"
        );
        assert_ne!(
            content_key("src", "k<float>", false, 0),
            content_key("src", "k<double>", false, 0)
        );
    }
}
