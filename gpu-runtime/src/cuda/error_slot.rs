//! The checked-mode error slot: device memory that checked kernels write a violation into,
//! with a private stream to read and reset it (the contract is in `core/checks.rs`).

use std::sync::{Arc, Mutex};

use cudarc::driver::result as driver;
use cudarc::driver::sys::{CUdeviceptr, CUstream};
use cudarc::driver::CudaContext;

use crate::core::checks::{ErrorRecord, RECORD_BYTES};
use crate::core::error::{Error, Result};

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
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<ErrorSlot> {
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
    pub(crate) fn device_address(&self) -> u64 {
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
    pub(crate) fn take(&self) -> Result<Option<ErrorRecord>> {
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
    pub(crate) fn write_global(&self, dst: CUdeviceptr, bytes: &[u8]) -> Result<()> {
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
