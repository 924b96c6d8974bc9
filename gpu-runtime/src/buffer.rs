//! Device memory: typed buffers, their copies, and their accounting.

use std::fmt;

use crate::core::backend::Backend;
use crate::core::error::{Error, Result};
use crate::core::scalar::Scalar;
use crate::core::value::{ElemType, Value};
use crate::cuda::memory::{CudaMemory, LaunchMemory};
use crate::device::Gpu;
use crate::dispatch::{checked_bytes, MemoryImpl};
use crate::pinned::PinnedBuffer;
use crate::profiler::{self, Activity, CopyDirection};
use crate::stream::Stream;

/// A typed array in device memory (host memory on the CPU backend), freed on drop.
pub struct DeviceBuffer<T: Value> {
    memory: MemoryImpl<T>,
    len: usize,
    bytes: usize,
    gpu: Gpu,
}

/// Fails unless two lengths agree.
pub(crate) fn check_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            found,
        })
    }
}

impl<T: Value> DeviceBuffer<T> {
    /// Allocates `len` zeroed elements on the stream's device, ordered on the stream (on a GPU,
    /// from the device's memory pool, which reuses memory freed earlier); a device without
    /// room for them is [`Error::OutOfMemory`].
    pub fn zeroed(stream: &Stream, len: usize) -> Result<Self> {
        let alloc_len = len.max(1);
        let bytes = checked_bytes::<T>(alloc_len)?;
        let gpu = stream.gpu();
        let memory = MemoryImpl::zeroed(gpu.device(), &stream.queue, len, alloc_len, bytes)
            .map_err(|failure| gpu.alloc_error(failure, bytes))?;
        Ok(Self::wrap(gpu, memory, len, bytes))
    }

    /// Allocates a buffer holding a copy of `data`.
    pub fn from_host(stream: &Stream, data: &[T]) -> Result<Self> {
        if data.is_empty() {
            return Self::zeroed(stream, 0);
        }
        let bytes = checked_bytes::<T>(data.len())?;
        let gpu = stream.gpu();
        let upload = || {
            MemoryImpl::from_host(gpu.device(), &stream.queue, data, bytes)
                .map_err(|failure| gpu.alloc_error(failure, bytes))
        };
        let memory = if profiler::enabled() {
            profiler::record(
                stream,
                || copy(bytes, CopyDirection::HostToDevice, false),
                upload,
            )?
        } else {
            upload()?
        };
        Ok(Self::wrap(gpu, memory, data.len(), bytes))
    }

    fn wrap(gpu: &Gpu, memory: MemoryImpl<T>, len: usize, bytes: usize) -> Self {
        gpu.inner.memory.add(bytes);
        DeviceBuffer {
            memory,
            len,
            bytes,
            gpu: gpu.clone(),
        }
    }

    /// Copies the buffer to a new `Vec`, waiting for the copy to finish.
    pub fn to_host(&self, stream: &Stream) -> Result<Vec<T>> {
        self.check_stream(stream)?;
        if self.len == 0 {
            return Ok(Vec::new());
        }
        let download = || self.memory.to_vec(&stream.queue);
        let out = if profiler::enabled() {
            let activity = || copy(self.bytes, CopyDirection::DeviceToHost, false);
            profiler::record(stream, activity, download)?
        } else {
            download()?
        };
        stream.synchronize()?;
        Ok(out)
    }

    /// Overwrites the buffer with `data`, which must have the same length.
    pub fn copy_from_host(&mut self, stream: &Stream, data: &[T]) -> Result<()> {
        self.check_stream(stream)?;
        check_len("copy_from_host", self.len, data.len())?;
        if self.len == 0 {
            return Ok(());
        }
        let bytes = self.bytes;
        let mut upload = || self.memory.write(&stream.queue, data);
        if profiler::enabled() {
            profiler::record(
                stream,
                || copy(bytes, CopyDirection::HostToDevice, false),
                upload,
            )
        } else {
            upload()
        }
    }

    /// Sets every element to `value`, ordered on `stream` after the work queued before it (a
    /// driver memset of the element's width on a GPU: `cuMemsetD8`/`D16`/`D32`, and for 8-byte
    /// types two strided 4-byte ones unless the value's halves agree).
    pub fn fill(&mut self, stream: &Stream, value: T) -> Result<()>
    where
        T: Scalar,
    {
        self.check_stream(stream)?;
        if self.len == 0 {
            return Ok(());
        }
        self.memory.fill(&stream.queue, self.len, value)
    }

    /// Copies the buffer into `out`, which must have the same length; waits for the copy.
    pub fn copy_to_host(&self, stream: &Stream, out: &mut [T]) -> Result<()> {
        self.check_stream(stream)?;
        check_len("copy_to_host", self.len, out.len())?;
        if self.len == 0 {
            return Ok(());
        }
        let mut download = || self.memory.read(&stream.queue, out);
        if profiler::enabled() {
            let activity = || copy(self.bytes, CopyDirection::DeviceToHost, false);
            profiler::record(stream, activity, download)?;
        } else {
            download()?;
        }
        // The caller reads `out` as soon as we return.
        stream.synchronize()
    }

    /// Copies another device buffer of the same length into this one (device to device, or
    /// peer to peer when `src` lives on another GPU).
    pub fn copy_from(&mut self, stream: &Stream, src: &DeviceBuffer<T>) -> Result<()> {
        self.check_stream(stream)?;
        check_len("copy_from", self.len, src.len)?;
        if self.len == 0 {
            return Ok(());
        }
        let bytes = self.bytes;
        let mut run = || {
            self.memory
                .copy_from(&stream.queue, &src.memory, src.gpu.backend())
        };
        if profiler::enabled() {
            profiler::record(
                stream,
                || copy(bytes, CopyDirection::DeviceToDevice, false),
                run,
            )
        } else {
            run()
        }
    }

