//! Cooperative launches on a CUDA device: how many blocks of a kernel can be resident at once,
//! which bounds the grid of a kernel that calls `grid_sync`.

use cudarc::driver::sys::CUdevice_attribute;

use crate::core::cache::CacheConfig;
use crate::core::checks::resolve_checked;
use crate::core::error::{Error, Result};
use crate::core::generic::TemplateArg;
use crate::core::kernel::KernelSpec;
use crate::core::launch::{plan_for_function, DeviceLimits, LaunchConfig, SharedMemPlan};
use crate::cuda::device::CudaDevice;
use crate::cuda::module_cache::LoadedKernel;

impl CudaDevice {
    /// The most blocks of `config`'s shape (threads per block, dynamic shared memory, checked
    /// build) that can be resident at once, for a cooperative launch of `kernel`; compiles it
    /// on first use.
    pub(crate) fn max_cooperative_blocks(
        &self,
        kernel: &'static KernelSpec,
        template_args: &[TemplateArg],
        config: &LaunchConfig,
        limits: &DeviceLimits,
        cache: impl FnOnce() -> CacheConfig,
    ) -> Result<u32> {
        let checked = resolve_checked(config.checked, kernel.checked_by_default());
        let loaded = self.loaded_kernel(kernel, checked, template_args, cache)?;
        let plan = plan_for_function(kernel.name(), config, limits, &loaded.limits)?;
        if let SharedMemPlan::OptIn(bytes) = plan {
            loaded.allow_dynamic_shared_mem(&self.ctx, bytes)?;
        }
        self.resident_blocks(kernel, &loaded, config)
    }

    /// Refuses a cooperative launch whose blocks cannot all be resident at once: its grid
    /// barrier would wait forever for blocks that never start.
    pub(crate) fn check_resident(
        &self,
        kernel: &KernelSpec,
        loaded: &LoadedKernel,
        config: &LaunchConfig,
    ) -> Result<()> {
        let max = self.resident_blocks(kernel, loaded, config)?;
        let blocks = u64::from(config.grid.x) * u64::from(config.grid.y) * u64::from(config.grid.z);
        if blocks <= u64::from(max) {
            return Ok(());
        }
        Err(Error::CooperativeGridTooLarge {
            kernel: kernel.name().to_string(),
            blocks,
            block_threads: block_threads(config),
            shared_bytes: config.shared_mem_bytes,
            max: u64::from(max),
            device: "this GPU",
        })
    }

    /// Resident blocks of `config`'s shape: the occupancy per multiprocessor times their
    /// count, asked of the driver once per loaded kernel and shape.
    fn resident_blocks(
        &self,
        kernel: &KernelSpec,
        loaded: &LoadedKernel,
        config: &LaunchConfig,
    ) -> Result<u32> {
        let shape = (block_threads(config), config.shared_mem_bytes);
        let known = |cache: &Vec<((u32, u32), u32)>| {
            cache.iter().find(|(s, _)| *s == shape).map(|&(_, max)| max)
        };
        if let Some(max) = loaded.resident_blocks.lock().ok().and_then(|c| known(&c)) {
            return Ok(max);
        }
        let attribute = |a: CUdevice_attribute| {
            self.ctx
                .attribute(a)
                .map(|v| u32::try_from(v).unwrap_or(0))
                .map_err(Error::driver("reading a device attribute"))
        };
        if attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 0 {
            return Err(Error::CooperativeUnsupported {
                kernel: kernel.name().to_string(),
            });
        }
        let sms = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let per_sm = loaded
            .function
            .occupancy_max_active_blocks_per_multiprocessor(shape.0, shape.1 as usize, None)
            .map_err(Error::driver("asking the driver for a kernel's occupancy"))?;
        let max = per_sm.saturating_mul(sms);
        if let Ok(mut cache) = loaded.resident_blocks.lock() {
            if known(&cache).is_none() {
                cache.push((shape, max));
            }
        }
        Ok(max)
    }
}

/// Threads per block of `config` (validated: at most 1024).
fn block_threads(config: &LaunchConfig) -> u32 {
    config.block.x * config.block.y * config.block.z
}
