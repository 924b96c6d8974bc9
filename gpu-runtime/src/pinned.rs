//! Page-locked host memory, for asynchronous copies that overlap with other work.

use std::fmt;

use crate::core::error::Result;
use crate::core::value::Value;
use crate::device::Gpu;
use crate::dispatch::PinnedImpl;

/// Page-locked host memory (plain host memory on the CPU backend). Host views wait for queued
/// copies, so they never see a copy in flight.
pub struct PinnedBuffer<T: Value> {
    memory: PinnedImpl<T>,
    len: usize,
    gpu: Gpu,
}

impl<T: Value> PinnedBuffer<T> {
    /// Allocates `len` zeroed elements of page-locked memory usable with `gpu`'s streams.
    pub fn new(gpu: &Gpu, len: usize) -> Result<Self> {
        Ok(PinnedBuffer {
            memory: gpu.device().pinned_zeroed(len)?,
            len,
            gpu: gpu.clone(),
        })
    }

    /// Allocates page-locked memory holding a copy of `data`.
    pub fn from_slice(gpu: &Gpu, data: &[T]) -> Result<Self> {
        let mut buffer = Self::new(gpu, data.len())?;
        buffer.as_mut_slice()?.copy_from_slice(data);
        Ok(buffer)
    }

    /// The contents, after waiting for any queued copy into or out of them.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.memory.wait()?;
        self.memory.as_slice(self.len)
    }

    /// The contents, mutably, after waiting for any queued copy into or out of them.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.memory.wait()?;
        self.memory.as_mut_slice(self.len)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device whose streams this memory is registered with.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Blocks until every copy queued on this memory has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.memory.wait()
    }

    /// The backend's memory, for copies.
    pub(crate) fn memory(&self) -> &PinnedImpl<T> {
        &self.memory
    }

    /// The backend's memory, for copies into it.
    pub(crate) fn memory_mut(&mut self) -> &mut PinnedImpl<T> {
        &mut self.memory
    }
}

impl<T: Value> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // The memory must not be freed under a DMA still writing or reading it; there is no
        // way to report an error from drop, and the driver records it for the next call anyway.
        let _ = self.memory.wait();
    }
}

impl<T: Value> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PinnedBuffer<{}>(len {})", T::ELEM, self.len)
    }
}