    /// Queues a copy from page-locked host memory; the pinned buffer's host views wait for it.
    pub fn copy_from_pinned(&mut self, stream: &Stream, src: &PinnedBuffer<T>) -> Result<()> {
        self.check_stream(stream)?;
        stream.check_device(|| "the pinned buffer".to_string(), src.gpu())?;
        check_len("copy_from_pinned", self.len, src.len())?;
        if self.len == 0 {
            return Ok(());
        }
        let (bytes, len) = (self.bytes, self.len);
        let mut upload = || {
            self.memory
                .copy_from_pinned(&stream.queue, src.memory(), len)
        };
        if profiler::enabled() {
            profiler::record(
                stream,
                || copy(bytes, CopyDirection::HostToDevice, true),
                upload,
            )
        } else {
            upload()
        }
    }

    /// Queues a copy into page-locked host memory; its host views wait for the copy.
    pub fn copy_to_pinned(&self, stream: &Stream, dst: &mut PinnedBuffer<T>) -> Result<()> {
        self.check_stream(stream)?;
        stream.check_device(|| "the pinned buffer".to_string(), dst.gpu())?;
        check_len("copy_to_pinned", self.len, dst.len())?;
        if self.len == 0 {
            return Ok(());
        }
        let mut download = || {
            self.memory
                .copy_to_pinned(&stream.queue, dst.memory_mut(), self.len)
        };
        if profiler::enabled() {
            let activity = || copy(self.bytes, CopyDirection::DeviceToHost, true);
            profiler::record(stream, activity, download)
        } else {
            download()
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

    /// The device the buffer lives on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The memory behind it, for the runtime's own views of the buffer.
    pub(crate) fn memory(&self) -> &MemoryImpl<T> {
        &self.memory
    }

    /// The memory behind it, for writing by the runtime (collectives).
    pub(crate) fn memory_mut(&mut self) -> &mut MemoryImpl<T> {
        &mut self.memory
    }

    /// The CUDA allocation, `None` on the CPU backend.
    pub(crate) fn cuda_memory(&self) -> Option<&CudaMemory<T>> {
        self.memory.cuda()
    }

    /// The CUDA allocation, for writing; `None` on the CPU backend.
    pub(crate) fn cuda_memory_mut(&mut self) -> Option<&mut CudaMemory<T>> {
        self.memory.cuda_mut()
    }

    pub(crate) fn check_stream(&self, stream: &Stream) -> Result<()> {
        stream.check_device(|| format!("a DeviceBuffer<{}>", T::ELEM), &self.gpu)
    }
}

impl<T: Value> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // The device memory frees itself (stream-ordered, after pending uses, into the
        // device's pool), as does host memory; only the counters are ours.
        self.gpu.inner.memory.sub(self.bytes);
    }
}

impl<T: Value> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.gpu.backend() {
            Backend::Cuda => write!(
                f,
                "DeviceBuffer<{}>(len {} on GPU {})",
                T::ELEM,
                self.len,
                self.gpu.ordinal()
            ),
            Backend::Cpu => write!(
                f,
                "DeviceBuffer<{}>(len {} on the CPU backend)",
                T::ELEM,
                self.len
            ),
        }
    }
}

/// A copy of `bytes` bytes, as the profiler records it.
fn copy(bytes: usize, direction: CopyDirection, pinned: bool) -> Activity {
    Activity::Copy {
        bytes,
        direction,
        pinned,
    }
}

/// A device buffer with its element type erased, as a launch argument sees it.
pub(crate) trait LaunchSlice {
    /// The element type.
    fn elem(&self) -> ElemType;
    /// Elements, as the kernel's length parameter.
    fn len(&self) -> usize;
    /// The device it lives on.
    fn gpu(&self) -> &Gpu;
    /// The CUDA memory, `None` for host memory.
    fn cuda_memory(&self) -> Option<&dyn LaunchMemory>;
    /// The CUDA memory, for writing; `None` for host memory.
    fn cuda_memory_mut(&mut self) -> Option<&mut (dyn LaunchMemory + 'static)>;
    /// The first element's address in host memory (CPU backend), `None` for device memory.
    fn host_ptr(&self) -> Option<*mut u8>;
}

impl<T: Value> LaunchSlice for DeviceBuffer<T> {
    fn elem(&self) -> ElemType {
        T::ELEM
    }

    fn len(&self) -> usize {
        self.len
    }

    fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn cuda_memory(&self) -> Option<&dyn LaunchMemory> {
        self.memory.cuda().map(|memory| memory as &dyn LaunchMemory)
    }

    fn cuda_memory_mut(&mut self) -> Option<&mut (dyn LaunchMemory + 'static)> {
        self.memory
            .cuda_mut()
            .map(|memory| memory as &mut (dyn LaunchMemory + 'static))
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        self.memory.host_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked() {
        assert_eq!(checked_bytes::<f32>(10).unwrap(), 40);
        assert!(matches!(
            checked_bytes::<f64>(usize::MAX / 4),
            Err(Error::AllocationTooLarge { elem_bytes: 8, .. })
        ));
        assert!(checked_bytes::<u8>(isize::MAX as usize).is_err());
        check_len("x", 3, 3).unwrap();
        assert!(matches!(
            check_len("copy_from_host", 3, 4),
            Err(Error::LengthMismatch {
                what: "copy_from_host",
                expected: 3,
                found: 4
            })
        ));
    }
}
