//! Device memory and page-locked host memory on a CUDA device, the copies between them, and
//! the device's side of the memory accounting: what its pool reserves, emptying that cache, and
//! allocations that empty it and try again when the device is full.
//!
//! cudarc wants its own marker traits (`DeviceRepr`, `ValidAsZeroBits`) on element types; the
//! runtime's [`Value`] must not depend on cudarc, so memory here is typed by [`Elem<T>`], a
//! transparent wrapper this layer marks, and host slices are viewed as `Elem<T>` in place.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    DriverError, LaunchArgs, PinnedHostSlice, PushKernelArg, SyncOnDrop, ValidAsZeroBits,
};

use crate::core::error::{AllocFailure, Error, Result};
use crate::core::scalar::Scalar;
use crate::core::tensor_map::{Swizzle, TmaGeometry};
use crate::core::value::Value;
use crate::cuda::device::CudaDevice;

/// A [`Value`] as cudarc sees it: same layout, cudarc's marker traits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Elem<T>(T);

// SAFETY: every Value is plain data without pointers, with one layout on the host and the device
// (scalars are primitives; arrays and `#[device]` structs are `repr(C)` aggregates of them whose
// layout `#[device]` asserts on both sides); Elem is transparent. Padding bytes of a struct are
// copied by the driver, never read as values.
unsafe impl<T: Value> DeviceRepr for Elem<T> {}
// SAFETY: all-zero bytes are a valid value of every Value (its safety contract).
unsafe impl<T: Value> ValidAsZeroBits for Elem<T> {}

/// `data` viewed as cudarc elements.
fn elems<T: Value>(data: &[T]) -> &[Elem<T>] {
    // SAFETY: Elem<T> is repr(transparent) over T, so the slices have one layout.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), data.len()) }
}

/// `data` viewed as cudarc elements, for writing.
fn elems_mut<T: Value>(data: &mut [T]) -> &mut [Elem<T>] {
    // SAFETY: as in `elems`; the exclusive borrow carries over.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), data.len()) }
}

/// Elements read back from the device, unwrapped without copying.
fn unwrap_vec<T: Value>(data: Vec<Elem<T>>) -> Vec<T> {
    let mut data = std::mem::ManuallyDrop::new(data);
    // SAFETY: Elem<T> is repr(transparent) over T (same size and alignment), so the allocation
    // and its initialised elements are a valid Vec<T>; the original is not dropped.
    unsafe { Vec::from_raw_parts(data.as_mut_ptr().cast(), data.len(), data.capacity()) }
}

impl CudaDevice {
    /// Runs `allocate`, which asks the driver for `bytes`. When the device is full and the pool
    /// holds freed memory, waits for the device (so pending frees complete), hands that memory
    /// back to the driver and asks once more, as torch's caching allocator does before it
    /// reports running out of memory: memory cached for one size must not starve another.
    pub(crate) fn allocate<R>(
        &self,
        bytes: usize,
        mut allocate: impl FnMut() -> Result<R, DriverError>,
    ) -> Result<R, AllocFailure> {
        let failed = |source| alloc_failure(source, bytes);
        let result = match allocate() {
            Err(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY)) if self.release_cached() => {
                allocate().map_err(failed)
            }
            result => result.map_err(failed),
        };
        if let (Err(AllocFailure::OutOfMemory), Some(pool)) = (&result, &self.pool) {
            // A refused request can leave the pool holding what it gathered for it (most of the
            // device, for a request larger than the device): hand that back, so the error's
            // figures and other processes see only what buffers use. Trimming releases only
            // memory nothing uses; a failure leaves the cache as it was.
            let _ = pool.trim();
        }
        result
    }

    /// Waits for the device and trims the pool, when it holds memory no buffer uses; whether
    /// anything may have been released. Inside a graph capture on this thread, which a
    /// device-wide synchronization would break, or when the device cannot be waited for,
    /// nothing is.
    fn release_cached(&self) -> bool {
        let Some(pool) = &self.pool else {
            return false;
        };
        let cached = match (pool.reserved(), pool.used()) {
            (Ok(reserved), Ok(used)) => reserved > used,
            _ => false,
        };
        if !cached {
            return false;
        }
        let Ok(gate) = self.capture_gate.synchronizing() else {
            return false;
        };
        // A failed synchronization (a faulted kernel) is reported by the caller's next
        // synchronizing call; the allocation only learns that nothing was released.
        let synchronized = self.ctx.synchronize().is_ok();
        drop(gate);
        synchronized && pool.trim().is_ok()
    }

    /// Bytes the device's pool holds from the driver; `None` without a pool (nothing is cached)
    /// or when the driver cannot say.
    pub(crate) fn reserved_bytes(&self) -> Option<usize> {
        self.pool.as_ref()?.reserved().ok()
    }

    /// Waits for the device, reporting faults and panics as a synchronization does, then hands
    /// the pool's freed memory back to the driver.
    pub(crate) fn empty_cache(&self) -> Result<()> {
        let Some(pool) = &self.pool else {
            return Ok(());
        };
        self.synchronize()?;
        pool.trim().map_err(Error::driver(
            "returning cached device memory to the driver",
        ))
    }
}

