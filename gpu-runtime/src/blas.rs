//! cuBLAS matrix multiply on row-major buffers: the reference the library's GEMM kernels are
//! measured against. libcublas is loaded on first use; without it, [`Blas::new`] returns
//! [`Error::NoCublas`].

use crate::buffer::{check_len, DeviceBuffer};
use crate::core::error::{Error, Result};
use crate::core::scalar::Scalar;
use crate::cuda::blas::CublasHandle;
pub use crate::cuda::blas::{BlasInput, GemmShape};
use crate::cuda::memory::CudaMemory;
use crate::cuda::stream::CudaQueue;
use crate::stream::Stream;

/// A cuBLAS handle bound to one stream.
pub struct Blas {
    handle: CublasHandle,
    stream: Stream,
}

impl std::fmt::Debug for Blas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blas({:?})", self.stream)
    }
}

/// What a GEMM runs on once its buffers are checked: the CUDA stream and memory.
type CudaOperands<'a, T> = (
    &'a CudaQueue,
    &'a CudaMemory<T>,
    &'a CudaMemory<T>,
    &'a mut CudaMemory<f32>,
);

impl Blas {
    /// A handle whose calls run on `stream`; fails on the CPU backend and where libcublas
    /// cannot be loaded.
    pub fn new(stream: &Stream) -> Result<Blas> {
        let queue = stream
            .queue
            .cuda()
            .ok_or(Error::CudaOnly { what: "cuBLAS" })?;
        Ok(Blas {
            handle: CublasHandle::new(queue)?,
            stream: stream.clone(),
        })
    }

    /// `C = alpha·op(A)·op(B) + beta·C` in f32 with cuBLAS's SGEMM (no TF32).
    pub fn sgemm_row_major(
        &self,
        shape: &GemmShape,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        match self.operands(shape, a, b, c)? {
            Some((queue, a, b, c)) => self.handle.sgemm_row_major(queue, shape, a, b, c),
            None => Ok(()),
        }
    }

    /// `C = alpha·op(A)·op(B) + beta·C` with `cublasGemmEx`: `T` inputs (f16 and bf16 on the
    /// tensor cores), f32 output and f32 accumulation.
    pub fn gemm_ex_row_major<T: BlasInput>(
        &self,
        shape: &GemmShape,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        match self.operands(shape, a, b, c)? {
            Some((queue, a, b, c)) => self.handle.gemm_ex_row_major(queue, shape, a, b, c),
            None => Ok(()),
        }
    }

    /// `C = alpha·op(A)·op(B) + beta·C` for f32 buffers with cuBLAS allowed to read the inputs
    /// as TF32 on the tensor cores (`CUBLAS_COMPUTE_32F_FAST_TF32`, what PyTorch's
    /// `allow_tf32` lets cuBLAS do), f32 accumulation.
    pub fn gemm_tf32_row_major(
        &self,
        shape: &GemmShape,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        match self.operands(shape, a, b, c)? {
            Some((queue, a, b, c)) => self.handle.gemm_tf32_row_major(queue, shape, a, b, c),
            None => Ok(()),
        }
    }

    /// Checks the buffers against the stream and the shape; `None` when C is empty and there
    /// is nothing to do.
    fn operands<'a, T: Scalar>(
        &'a self,
        shape: &GemmShape,
        a: &'a DeviceBuffer<T>,
        b: &'a DeviceBuffer<T>,
        c: &'a mut DeviceBuffer<f32>,
    ) -> Result<Option<CudaOperands<'a, T>>> {
        let stream = &self.stream;
        a.check_stream(stream)?;
        b.check_stream(stream)?;
        c.check_stream(stream)?;
        // An overflowing product matches no buffer length, so it fails as a mismatch.
        let len = |rows: usize, cols: usize| rows.saturating_mul(cols);
        check_len(
            "cuBLAS gemm: A, m·k elements",
            len(shape.m, shape.k),
            a.len(),
        )?;
        check_len(
            "cuBLAS gemm: B, k·n elements",
            len(shape.k, shape.n),
            b.len(),
        )?;
        check_len(
            "cuBLAS gemm: C, m·n elements",
            len(shape.m, shape.n),
            c.len(),
        )?;
        if shape.m == 0 || shape.n == 0 {
            return Ok(None);
        }
        let missing = || Error::CudaOnly { what: "cuBLAS" };
        let queue = stream.queue.cuda().ok_or_else(missing)?;
        let a = a.cuda_memory().ok_or_else(missing)?;
        let b = b.cuda_memory().ok_or_else(missing)?;
        let c = c.cuda_memory_mut().ok_or_else(missing)?;
        Ok(Some((queue, a, b, c)))
    }
}
