//! Checked mode on a CUDA device: wiring each checked module to the device's error slot, and
//! reporting what the slot caught (the contract is in `core/checks.rs`).

use std::sync::Arc;

use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::{CudaModule, DriverError};

use crate::core::checks::{PendingChecks, KERNEL_ID_GLOBAL, SLOT_PTR_GLOBAL};
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::cuda::device::CudaDevice;
use crate::cuda::error_slot::ErrorSlot;

impl CudaDevice {
    /// The device's error slot, allocated on first use.
    fn error_slot(&self) -> Result<&ErrorSlot> {
        if let Some(slot) = self.error_slot.get() {
            return Ok(slot);
        }
        let slot = ErrorSlot::new(&self.ctx)?;
        // Another thread may have won the race; its slot is kept and ours freed.
        Ok(self.error_slot.get_or_init(|| slot))
    }

    /// Points a freshly loaded checked module at the error slot and gives it its kernel id.
    /// Returns whether the module has checks at all (hand-written sources may lack the
    /// prelude, and then run as if unchecked).
    pub(crate) fn wire_checks(
        &self,
        kernel: &KernelSpec,
        module: &Arc<CudaModule>,
        kernel_id: u32,
    ) -> Result<bool> {
        let Some(slot_ptr) = self.find_global(kernel, module, SLOT_PTR_GLOBAL, 8)? else {
            return Ok(false);
        };
        let slot = self.error_slot()?;
        slot.write_global(slot_ptr, &slot.device_address().to_le_bytes())?;
        if let Some(id_ptr) = self.find_global(kernel, module, KERNEL_ID_GLOBAL, 4)? {
            slot.write_global(id_ptr, &kernel_id.to_le_bytes())?;
        }
        Ok(true)
    }

    /// The address of a module global of `bytes` bytes, or `None` when the module has none.
    fn find_global(
        &self,
        kernel: &KernelSpec,
        module: &Arc<CudaModule>,
        name: &str,
        bytes: usize,
    ) -> Result<Option<CUdeviceptr>> {
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        // The stream only lends the view a lifetime; the view carries no events to wait on.
        let stream = &self.default_stream;
        let view = match module.get_global(name, stream) {
            Ok(view) => view,
            Err(DriverError(CUresult::CUDA_ERROR_NOT_FOUND)) => return Ok(None),
            Err(source) => {
                return Err(Error::Driver {
                    context: "looking up a checked kernel's error-slot globals",
                    source: source.into(),
                })
            }
        };
        if view.len() != bytes {
            return Err(Error::InvalidKernel {
                kernel: kernel.name().to_string(),
                reason: format!(
                    "its global `{name}` has {} bytes where the checked-mode prelude declares \
                     {bytes}; regenerate it with a matching #[kernel] macro",
                    view.len()
                ),
            });
        }
        let (address, _no_events) = view.view_ptr(stream);
        Ok(Some(address))
    }

    /// After a synchronization that covered the first `through` checked launches counted by
    /// `checks`: reports (and clears) a panic recorded in the slot.
    pub(crate) fn report_panics(&self, checks: &PendingChecks, through: u64) -> Result<()> {
        if !checks.pending(through) {
            return Ok(());
        }
        let Some(slot) = self.error_slot.get() else {
            checks.mark_checked(through);
            return Ok(());
        };
        let record = slot.take()?;
        checks.mark_checked(through);
        match record {
            Some(record) => Err(record.into_error()),
            None => Ok(()),
        }
    }
}