/// What a failed allocation of `bytes` was: the device being full, or another driver failure.
fn alloc_failure(source: DriverError, bytes: usize) -> AllocFailure {
    if source.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        AllocFailure::OutOfMemory
    } else {
        AllocFailure::Other(Error::Alloc {
            bytes,
            source: source.into(),
        })
    }
}

/// A typed device allocation, freed (stream-ordered) on drop.
pub(crate) struct CudaMemory<T: Value> {
    // Holds max(len, 1) elements: the driver rejects zero-byte allocations, and an empty buffer
    // still needs a valid pointer to pass to kernels.
    slice: CudaSlice<Elem<T>>,
}

impl<T: Value> CudaMemory<T> {
    /// `len` zeroed elements, `bytes` in all.
    pub(crate) fn zeroed(
        device: &CudaDevice,
        stream: &Arc<CudaStream>,
        len: usize,
        bytes: usize,
    ) -> Result<Self, AllocFailure> {
        let slice = device.allocate(bytes, || stream.alloc_zeros::<Elem<T>>(len))?;
        Ok(CudaMemory { slice })
    }

    /// A copy of `data`, `bytes` in all.
    pub(crate) fn from_host(
        device: &CudaDevice,
        stream: &Arc<CudaStream>,
        data: &[T],
        bytes: usize,
    ) -> Result<Self, AllocFailure> {
        let slice = device.allocate(bytes, || stream.clone_htod(elems(data)))?;
        Ok(CudaMemory { slice })
    }

    /// The elements of a non-empty buffer, as a new vector (queued; the caller synchronizes).
    pub(crate) fn to_vec(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>> {
        let all = stream
            .clone_dtoh(&self.slice)
            .map_err(Error::driver("copying device to host"))?;
        Ok(unwrap_vec(all))
    }

    /// Overwrites a non-empty buffer with `data`, of its length. A pageable source is staged by the driver
    /// before this returns, so `data` may be reused.
    pub(crate) fn write(&mut self, stream: &Arc<CudaStream>, data: &[T]) -> Result<()> {
        stream
            .memcpy_htod(elems(data), &mut self.slice)
            .map_err(Error::driver("copying host to device"))
    }

    /// Copies a non-empty buffer into `out`, of its length (queued; the caller synchronizes).
    pub(crate) fn read(&self, stream: &Arc<CudaStream>, out: &mut [T]) -> Result<()> {
        stream
            .memcpy_dtoh(&self.slice, elems_mut(out))
            .map_err(Error::driver("copying device to host"))
    }

    /// Sets the first `len` elements to `value` (queued): one driver memset of the element's
    /// width, or for 8-byte elements one 4-byte memset when both halves of the pattern agree
    /// and otherwise two strided ones (every element's low words, then its high words).
    pub(crate) fn fill(&mut self, stream: &Arc<CudaStream>, len: usize, value: T) -> Result<()>
    where
        T: Scalar,
    {
        let len = len.min(self.slice.len());
        let bits = value.to_bits();
        stream
            .context()
            .bind_to_thread()
            .map_err(Error::driver("filling device memory"))?;
        let cu_stream = stream.cu_stream();
        let (ptr, _record) = self.slice.device_ptr_mut(stream);
        // SAFETY: `ptr` is this allocation's address, valid for `len <= slice.len()` elements of
        // `size_of::<T>()` bytes, aligned to them (driver allocations are 256-byte aligned);
        // each memset writes exactly those bytes, stream-ordered, and `_record` makes later
        // users of the buffer wait for them. Every bit pattern written is `value`'s, a valid T.
        let status = unsafe {
            match std::mem::size_of::<T>() {
                1 => sys::cuMemsetD8Async(ptr, bits as u8, len, cu_stream),
                2 => sys::cuMemsetD16Async(ptr, bits as u16, len, cu_stream),
                4 => sys::cuMemsetD32Async(ptr, bits as u32, len, cu_stream),
                _ => {
                    let (low, high) = (bits as u32, (bits >> 32) as u32);
                    if low == high {
                        sys::cuMemsetD32Async(ptr, low, 2 * len, cu_stream)
                    } else {
                        // A `len` x 1 array of 4-byte words with an 8-byte pitch: one word per
                        // element.
                        match sys::cuMemsetD2D32Async(ptr, 8, low, 1, len, cu_stream) {
                            sys::CUresult::CUDA_SUCCESS => {
                                sys::cuMemsetD2D32Async(ptr + 4, 8, high, 1, len, cu_stream)
                            }
                            failed => failed,
                        }
                    }
                }
            }
        };
        status
            .result()
            .map_err(Error::driver("filling device memory"))
    }

    /// Copies `src`, of this buffer's length, here (device to device, or peer to peer).
    pub(crate) fn copy_from(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &CudaMemory<T>,
    ) -> Result<()> {
        stream
            .memcpy_dtod(&src.slice, &mut self.slice)
            .map_err(Error::driver("copying device to device"))
    }

    /// Queues a copy from page-locked memory, ordered after earlier copies on it.
    pub(crate) fn copy_from_pinned(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &CudaPinned<T>,
    ) -> Result<()> {
        src.before_copy(stream)?;
        stream
            .memcpy_htod(&src.memory, &mut self.slice)
            .map_err(Error::driver("copying pinned host memory to device"))?;
        src.after_copy(stream)
    }

    /// Queues a copy into page-locked memory, ordered after earlier copies on it.
    pub(crate) fn copy_to_pinned(
        &self,
        stream: &Arc<CudaStream>,
        dst: &mut CudaPinned<T>,
    ) -> Result<()> {
        dst.before_copy(stream)?;
        stream
            .memcpy_dtoh(&self.slice, &mut dst.memory)
            .map_err(Error::driver("copying device to pinned host memory"))?;
        dst.after_copy(stream)
    }

    /// The device address, held for reading on `stream` until the guard drops.
    pub(crate) fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.slice.device_ptr(stream)
    }

