//! `TensorMap`: a buffer described for Hopper's tensor copies (`tma_load_2d`), passed to a
//! kernel parameter `&TensorMap<T>`.

use crate::buffer::{DeviceBuffer, LaunchSlice};
use crate::core::backend::Backend;
use crate::core::error::{Error, Result};
use crate::core::scalar::{Scalar, ScalarType};
use crate::core::tensor_map::TmaGeometry;
use crate::cuda::memory::EncodedTensorMap;
use crate::device::Gpu;
use crate::dispatch::MemoryImpl;

pub use crate::core::tensor_map::Swizzle;

/// A two-dimensional view of a buffer (`rows` rows of `cols` elements, `row_stride` elements
/// apart) that kernels copy into shared memory a box at a time with `tma_load_2d`; elements
/// outside the tensor arrive as zeros. The map borrows the buffer, so the buffer outlives every
/// launch given the map and cannot be written while the map is alive.
pub struct TensorMap<'a, T: Scalar> {
    buffer: &'a DeviceBuffer<T>,
    geometry: TmaGeometry,
    /// The driver's descriptor (CUDA backend only).
    encoded: Option<EncodedTensorMap>,
}

impl<'a, T: Scalar> TensorMap<'a, T> {
    /// Describes `buffer` as `rows` × `cols` elements, rows `row_stride` elements apart, read in
    /// boxes of `box_rows` × `box_cols` that land in shared memory with `swizzle`. Fails when
    /// the driver would refuse the map (strides and box rows a multiple of 16 bytes, boxes at
    /// most 256 × 256 and a row no wider than the swizzle's span), when the rows do not fit in
    /// the buffer, and on a GPU without tensor copies (compute capability below 9.0).
    pub fn new_2d(
        buffer: &'a DeviceBuffer<T>,
        [rows, cols]: [usize; 2],
        row_stride: usize,
        [box_rows, box_cols]: [u32; 2],
        swizzle: Swizzle,
    ) -> Result<Self> {
        let address = match buffer.memory() {
            MemoryImpl::Cuda(memory) => {
                let (major, minor) = buffer.gpu().compute_capability();
                if major < 9 {
                    return Err(Error::InvalidTensorMap {
                        reason: format!(
                            "tensor copies need compute capability 9.0 (Hopper) or newer; \
                             this GPU is {major}.{minor}"
                        ),
                    });
                }
                memory.address() as usize
            }
            MemoryImpl::Host(_) => buffer.host_ptr().map_or(0, |ptr| ptr as usize),
        };
        let geometry = TmaGeometry::new(
            T::TYPE.size(),
            address,
            buffer.len(),
            [rows, cols],
            row_stride,
            [box_rows, box_cols],
            swizzle,
        )?;
        let encoded = match buffer.memory() {
            MemoryImpl::Cuda(memory) => Some(memory.encode_tensor_map(&geometry)?),
            MemoryImpl::Host(_) => None,
        };
        Ok(TensorMap {
            buffer,
            geometry,
            encoded,
        })
    }

    /// Bytes one box fills in shared memory (out-of-bounds elements included): what a kernel
    /// announces with `mbarrier_arrive_expect_tx` for each copy.
    pub fn box_bytes(&self) -> u32 {
        self.geometry.box_bytes()
    }

    /// The device the buffer lives on.
    pub fn gpu(&self) -> &Gpu {
        self.buffer.gpu()
    }
}

/// A tensor map with its element type erased, as a launch argument sees it.
pub(crate) trait LaunchTensorMap {
    /// The element type.
    fn elem(&self) -> ScalarType;
    /// The buffer it reads.
    fn buffer(&self) -> &dyn LaunchSlice;
    /// Its geometry.
    fn geometry(&self) -> TmaGeometry;
    /// The driver's descriptor, `None` on the CPU backend.
    fn encoded(&self) -> Option<&EncodedTensorMap>;
}

impl<T: Scalar> LaunchTensorMap for TensorMap<'_, T> {
    fn elem(&self) -> ScalarType {
        T::TYPE
    }

    fn buffer(&self) -> &dyn LaunchSlice {
        self.buffer
    }

    fn geometry(&self) -> TmaGeometry {
        self.geometry
    }

    fn encoded(&self) -> Option<&EncodedTensorMap> {
        self.encoded.as_ref()
    }
}

/// Fails unless the map lives on the backend expected.
pub(crate) fn cuda_map<'m>(
    map: &'m dyn LaunchTensorMap,
    kernel: &str,
) -> Result<&'m EncodedTensorMap> {
    map.encoded().ok_or_else(|| Error::WrongBackend {
        what: format!("a tensor map argument of kernel `{kernel}`"),
        expected: Backend::Cuda,
        found: Backend::Cpu,
    })
}

impl<T: Scalar> std::fmt::Debug for TensorMap<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorMap")
            .field("buffer", self.buffer)
            .field("geometry", &self.geometry)
            .finish()
    }
}
