//! The device's memory pool, which caches freed device memory for reuse.
//!
//! cudarc allocates buffers with `cuMemAllocAsync` and frees them with `cuMemFreeAsync` on a
//! device with memory pools, both from the device's current pool (its default pool unless
//! someone changed it). By default that pool hands every freed byte back to the driver at the
//! next synchronization (a release threshold of 0), so a loop that allocates the same sizes
//! again pays the driver each time. Raising the threshold to the maximum keeps freed memory
//! reserved in the pool, where the next allocation of a fitting size reuses it without a driver
//! round trip: the caching allocator torch has, kept by the driver rather than by hand (its
//! `cudaMallocAsync` backend configures the pool the same way). `Gpu::empty_cache` trims it.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::result::device;
use cudarc::driver::sys::{self, CUmemPool_attribute as Attr};
use cudarc::driver::{CudaContext, DriverError};

/// The pool that this device's buffers come from.
pub(crate) struct MemPool {
    pool: sys::CUmemoryPool,
}

// SAFETY: a CUmemoryPool is a driver handle, valid for the device's lifetime (a device's
// current pool is never destroyed while it is current); the driver API is thread-safe, and this
// type only reads attributes and trims, which the driver serialises.
unsafe impl Send for MemPool {}
// SAFETY: as for Send; `&MemPool` only issues driver calls.
unsafe impl Sync for MemPool {}

impl MemPool {
    /// The device's current pool, set to keep freed memory; `None` when the device has no
    /// memory pools (cudarc then allocates with `cuMemAlloc`, and nothing is cached).
    pub(crate) fn open(ctx: &Arc<CudaContext>) -> Result<Option<MemPool>, DriverError> {
        if !ctx.has_async_alloc() {
            return Ok(None);
        }
        // SAFETY: `cu_device` is the handle the context was created from.
        let pool = unsafe { device::get_mem_pool(ctx.cu_device()) }?;
        let pool = MemPool { pool };
        let mut keep_all = u64::MAX;
        // SAFETY: the release threshold is a cuuint64_t, read from a live local.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool.pool,
                Attr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep_all as *mut u64).cast::<c_void>(),
            )
        }
        .result()?;
        Ok(Some(pool))
    }

    /// Bytes the pool holds from the driver: in use, and freed but kept.
    pub(crate) fn reserved(&self) -> Result<usize, DriverError> {
        self.attribute(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
    }

    /// Bytes of the pool in use by allocations not yet freed.
    pub(crate) fn used(&self) -> Result<usize, DriverError> {
        self.attribute(Attr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    }

    /// Hands every byte not in use back to the driver. Memory whose free has not completed
    /// counts as in use, so callers synchronize first.
    pub(crate) fn trim(&self) -> Result<(), DriverError> {
        // SAFETY: a live pool handle; trimming never touches memory in use.
        unsafe { sys::cuMemPoolTrimTo(self.pool, 0) }.result()
    }

    fn attribute(&self, attr: Attr) -> Result<usize, DriverError> {
        let mut value = 0u64;
        // SAFETY: the byte-count attributes are cuuint64_t, written into a live local.
        unsafe {
            sys::cuMemPoolGetAttribute(self.pool, attr, (&mut value as *mut u64).cast::<c_void>())
        }
        .result()?;
        Ok(usize::try_from(value).unwrap_or(usize::MAX))
    }
}