    /// The device address of the first element, for descriptors that name it.
    pub(crate) fn address(&self) -> u64 {
        let (address, _read) = self.slice.device_ptr(self.slice.stream());
        address
    }

    /// The driver's tensor-map descriptor for `geometry` over this memory (checked by
    /// `TmaGeometry::new` against what the driver accepts).
    pub(crate) fn encode_tensor_map(&self, geometry: &TmaGeometry) -> Result<EncodedTensorMap> {
        use sys::CUtensorMapDataType as Data;
        let data = match geometry.elem_size {
            1 => Data::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            2 => Data::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            4 => Data::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            _ => Data::CU_TENSOR_MAP_DATA_TYPE_UINT64,
        };
        let swizzle = match geometry.swizzle {
            Swizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let dims = [geometry.cols, geometry.rows];
        let strides = [geometry.row_stride * geometry.elem_size as u64];
        let boxes = [geometry.box_cols, geometry.box_rows];
        let element_strides = [1u32, 1];
        let mut map = EncodedTensorMap(sys::CUtensorMap { opaque: [0; 16] });
        // SAFETY: every pointer names a live local array of the rank (2) the call is given,
        // `strides` the rank - 1 outer strides; the global address is this allocation's, which
        // holds the whole tensor (checked by TmaGeometry::new), and the call only writes `map`.
        let status = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map.0,
                data,
                2,
                self.address() as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        status
            .result()
            .map_err(Error::driver("encoding a tensor map"))?;
        Ok(map)
    }

    /// The device address, held for writing on `stream` until the guard drops.
    pub(crate) fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (u64, SyncOnDrop<'a>) {
        self.slice.device_ptr_mut(stream)
    }
}

/// A tensor-map descriptor as the driver encoded it: 128 bytes, 64-byte aligned, passed to a
/// kernel by value.
#[repr(transparent)]
pub(crate) struct EncodedTensorMap(sys::CUtensorMap);

// SAFETY: CUtensorMap is plain bytes (repr(C), align 64) that the driver reads as the kernel
// parameter's value; it holds no host pointers.
unsafe impl DeviceRepr for EncodedTensorMap {}

/// Device memory with its element type erased, as a launch pushes it.
pub(crate) trait LaunchMemory {
    /// Pushes the pointer as read-only, so cudarc records a read.
    fn push<'s>(&'s self, builder: &mut LaunchArgs<'s>);
    /// Pushes the pointer as written, so cudarc orders later readers after this launch.
    fn push_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>);
}

