//! The kernels loaded on one device: each loaded function with what it allows, and the maps
//! that find one by kernel or by content.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUfunction_attribute_enum as FuncAttr;
use cudarc::driver::{CudaContext, CudaFunction};

use crate::core::error::{Error, Result};
use crate::core::generic::TemplateArg;
use crate::core::launch::FunctionLimits;

/// A loaded kernel function and what it allows.
pub(crate) struct LoadedKernel {
    pub(crate) function: CudaFunction,
    pub(crate) limits: FunctionLimits,
    /// Whether this is a checked build wired to the device's error slot, so its launches must
    /// be checked for panics.
    pub(crate) has_checks: bool,
    /// Its key in `Maps::by_content`.
    pub(crate) content: [u8; 32],
    /// The entry of the kernel's 32-bit body alone, where it has one (see `KernelSpec`'s
    /// `fits_entry`), loaded from the same module.
    pub(crate) fits: Option<Arc<LoadedKernel>>,
    /// The dynamic shared memory this function has been opted into so far.
    dynamic_smem_allowed: AtomicU32,
    /// Resident blocks per (threads per block, dynamic shared memory) asked so far, for
    /// cooperative launches.
    pub(crate) resident_blocks: Mutex<Vec<((u32, u32), u32)>>,
}

impl LoadedKernel {
    /// A function just loaded, not yet opted into any dynamic shared memory.
    pub(crate) fn new(
        function: CudaFunction,
        limits: FunctionLimits,
        has_checks: bool,
        content: [u8; 32],
    ) -> LoadedKernel {
        LoadedKernel {
            function,
            limits,
            has_checks,
            content,
            fits: None,
            dynamic_smem_allowed: AtomicU32::new(0),
            resident_blocks: Mutex::new(Vec::new()),
        }
    }

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
    /// Bumped whenever entries are dropped, so threads' recent-launch caches drop theirs.
    generation: AtomicU64,
}

/// Loaded variants of one kernel in one mode, by template arguments (empty when not generic).
pub(crate) type Variants = HashMap<Box<[TemplateArg]>, Arc<LoadedKernel>>;

#[derive(Default)]
pub(crate) struct Maps {
    /// By (address of the `static Kernel`, checked), then template arguments: the launch fast
    /// path, no hashing of source.
    pub(crate) by_kernel: HashMap<(usize, bool), Variants>,
    /// By sha256 of (source, entry or name expression, mode): kernels with identical code
    /// share one module. Checked modules also key on their kernel id, since their globals name
    /// one kernel. The other options are fixed per device and process.
    pub(crate) by_content: HashMap<[u8; 32], Arc<LoadedKernel>>,
}

impl ModuleCache {
    /// The maps, locked.
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Maps> {
        // A panic while holding the lock cannot leave the maps half-updated (each update is one
        // insert or remove), so a poisoned lock is still usable.
        self.maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current generation of the cache's entries.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Starts a new generation: entries handed out before are not to be reused.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}
