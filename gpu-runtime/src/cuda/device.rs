//! A CUDA device: its primary context, default stream, memory pool, loaded modules and
//! checked-mode state, and opening it. Its other methods live with what they do: queues and
//! synchronization in `stream.rs`, compiling and loading in `modules.rs`, the error slot in
//! `checked.rs`, allocation and the pool's cache in `memory.rs`.

use std::sync::{Arc, OnceLock};

use cudarc::driver::result as driver;
use cudarc::driver::sys::{CUdevice_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::core::backend::Backend;
use crate::core::checks::PendingChecks;
use crate::core::error::{Error, Result};
use crate::core::info::DeviceInfo;
use crate::cuda::capture_gate::CaptureGate;
use crate::cuda::error_slot::ErrorSlot;
use crate::cuda::grid_word::GridWord;
use crate::cuda::loader::{guarded, Library};
use crate::cuda::mempool::MemPool;
use crate::cuda::module_cache::ModuleCache;

/// A CUDA device's context, default stream, loaded modules and checked-mode state.
pub(crate) struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) default_stream: Arc<CudaStream>,
    pub(crate) modules: ModuleCache,
    /// The compute capability kernels are compiled for.
    pub(crate) arch: (u32, u32),
    /// The checked-mode error slot, allocated by the first checked module loaded.
    pub(crate) error_slot: OnceLock<ErrorSlot>,
    /// Checked launches on the default stream (shared by every handle to it).
    pub(crate) default_checks: Arc<PendingChecks>,
    /// Checked launches on any stream, for a device-wide synchronization.
    pub(crate) device_checks: PendingChecks,
    /// The default stream's grid-barrier word (shared by every handle to it).
    pub(crate) default_grid_word: Arc<GridWord>,
    /// Keeps device-wide synchronizations out of captures in progress.
    pub(crate) capture_gate: CaptureGate,
    /// The pool buffers come from, keeping freed memory for reuse; `None` without pools.
    pub(crate) pool: Option<MemPool>,
}

impl CudaDevice {
    /// Number of CUDA devices; `Err(NoDriver)` without a driver, `Ok(0)` with a driver but no
    /// GPU.
    pub(crate) fn count() -> Result<usize> {
        guarded(Library::Driver, count_unguarded)
    }

    /// Opens device `ordinal` (its primary context) and reads its properties.
    pub(crate) fn open(ordinal: usize) -> Result<(CudaDevice, DeviceInfo)> {
        guarded(Library::Driver, || CudaDevice::open_unguarded(ordinal))
    }

    fn open_unguarded(ordinal: usize) -> Result<(CudaDevice, DeviceInfo)> {
        let available = count_unguarded()?;
        if ordinal >= available {
            return Err(Error::NoDevice {
                requested: ordinal,
                available,
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("creating a CUDA context"))?;
        let info = read_info(&ctx, ordinal).map_err(Error::driver("reading device attributes"))?;
        let default_stream = ctx.default_stream();
        let pool =
            MemPool::open(&ctx).map_err(Error::driver("configuring the device's memory pool"))?;
        let device = CudaDevice {
            ctx,
            default_stream,
            modules: ModuleCache::default(),
            arch: info.compute_capability,
            error_slot: OnceLock::new(),
            default_checks: Arc::default(),
            device_checks: PendingChecks::default(),
            default_grid_word: Arc::default(),
            capture_gate: CaptureGate::default(),
            pool,
        };
        Ok((device, info))
    }
}

fn count_unguarded() -> Result<usize> {
    match driver::init() {
        Ok(()) => {}
        // cuInit reports "no device" rather than succeeding with zero devices.
        Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
        Err(source) => {
            return Err(Error::Driver {
                context: "initialising the CUDA driver (cuInit)",
                source: source.into(),
            })
        }
    }
    let count = driver::device::get_count().map_err(Error::driver("counting devices"))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

fn read_info(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceInfo, DriverError> {
    use CUdevice_attribute as A;
    let attr = |a: A| -> Result<u32, DriverError> {
        ctx.attribute(a).map(|v| u32::try_from(v).unwrap_or(0))
    };
    // Some attributes are deprecated in newer drivers; missing ones are shown as unknown.
    let optional = |a: A| attr(a).ok().filter(|&v| v > 0);
    let (major, minor) = ctx.compute_capability()?;
    let pci_bus_id = format!(
        "{:04x}:{:02x}:{:02x}.0",
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID).unwrap_or(0),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID).unwrap_or(0),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID).unwrap_or(0),
    );
    let mut driver_version = 0;
    // SAFETY: cuDriverGetVersion writes one int through a valid pointer; the driver is loaded.
    let version_ok = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .is_ok();
    let driver_version = if version_ok {
        let v = u32::try_from(driver_version).unwrap_or(0);
        (v / 1000, (v % 1000) / 10)
    } else {
        (0, 0)
    };
    Ok(DeviceInfo {
        backend: Backend::Cuda,
        ordinal,
        name: ctx.name()?,
        compute_capability: (
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        ),
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        total_memory: ctx.total_mem()?,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_block_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        shared_mem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        shared_mem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .unwrap_or(0),
        shared_mem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            .unwrap_or(0),
        registers_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
        warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        l2_cache_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).unwrap_or(0),
        clock_rate_khz: optional(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_rate_khz: optional(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        memory_bus_width_bits: optional(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        ecc_enabled: attr(A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED).unwrap_or(0) != 0,
        integrated: attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED).unwrap_or(0) != 0,
        pci_bus_id,
        driver_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // This machine (and CI) has no libcuda; a GPU machine skips the assertion.
        // SAFETY: only probes for the library.
        if unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: a CUDA driver is installed here");
            return;
        }
        assert!(matches!(CudaDevice::count(), Err(Error::NoDriver)));
        assert!(matches!(CudaDevice::open(0), Err(Error::NoDriver)));
        assert!(matches!(CudaDevice::open(7), Err(Error::NoDriver)));
    }
}
