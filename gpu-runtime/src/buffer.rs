//! Device memory: typed buffers, their copies, and their accounting.

use std::fmt;

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::pinned::PinnedBuffer;
use crate::scalar::{Scalar, ScalarType};
use crate::stream::Stream;

/// A typed array in device memory, freed on drop.
pub struct DeviceBuffer<T: Scalar> {
    // Holds max(len, 1) elements: the driver rejects zero-byte allocations, and an empty buffer
    // still needs a valid pointer to pass to kernels.
    slice: CudaSlice<T>,
    len: usize,
    bytes: usize,
    gpu: Gpu,
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

impl<T: Scalar> DeviceBuffer<T> {
    /// Allocates `len` zeroed elements on the stream's device.
    pub fn zeroed(stream: &Stream, len: usize) -> Result<Self> {
        let alloc_len = len.max(1);
        let bytes = checked_bytes::<T>(alloc_len)?;
        let slice = stream
            .inner
            .alloc_zeros::<T>(alloc_len)
            .map_err(|source| Error::Alloc { bytes, source })?;
        Ok(Self::wrap(stream.gpu(), slice, len, bytes))
    }

    /// Allocates a buffer holding a copy of `data`.
    pub fn from_host(stream: &Stream, data: &[T]) -> Result<Self> {
        if data.is_empty() {
            return Self::zeroed(stream, 0);
        }
        let bytes = checked_bytes::<T>(data.len())?;
        let slice = stream
            .inner
            .clone_htod(data)
            .map_err(|source| Error::Alloc { bytes, source })?;
        Ok(Self::wrap(stream.gpu(), slice, data.len(), bytes))
    }

    fn wrap(gpu: &Gpu, slice: CudaSlice<T>, len: usize, bytes: usize) -> Self {
        gpu.inner.memory.add(bytes);
        DeviceBuffer {
            slice,
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
        let out = stream
            .inner
            .clone_dtoh(&self.slice)
            .map_err(Error::driver("copying device to host"))?;
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
        // A pageable source is staged by the driver before this returns, so `data` may be reused.
        stream
            .inner
            .memcpy_htod(data, &mut self.slice)
            .map_err(Error::driver("copying host to device"))
    }

    /// Copies the buffer into `out`, which must have the same length; waits for the copy.
    pub fn copy_to_host(&self, stream: &Stream, out: &mut [T]) -> Result<()> {
        self.check_stream(stream)?;
        check_len("copy_to_host", self.len, out.len())?;
        if self.len == 0 {
            return Ok(());
        }
        stream
            .inner
            .memcpy_dtoh(&self.slice, out)
            .map_err(Error::driver("copying device to host"))?;
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
        stream
            .inner
            .memcpy_dtod(&src.slice, &mut self.slice)
            .map_err(Error::driver("copying device to device"))
    }

    /// Queues a copy from page-locked host memory; the pinned buffer's host views wait for it.
    pub fn copy_from_pinned(&mut self, stream: &Stream, src: &PinnedBuffer<T>) -> Result<()> {
        self.check_stream(stream)?;
        stream.check_device(|| "the pinned buffer".to_string(), src.gpu().ordinal())?;
        check_len("copy_from_pinned", self.len, src.len())?;
        if self.len == 0 {
            return Ok(());
        }
        src.before_copy(stream)?;
        stream
            .inner
            .memcpy_htod(src.raw(), &mut self.slice)
            .map_err(Error::driver("copying pinned host memory to device"))?;
        src.after_copy(stream)
    }

    /// Queues a copy into page-locked host memory; its host views wait for the copy.
    pub fn copy_to_pinned(&self, stream: &Stream, dst: &mut PinnedBuffer<T>) -> Result<()> {
        self.check_stream(stream)?;
        stream.check_device(|| "the pinned buffer".to_string(), dst.gpu().ordinal())?;
        check_len("copy_to_pinned", self.len, dst.len())?;
        if self.len == 0 {
            return Ok(());
        }
        dst.before_copy(stream)?;
        stream
            .inner
            .memcpy_dtoh(&self.slice, dst.raw_mut())
            .map_err(Error::driver("copying device to pinned host memory"))?;
        dst.after_copy(stream)
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

    fn check_stream(&self, stream: &Stream) -> Result<()> {
        stream.check_device(
            || format!("a DeviceBuffer<{}>", T::TYPE),
            self.gpu.ordinal(),
        )
    }
}

impl<T: Scalar> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // The CudaSlice frees itself (stream-ordered, after pending uses); only the counters
        // are ours.
        self.gpu.inner.memory.sub(self.bytes);
    }
}

impl<T: Scalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>(len {} on GPU {})",
            T::TYPE,
            self.len,
            self.gpu.ordinal()
        )
    }
}

/// A device buffer with its element type erased, as a launch argument sees it.
pub(crate) trait LaunchSlice {
    /// The element type.
    fn elem(&self) -> ScalarType;
    /// Elements, as the kernel's length parameter.
    fn len(&self) -> usize;
    /// The device it lives on.
    fn ordinal(&self) -> usize;
    /// Pushes the pointer as read-only, so cudarc records a read.
    fn push_ptr<'s>(&'s self, builder: &mut LaunchArgs<'s>);
    /// Pushes the pointer as written, so cudarc orders later readers after this launch.
    fn push_ptr_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>);
}

impl<T: Scalar> LaunchSlice for DeviceBuffer<T> {
    fn elem(&self) -> ScalarType {
        T::TYPE
    }

    fn len(&self) -> usize {
        self.len
    }

    fn ordinal(&self) -> usize {
        self.gpu.ordinal()
    }

    fn push_ptr<'s>(&'s self, builder: &mut LaunchArgs<'s>) {
        builder.arg(&self.slice);
    }

    fn push_ptr_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>) {
        builder.arg(&mut self.slice);
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
