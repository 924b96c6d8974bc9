//! Checked mode on a CUDA device: the per-device error slot that checked kernels write a
//! violation into, and wiring each checked module to it (the contract is in
//! `core/checks.rs`).

use std::sync::{Arc, Mutex};

use cudarc::driver::result as driver;
use cudarc::driver::sys::{CUdeviceptr, CUresult, CUstream};
use cudarc::driver::{CudaContext, CudaModule, DriverError};

use crate::core::checks::{
    ErrorRecord, PendingChecks, KERNEL_ID_GLOBAL, RECORD_BYTES, SLOT_PTR_GLOBAL,
};
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::cuda::device::CudaDevice;

/// One device's error slot, in device memory, with a private stream to read and reset it.
///
/// Device memory rather than mapped pinned host memory: the checks claim the slot with
/// `atomicCAS`, and device-wide atomics are guaranteed on device memory, while atomics on
/// mapped host memory depend on the platform's PCIe/NVLink atomics. The price is one 32-byte
/// copy per synchronizing call that has a checked launch pending, which only checked (debug)
/// launches pay.
pub(crate) struct ErrorSlot {
    ctx: Arc<CudaContext>,
    ptr: CUdeviceptr,
    /// A non-blocking stream of our own, so reading the slot waits for nothing else queued on
    /// the device. Raw rather than a cudarc stream: a second cudarc stream would switch the
    /// whole context into cudarc's multi-stream event tracking.
    stream: CUstream,
    /// Makes read-and-reset atomic, so one panic is reported once.
    lock: Mutex<()>,
}

// SAFETY: the stream handle and device pointer are plain driver handles; the CUDA driver API is
// thread-safe and every use binds the owning context first. Concurrent reads and resets are
// serialised by `lock`.
unsafe impl Send for ErrorSlot {}
// SAFETY: as for Send; `&ErrorSlot` only issues driver calls under `lock`.
unsafe impl Sync for ErrorSlot {}

impl ErrorSlot {
    fn new(ctx: &Arc<CudaContext>) -> Result<ErrorSlot> {
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let stream = driver::stream::create(driver::stream::StreamKind::NonBlocking)
            .map_err(Error::driver("creating the checked-mode stream"))?;
        let mut slot = ErrorSlot {
            ctx: ctx.clone(),
            ptr: 0,
            stream,
            lock: Mutex::new(()),
        };
        // SAFETY: the context is bound; a 32-byte allocation has no preconditions. On failure
        // `slot` drops and destroys the stream.
        slot.ptr = unsafe { driver::malloc_sync(RECORD_BYTES) }.map_err(|source| Error::Alloc {
            bytes: RECORD_BYTES,
            source: source.into(),
        })?;
        slot.reset()?;
        Ok(slot)
    }

    /// The slot's device address, as written into `rs_error_slot_ptr`.
    fn device_address(&self) -> u64 {
        self.ptr
    }

    /// Zeroes the slot and waits for it.
    fn reset(&self) -> Result<()> {
        // SAFETY: `ptr` is our live 32-byte allocation and `stream` our live stream, both in
        // `ctx`, which every caller has bound.
        unsafe { driver::memset_d8_async(self.ptr, 0, RECORD_BYTES, self.stream) }
            .map_err(Error::driver("resetting the checked-mode error slot"))?;
        self.wait()
    }

    fn wait(&self) -> Result<()> {
        // SAFETY: `stream` is our live stream.
        unsafe { driver::stream::synchronize(self.stream) }.map_err(Error::driver(
            "waiting for the checked-mode error slot (a kernel may have faulted)",
        ))
    }

    /// Reads the slot; a claimed one is returned and the slot reset.
    fn take(&self) -> Result<Option<ErrorRecord>> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let mut bytes = [0u8; RECORD_BYTES];
        // SAFETY: copies our 32-byte allocation into a 32-byte local; the wait below completes
        // the copy before `bytes` is read.
        unsafe { driver::memcpy_dtoh_async(&mut bytes[..], self.ptr, self.stream) }
            .map_err(Error::driver("reading the checked-mode error slot"))?;
        self.wait()?;
        let record = ErrorRecord::from_bytes(&bytes);
        if record.flag == 0 {
            return Ok(None);
        }
        self.reset()?;
        Ok(Some(record))
    }

    /// Writes `bytes` to a module global at `dst` and waits, so any later launch sees it.
    fn write_global(&self, dst: CUdeviceptr, bytes: &[u8]) -> Result<()> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        // SAFETY: the caller passes a global of exactly `bytes.len()` bytes from a module
        // loaded in `ctx`; the source is staged by the driver and the wait completes the copy
        // before `bytes` goes away.
        unsafe { driver::memcpy_htod_async(dst, bytes, self.stream) }.map_err(Error::driver(
            "setting a checked kernel's error-slot globals",
        ))?;
        self.wait()
    }
}

impl Drop for ErrorSlot {
    fn drop(&mut self) {
        // Nothing to report from drop; a failure leaks 32 bytes of a context being torn down.
        if self.ctx.bind_to_thread().is_err() {
            return;
        }
        if self.ptr != 0 {
            // SAFETY: `ptr` is our allocation, freed only here; no kernel can still use it once
            // the owning Gpu is gone.
            let _ = unsafe { driver::free_sync(self.ptr) };
        }
        // SAFETY: `stream` is ours and destroyed only here.
        let _ = unsafe { driver::stream::destroy(self.stream) };
    }
}

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
