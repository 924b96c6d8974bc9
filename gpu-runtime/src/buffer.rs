//! Device memory: typed buffers, their copies, and their accounting.

use std::fmt;

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use crate::backend::Backend;
use crate::cpu::HostBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::pinned::PinnedBuffer;
use crate::scalar::{Scalar, ScalarType};
use crate::stream::Stream;

/// A typed array in device memory (host memory on the CPU backend), freed on drop.
pub struct DeviceBuffer<T: Scalar> {
    storage: Storage<T>,
    len: usize,
    bytes: usize,
    gpu: Gpu,
}

/// Where a buffer's elements live.
enum Storage<T> {
    // Holds max(len, 1) elements: the driver rejects zero-byte allocations, and an empty buffer
    // still needs a valid pointer to pass to kernels.
    Cuda(CudaSlice<T>),
    /// The CPU backend's memory: `len` elements, 64-byte aligned.
    Host(HostBuffer<T>),
}

/// Bytes for `len` elements of `T`, or an error instead of an overflow.
pub(crate) fn checked_bytes<T>(len: usize) -> Result<usize> {
    let elem_bytes = std::mem::size_of::<T>();
    len.checked_mul(elem_bytes)
        // cudarc asserts a pinned allocation stays below isize::MAX bytes.
        .filter(|&bytes| bytes < isize::MAX as usize)
        .ok_or(Error::AllocationTooLarge { len, elem_bytes })
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

/// The error for a buffer whose memory is not of its stream's backend; `check_stream` rules
/// it out, so this only guards against a broken invariant without panicking.
fn backend_mismatch<T: Scalar>(stream: &Stream) -> Error {
    let backend = stream.gpu().backend();
    Error::WrongBackend {
        what: format!("a DeviceBuffer<{}>", T::TYPE),
        expected: backend,
        found: match backend {
            Backend::Cuda => Backend::Cpu,
            Backend::Cpu => Backend::Cuda,
        },
    }
}

impl<T: Scalar> DeviceBuffer<T> {
    /// Allocates `len` zeroed elements on the stream's device.
    pub fn zeroed(stream: &Stream, len: usize) -> Result<Self> {
        let alloc_len = len.max(1);
        let bytes = checked_bytes::<T>(alloc_len)?;
        let storage = match stream.cuda_stream() {
            Some(cuda) => Storage::Cuda(
                cuda.alloc_zeros::<T>(alloc_len)
                    .map_err(|source| Error::Alloc { bytes, source })?,
            ),
            None => Storage::Host(HostBuffer::zeroed(len)?),
        };
        Ok(Self::wrap(stream.gpu(), storage, len, bytes))
    }

    /// Allocates a buffer holding a copy of `data`.
    pub fn from_host(stream: &Stream, data: &[T]) -> Result<Self> {
        if data.is_empty() {
            return Self::zeroed(stream, 0);
        }
        let bytes = checked_bytes::<T>(data.len())?;
        let storage = match stream.cuda_stream() {
            Some(cuda) => Storage::Cuda(
                cuda.clone_htod(data)
                    .map_err(|source| Error::Alloc { bytes, source })?,
            ),
            None => Storage::Host(HostBuffer::from_slice(data)?),
        };
        Ok(Self::wrap(stream.gpu(), storage, data.len(), bytes))
    }

    fn wrap(gpu: &Gpu, storage: Storage<T>, len: usize, bytes: usize) -> Self {
        gpu.inner.memory.add(bytes);
        DeviceBuffer {
            storage,
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
        let out = match (&self.storage, stream.cuda_stream()) {
            (Storage::Cuda(slice), Some(cuda)) => cuda
                .clone_dtoh(slice)
                .map_err(Error::driver("copying device to host"))?,
            (Storage::Host(memory), None) => memory.as_slice().to_vec(),
            _ => return Err(backend_mismatch::<T>(stream)),
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
        match (&mut self.storage, stream.cuda_stream()) {
            // A pageable source is staged by the driver before this returns, so `data` may be
            // reused.
            (Storage::Cuda(slice), Some(cuda)) => cuda
                .memcpy_htod(data, slice)
                .map_err(Error::driver("copying host to device")),
            (Storage::Host(memory), None) => {
                memory.as_mut_slice().copy_from_slice(data);
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(stream)),
        }
    }

    /// Copies the buffer into `out`, which must have the same length; waits for the copy.
    pub fn copy_to_host(&self, stream: &Stream, out: &mut [T]) -> Result<()> {
        self.check_stream(stream)?;
        check_len("copy_to_host", self.len, out.len())?;
        if self.len == 0 {
            return Ok(());
        }
        match (&self.storage, stream.cuda_stream()) {
            (Storage::Cuda(slice), Some(cuda)) => cuda
                .memcpy_dtoh(slice, out)
                .map_err(Error::driver("copying device to host"))?,
            (Storage::Host(memory), None) => out.copy_from_slice(memory.as_slice()),
            _ => return Err(backend_mismatch::<T>(stream)),
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
        match (&mut self.storage, &src.storage, stream.cuda_stream()) {
            (Storage::Cuda(dst), Storage::Cuda(src), Some(cuda)) => cuda
                .memcpy_dtod(src, dst)
                .map_err(Error::driver("copying device to device")),
            (Storage::Host(dst), Storage::Host(src), None) => {
                dst.as_mut_slice().copy_from_slice(src.as_slice());
                Ok(())
            }
            _ => Err(Error::WrongBackend {
                what: format!("the source DeviceBuffer<{}>", T::TYPE),
                expected: stream.gpu().backend(),
                found: src.gpu.backend(),
            }),
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
        match (&mut self.storage, stream.cuda_stream()) {
            (Storage::Cuda(slice), Some(cuda)) => {
                let Some(raw) = src.raw() else {
                    return Err(backend_mismatch::<T>(stream));
                };
                src.before_copy(stream)?;
                cuda.memcpy_htod(raw, slice)
                    .map_err(Error::driver("copying pinned host memory to device"))?;
                src.after_copy(stream)
            }
            (Storage::Host(memory), None) => {
                memory.as_mut_slice().copy_from_slice(src.as_slice()?);
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(stream)),
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
        match (&self.storage, stream.cuda_stream()) {
            (Storage::Cuda(slice), Some(cuda)) => {
                dst.before_copy(stream)?;
                let Some(raw) = dst.raw_mut() else {
                    return Err(backend_mismatch::<T>(stream));
                };
                cuda.memcpy_dtoh(slice, raw)
                    .map_err(Error::driver("copying device to pinned host memory"))?;
                dst.after_copy(stream)
            }
            (Storage::Host(memory), None) => {
                dst.as_mut_slice()?.copy_from_slice(memory.as_slice());
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(stream)),
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

    /// The cudarc allocation, `None` on the CPU backend.
    pub(crate) fn cuda_slice(&self) -> Option<&CudaSlice<T>> {
        match &self.storage {
            Storage::Cuda(slice) => Some(slice),
            Storage::Host(_) => None,
        }
    }

    /// The cudarc allocation, for writing; `None` on the CPU backend.
    pub(crate) fn cuda_slice_mut(&mut self) -> Option<&mut CudaSlice<T>> {
        match &mut self.storage {
            Storage::Cuda(slice) => Some(slice),
            Storage::Host(_) => None,
        }
    }

    pub(crate) fn check_stream(&self, stream: &Stream) -> Result<()> {
        stream.check_device(|| format!("a DeviceBuffer<{}>", T::TYPE), &self.gpu)
    }
}

impl<T: Scalar> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // The CudaSlice frees itself (stream-ordered, after pending uses), as does host
        // memory; only the counters are ours.
        self.gpu.inner.memory.sub(self.bytes);
    }
}

impl<T: Scalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.gpu.backend() {
            Backend::Cuda => write!(
                f,
                "DeviceBuffer<{}>(len {} on GPU {})",
                T::TYPE,
                self.len,
                self.gpu.ordinal()
            ),
            Backend::Cpu => write!(
                f,
                "DeviceBuffer<{}>(len {} on the CPU backend)",
                T::TYPE,
                self.len
            ),
        }
    }
}

/// A device buffer with its element type erased, as a launch argument sees it.
pub(crate) trait LaunchSlice {
    /// The element type.
    fn elem(&self) -> ScalarType;
    /// Elements, as the kernel's length parameter.
    fn len(&self) -> usize;
    /// The device it lives on.
    fn gpu(&self) -> &Gpu;
    /// Pushes the pointer as read-only, so cudarc records a read; false (and nothing pushed)
    /// for host memory.
    fn push_ptr<'s>(&'s self, builder: &mut LaunchArgs<'s>) -> bool;
    /// Pushes the pointer as written, so cudarc orders later readers after this launch; false
    /// (and nothing pushed) for host memory.
    fn push_ptr_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>) -> bool;
    /// The first element's address in host memory (CPU backend), `None` for device memory.
    fn host_ptr(&self) -> Option<*mut u8>;
}

impl<T: Scalar> LaunchSlice for DeviceBuffer<T> {
    fn elem(&self) -> ScalarType {
        T::TYPE
    }

    fn len(&self) -> usize {
        self.len
    }

    fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn push_ptr<'s>(&'s self, builder: &mut LaunchArgs<'s>) -> bool {
        match &self.storage {
            Storage::Cuda(slice) => {
                builder.arg(slice);
                true
            }
            Storage::Host(_) => false,
        }
    }

    fn push_ptr_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>) -> bool {
        match &mut self.storage {
            Storage::Cuda(slice) => {
                builder.arg(slice);
                true
            }
            Storage::Host(_) => false,
        }
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        match &self.storage {
            Storage::Cuda(_) => None,
            Storage::Host(memory) => Some(memory.as_ptr()),
        }
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