impl<T: Value> LaunchMemory for CudaMemory<T> {
    fn push<'s>(&'s self, builder: &mut LaunchArgs<'s>) {
        builder.arg(&self.slice);
    }

    fn push_mut<'s>(&'s mut self, builder: &mut LaunchArgs<'s>) {
        builder.arg(&mut self.slice);
    }
}

/// Page-locked host memory registered with a CUDA context.
pub(crate) struct CudaPinned<T: Value> {
    // Holds max(len, 1) elements: the driver may refuse zero-byte host allocations.
    memory: PinnedHostSlice<Elem<T>>,
    // Recorded after every copy queued on this memory. cudarc's own event in PinnedHostSlice
    // is only recorded once a context has several streams, so a copy on the lone default
    // stream would otherwise not be waited for.
    done: CudaEvent,
}

impl<T: Value> CudaPinned<T> {
    /// `alloc_len` zeroed elements; the caller checked that their size does not overflow.
    pub(crate) fn zeroed(ctx: &Arc<CudaContext>, alloc_len: usize) -> Result<Self> {
        // Plain page-locked memory (flags 0), not write-combined: results copied back are read
        // by the host, and write-combined memory is very slow to read.
        // SAFETY: the memory is uninitialised until zeroed below, and nothing reads it first.
        let mut memory = unsafe { ctx.alloc_pinned_with_flags::<Elem<T>>(alloc_len, 0) }
            .map_err(Error::driver("allocating page-locked host memory"))?;
        let ptr = memory
            .as_mut_ptr()
            .map_err(Error::driver("allocating page-locked host memory"))?;
        // SAFETY: `ptr` points to `alloc_len` properly aligned elements just allocated for us and
        // not shared; all-zero bytes are a valid `T` (Elem's ValidAsZeroBits).
        unsafe { ptr.write_bytes(0, alloc_len) };
        let done = ctx
            .new_event(None)
            .map_err(Error::driver("creating an event for pinned memory"))?;
        Ok(CudaPinned { memory, done })
    }

    /// The first `len` elements, after waiting for copies into them.
    pub(crate) fn as_slice(&self, len: usize) -> Result<&[T]> {
        let all = self
            .memory
            .as_slice()
            .map_err(Error::driver("waiting for copies into pinned memory"))?;
        let all = &all[..len];
        // SAFETY: Elem<T> is repr(transparent) over T.
        Ok(unsafe { std::slice::from_raw_parts(all.as_ptr().cast(), len) })
    }

    /// The first `len` elements, mutably, after waiting for copies out of them.
    pub(crate) fn as_mut_slice(&mut self, len: usize) -> Result<&mut [T]> {
        let all = self
            .memory
            .as_mut_slice()
            .map_err(Error::driver("waiting for copies out of pinned memory"))?;
        let all = &mut all[..len];
        // SAFETY: Elem<T> is repr(transparent) over T; the exclusive borrow carries over.
        Ok(unsafe { std::slice::from_raw_parts_mut(all.as_mut_ptr().cast(), len) })
    }

    /// Blocks until every copy queued on this memory has finished.
    pub(crate) fn wait(&self) -> Result<()> {
        self.done
            .synchronize()
            .map_err(Error::driver("waiting for copies on pinned memory"))
    }

    /// Orders a copy about to be queued on `stream` after earlier copies on any stream.
    fn before_copy(&self, stream: &CudaStream) -> Result<()> {
        stream
            .wait(&self.done)
            .map_err(Error::driver("ordering a copy after earlier pinned copies"))
    }

    /// Marks the copy just queued on `stream`, so host views wait for it.
    fn after_copy(&self, stream: &CudaStream) -> Result<()> {
        self.done
            .record(stream)
            .map_err(Error::driver("recording a pinned copy"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_full_device_is_out_of_memory() {
        let full = DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(matches!(alloc_failure(full, 64), AllocFailure::OutOfMemory));
        let invalid = DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE);
        match alloc_failure(invalid, 64) {
            AllocFailure::Other(Error::Alloc { bytes, source }) => {
                assert_eq!(bytes, 64);
                assert_eq!(source.name, "CUDA_ERROR_INVALID_VALUE");
            }
            other => panic!("expected Error::Alloc, got {other:?}"),
        }
    }
}
