//! Page-locked host memory, for asynchronous copies that overlap with other work.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, PinnedHostSlice};

use crate::buffer::checked_bytes;
use crate::cpu::HostBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::stream::Stream;

/// Page-locked host memory (plain host memory on the CPU backend). Host views wait for queued
/// copies, so they never see a copy in flight.
pub struct PinnedBuffer<T: Scalar> {
    inner: PinnedInner<T>,
    len: usize,
    gpu: Gpu,
}

enum PinnedInner<T> {
    Cuda {
        // Holds max(len, 1) elements: the driver may refuse zero-byte host allocations.
        memory: PinnedHostSlice<T>,
        // Recorded after every copy queued on this memory. cudarc's own event in
        // PinnedHostSlice is only recorded once a context has several streams, so a copy on the
        // lone default stream would otherwise not be waited for.
        done: CudaEvent,
    },
    /// The CPU backend copies synchronously, so there is never a copy to wait for.
    Host(HostBuffer<T>),
}

impl<T: Scalar> PinnedBuffer<T> {
    /// Allocates `len` zeroed elements of page-locked memory usable with `gpu`'s streams.
    pub fn new(gpu: &Gpu, len: usize) -> Result<Self> {
        let inner = match gpu.cuda("allocating page-locked memory") {
            Ok(cuda) => Self::new_cuda(&cuda.ctx, len)?,
            Err(_) => PinnedInner::Host(HostBuffer::zeroed(len)?),
        };
        Ok(PinnedBuffer {
            inner,
            len,
            gpu: gpu.clone(),
        })
    }

    fn new_cuda(ctx: &Arc<CudaContext>, len: usize) -> Result<PinnedInner<T>> {
        let alloc_len = len.max(1);
        // cudarc asserts on sizes that overflow; check first so that is an error, not a panic.
        checked_bytes::<T>(alloc_len)?;
        // Plain page-locked memory (flags 0), not write-combined: results copied back are read
        // by the host, and write-combined memory is very slow to read.
        // SAFETY: the memory is uninitialised until zeroed below, and nothing reads it first.
        let mut memory = unsafe { ctx.alloc_pinned_with_flags::<T>(alloc_len, 0) }
            .map_err(Error::driver("allocating page-locked host memory"))?;
        let ptr = memory
            .as_mut_ptr()
            .map_err(Error::driver("allocating page-locked host memory"))?;
        // SAFETY: `ptr` points to `alloc_len` properly aligned elements just allocated for us and
        // not shared; all-zero bytes are a valid `T` (Scalar implies ValidAsZeroBits).
        unsafe { ptr.write_bytes(0, alloc_len) };
        let done = ctx
            .new_event(None)
            .map_err(Error::driver("creating an event for pinned memory"))?;
        Ok(PinnedInner::Cuda { memory, done })
    }

    /// Allocates page-locked memory holding a copy of `data`.
    pub fn from_slice(gpu: &Gpu, data: &[T]) -> Result<Self> {
        let mut buffer = Self::new(gpu, data.len())?;
        buffer.as_mut_slice()?.copy_from_slice(data);
        Ok(buffer)
    }

    /// The contents, after waiting for any queued copy into or out of them.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait()?;
        match &self.inner {
            PinnedInner::Cuda { memory, .. } => {
                let all = memory
                    .as_slice()
                    .map_err(Error::driver("waiting for copies into pinned memory"))?;
                Ok(&all[..self.len])
            }
            PinnedInner::Host(memory) => Ok(memory.as_slice()),
        }
    }

    /// The contents, mutably, after waiting for any queued copy into or out of them.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait()?;
        let len = self.len;
        match &mut self.inner {
            PinnedInner::Cuda { memory, .. } => {
                let all = memory
                    .as_mut_slice()
                    .map_err(Error::driver("waiting for copies out of pinned memory"))?;
                Ok(&mut all[..len])
            }
            PinnedInner::Host(memory) => Ok(memory.as_mut_slice()),
        }
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
        self.wait()
    }

    fn wait(&self) -> Result<()> {
        match &self.inner {
            PinnedInner::Cuda { done, .. } => done
                .synchronize()
                .map_err(Error::driver("waiting for copies on pinned memory")),
            PinnedInner::Host(_) => Ok(()),
        }
    }

    /// Orders a copy about to be queued on `stream` after earlier copies on any stream.
    pub(crate) fn before_copy(&self, stream: &Stream) -> Result<()> {
        match (&self.inner, stream.cuda_stream()) {
            (PinnedInner::Cuda { done, .. }, Some(cuda)) => cuda
                .wait(done)
                .map_err(Error::driver("ordering a copy after earlier pinned copies")),
            _ => Ok(()),
        }
    }

    /// Marks the copy just queued on `stream`, so host views wait for it.
    pub(crate) fn after_copy(&self, stream: &Stream) -> Result<()> {
        match (&self.inner, stream.cuda_stream()) {
            (PinnedInner::Cuda { done, .. }, Some(cuda)) => done
                .record(cuda)
                .map_err(Error::driver("recording a pinned copy")),
            _ => Ok(()),
        }
    }

    /// The cudarc slice, for copies; only called with non-empty buffers, where the lengths of
    /// the two agree. `None` on the CPU backend.
    pub(crate) fn raw(&self) -> Option<&PinnedHostSlice<T>> {
        match &self.inner {
            PinnedInner::Cuda { memory, .. } => Some(memory),
            PinnedInner::Host(_) => None,
        }
    }

    pub(crate) fn raw_mut(&mut self) -> Option<&mut PinnedHostSlice<T>> {
        match &mut self.inner {
            PinnedInner::Cuda { memory, .. } => Some(memory),
            PinnedInner::Host(_) => None,
        }
    }
}

impl<T: Scalar> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // The memory must not be freed under a DMA still writing or reading it; there is no
        // way to report an error from drop, and the driver records it for the next call anyway.
        let _ = self.wait();
    }
}

impl<T: Scalar> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PinnedBuffer<{}>(len {})", T::TYPE, self.len)
    }
}
