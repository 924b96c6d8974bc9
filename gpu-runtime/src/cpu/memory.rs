//! Host memory for the CPU backend: buffers, pinned buffers and shared memory.

use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::core::error::{Error, Result};
use crate::core::value::Value;

/// Alignment of every allocation: a cache line, more than the 16 bytes vector loads need and
/// more than any element's own alignment, so every element can be accessed atomically.
pub(crate) const HOST_ALIGN: usize = 64;

/// Zeroed, 64-byte aligned bytes, freed on drop.
pub(crate) struct RawMemory {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: RawMemory owns its allocation outright (like a Box<[u8]>); the pointer is not shared
// with anything that outlives it.
unsafe impl Send for RawMemory {}
// SAFETY: `&RawMemory` hands out only the address; every access through it is either through
// `&mut` (exclusive) or atomic (kernels), as the users of `as_ptr` document.
unsafe impl Sync for RawMemory {}

impl RawMemory {
    /// Allocates `bytes` zeroed bytes (at least one cache line, so the address is always a
    /// real allocation).
    pub(crate) fn zeroed(bytes: usize) -> Result<RawMemory> {
        let layout = Layout::from_size_align(bytes.max(HOST_ALIGN), HOST_ALIGN)
            .map_err(|_| Error::HostAlloc { bytes })?;
        // SAFETY: the layout has a nonzero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(Error::HostAlloc { bytes })?;
        Ok(RawMemory { ptr, layout })
    }

    /// The first byte's address.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Bytes usable (at least what was asked for).
    pub(crate) fn capacity(&self) -> usize {
        self.layout.size()
    }

    /// Zeroes the first `bytes` bytes (clamped to the capacity).
    pub(crate) fn zero(&mut self, bytes: usize) {
        // SAFETY: `&mut self` excludes every other access; the count is within the allocation.
        unsafe { self.ptr.as_ptr().write_bytes(0, bytes.min(self.capacity())) };
    }
}

impl Drop for RawMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this very layout, and freed only here.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// `len` elements of `T` in host memory, zero-initialised: a [`crate::DeviceBuffer`] or a
/// [`crate::PinnedBuffer`] of the CPU backend.
///
/// Invariant: the memory holds `len` valid `T`s. It starts zeroed (valid for every [`Value`]),
/// and is only written through `as_mut_slice` or by kernels through a `CpuSlice<T>` of the same
/// `T` (launches check the element type), which write whole valid values.
pub(crate) struct HostBuffer<T> {
    memory: RawMemory,
    len: usize,
    marker: PhantomData<T>,
}

impl<T: Value> HostBuffer<T> {
    /// `len` zeroed elements.
    pub(crate) fn zeroed(len: usize) -> Result<Self> {
        let elem_bytes = std::mem::size_of::<T>();
        let bytes = len
            .checked_mul(elem_bytes)
            .filter(|&bytes| bytes < isize::MAX as usize - HOST_ALIGN)
            .ok_or(Error::AllocationTooLarge { len, elem_bytes })?;
        Ok(HostBuffer {
            memory: RawMemory::zeroed(bytes)?,
            len,
            marker: PhantomData,
        })
    }

    /// A copy of `data`.
    pub(crate) fn from_slice(data: &[T]) -> Result<Self> {
        let mut buffer = Self::zeroed(data.len())?;
        buffer.as_mut_slice().copy_from_slice(data);
        Ok(buffer)
    }

    /// The elements.
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: the allocation holds `len` valid, aligned `T`s (the type's invariant). Kernels
        // only write through `&mut` borrows of the owning buffer, so nothing writes while this
        // shared borrow lives; concurrent kernel reads are reads.
        unsafe { std::slice::from_raw_parts(self.memory.as_ptr().cast::<T>(), self.len) }
    }

    /// The elements, mutably.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as for `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.memory.as_ptr().cast::<T>(), self.len) }
    }

    /// The first element's address, for kernel arguments.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.memory.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_aligned_and_copy() {
        let empty = HostBuffer::<f64>::zeroed(0).unwrap();
        assert!(empty.as_slice().is_empty());
        assert_eq!(empty.as_ptr() as usize % HOST_ALIGN, 0);
        let mut buffer = HostBuffer::<u32>::zeroed(1000).unwrap();
        assert!(buffer.as_slice().iter().all(|&v| v == 0));
        buffer.as_mut_slice()[999] = 7;
        assert_eq!(buffer.as_slice()[999], 7);
        let copy = HostBuffer::from_slice(&[1.5f32, 2.5]).unwrap();
        assert_eq!(copy.as_slice(), [1.5, 2.5]);
        assert!(matches!(
            HostBuffer::<u64>::zeroed(usize::MAX / 4),
            Err(Error::AllocationTooLarge { .. })
        ));
        let mut raw = RawMemory::zeroed(10).unwrap();
        assert_eq!(raw.capacity(), HOST_ALIGN);
        raw.zero(1 << 20);
    }
}
