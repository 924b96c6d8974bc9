//! cuBLAS matrix multiply on row-major device memory, behind [`crate::blas::Blas`]: the
//! reference the library's GEMM kernels are measured against. libcublas is loaded on first
//! use; without it, creating a handle returns [`Error::NoCublas`].
//!
//! cuBLAS is column-major. A row-major m×n C is a column-major n×m Cᵀ, and
//! Cᵀ = op(B)ᵀ·op(A)ᵀ, so each call passes B as cuBLAS's first operand and A as its second,
//! with the shapes swapped and the same transpose flags.

use std::ffi::c_int;
use std::sync::Arc;

use cudarc::cublas::{result, sys, CudaBlas};
use cudarc::driver::CudaStream;
use half::{bf16, f16};

use crate::core::error::{Error, Result};
use crate::core::scalar::Scalar;
use crate::cuda::loader::{guarded, Library};
use crate::cuda::memory::CudaMemory;
use crate::cuda::stream::CudaQueue;

/// A row-major `C = alpha·op(A)·op(B) + beta·C`: op(A) is m×k (A stored k×m when
/// transposed), op(B) k×n (B stored n×k when transposed), C m×n.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmShape {
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// Whether A is used transposed.
    pub trans_a: bool,
    /// Whether B is used transposed.
    pub trans_b: bool,
    /// The product's scale.
    pub alpha: f32,
    /// The scale of C's old value.
    pub beta: f32,
}

/// Input types of [`crate::blas::Blas::gemm_ex_row_major`]: cuBLAS's name for each.
pub trait BlasInput: Scalar {
    /// The `cudaDataType` cuBLAS knows this type by.
    #[doc(hidden)]
    fn data_type() -> sys::cudaDataType;
}

impl BlasInput for f32 {
    fn data_type() -> sys::cudaDataType {
        sys::cudaDataType::CUDA_R_32F
    }
}

impl BlasInput for f16 {
    fn data_type() -> sys::cudaDataType {
        sys::cudaDataType::CUDA_R_16F
    }
}

impl BlasInput for bf16 {
    fn data_type() -> sys::cudaDataType {
        sys::cudaDataType::CUDA_R_16BF
    }
}

/// A cuBLAS handle bound to one stream.
pub(crate) struct CublasHandle {
    handle: CudaBlas,
}

/// Maps a cuBLAS status to the runtime's error.
fn blas_error(context: &'static str) -> impl FnOnce(result::CublasError) -> Error {
    move |e| Error::Blas {
        context,
        status: format!("{:?}", e.0),
    }
}

/// A dimension as cuBLAS's `int`, or an error naming it.
fn dim(what: &'static str, value: usize) -> Result<c_int> {
    c_int::try_from(value).map_err(|_| {
        Error::InvalidLaunch(format!(
            "cuBLAS: {what} = {value} does not fit cuBLAS's 32-bit int"
        ))
    })
}

impl CublasHandle {
    /// A handle whose calls run on `queue`; fails where libcublas cannot be loaded.
    pub(crate) fn new(queue: &CudaQueue) -> Result<CublasHandle> {
        let cuda: Arc<CudaStream> = Arc::clone(&queue.stream);
        let handle = guarded(Library::Cublas, || {
            CudaBlas::new(cuda).map_err(blas_error("creating a handle"))
        })?;
        Ok(CublasHandle { handle })
    }

    /// `C = alpha·op(A)·op(B) + beta·C` in f32 with cuBLAS's SGEMM (no TF32).
    pub(crate) fn sgemm_row_major(
        &self,
        queue: &CudaQueue,
        shape: &GemmShape,
        a: &CudaMemory<f32>,
        b: &CudaMemory<f32>,
        c: &mut CudaMemory<f32>,
    ) -> Result<()> {
        self.run(queue, shape, a, b, c, |handle, args| {
            // SAFETY: `run` passes pointers to live device allocations of the lengths the shape
            // needs (checked by the caller), on the handle's stream, with leading dimensions that match
            // the row-major layout; alpha and beta point to host f32s that outlive the call.
            unsafe {
                result::sgemm(
                    handle,
                    args.op_first,
                    args.op_second,
                    args.m,
                    args.n,
                    args.k,
                    &shape.alpha,
                    args.first as *const f32,
                    args.ld_first,
                    args.second as *const f32,
                    args.ld_second,
                    &shape.beta,
                    args.c as *mut f32,
                    args.ldc,
                )
            }
        })
    }

    /// `C = alpha·op(A)·op(B) + beta·C` with `cublasGemmEx`: `T` inputs (f16 and bf16 on the
    /// tensor cores), f32 output and f32 accumulation.
    pub(crate) fn gemm_ex_row_major<T: BlasInput>(
        &self,
        queue: &CudaQueue,
        shape: &GemmShape,
        a: &CudaMemory<T>,
        b: &CudaMemory<T>,
        c: &mut CudaMemory<f32>,
    ) -> Result<()> {
        let compute = sys::cublasComputeType_t::CUBLAS_COMPUTE_32F;
        self.gemm_ex(queue, shape, a, b, c, compute)
    }

    /// `C = alpha·op(A)·op(B) + beta·C` in f32 with cuBLAS allowed to read the inputs as TF32
    /// on the tensor cores (`CUBLAS_COMPUTE_32F_FAST_TF32`), f32 accumulation.
    pub(crate) fn gemm_tf32_row_major(
        &self,
        queue: &CudaQueue,
        shape: &GemmShape,
        a: &CudaMemory<f32>,
        b: &CudaMemory<f32>,
        c: &mut CudaMemory<f32>,
    ) -> Result<()> {
        let compute = sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32;
        self.gemm_ex(queue, shape, a, b, c, compute)
    }

    /// `cublasGemmEx` with `T` inputs, f32 output, and `compute` (an f32 compute type).
    fn gemm_ex<T: BlasInput>(
        &self,
        queue: &CudaQueue,
        shape: &GemmShape,
        a: &CudaMemory<T>,
        b: &CudaMemory<T>,
        c: &mut CudaMemory<f32>,
        compute: sys::cublasComputeType_t,
    ) -> Result<()> {
        self.run(queue, shape, a, b, c, |handle, args| {
            // SAFETY: as in `sgemm_row_major`; the data types name the buffers' element types
            // (T for the inputs, f32 for C), and alpha/beta are f32 as the f32 compute types
            // (`CUBLAS_COMPUTE_32F` and its `_FAST_TF32` form, the only ones passed) need.
            unsafe {
                result::gemm_ex(
                    handle,
                    args.op_first,
                    args.op_second,
                    args.m,
                    args.n,
                    args.k,
                    &shape.alpha as *const f32 as *const _,
                    args.first as *const _,
                    T::data_type(),
                    args.ld_first,
                    args.second as *const _,
                    T::data_type(),
                    args.ld_second,
                    &shape.beta as *const f32 as *const _,
                    args.c as *mut _,
                    sys::cudaDataType::CUDA_R_32F,
                    args.ldc,
                    compute,
                    sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        })
    }

    /// Translates the row-major shape (whose buffer lengths the caller checked, and whose C is
    /// not empty) to cuBLAS's column-major call, and runs `call` with the device pointers held
    /// for the duration.
    fn run<T: Scalar>(
        &self,
        queue: &CudaQueue,
        shape: &GemmShape,
        a: &CudaMemory<T>,
        b: &CudaMemory<T>,
        c: &mut CudaMemory<f32>,
        call: impl FnOnce(sys::cublasHandle_t, CallArgs) -> Result<(), result::CublasError>,
    ) -> Result<()> {
        let (m, n, k) = (dim("m", shape.m)?, dim("n", shape.n)?, dim("k", shape.k)?);
        let op = |t: bool| {
            if t {
                sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let cuda = &queue.stream;
        let (a_ptr, _a_sync) = a.device_ptr(cuda);
        let (b_ptr, _b_sync) = b.device_ptr(cuda);
        let (c_ptr, _c_sync) = c.device_ptr_mut(cuda);
        let args = CallArgs {
            op_first: op(shape.trans_b),
            op_second: op(shape.trans_a),
            m: n,
            n: m,
            k,
            first: b_ptr,
            ld_first: if shape.trans_b { k } else { n },
            second: a_ptr,
            ld_second: if shape.trans_a { m } else { k },
            c: c_ptr,
            ldc: n,
        };
        // k = 0 is valid for cuBLAS (C = beta·C), but a zero leading dimension is not.
        let args = CallArgs {
            ld_first: args.ld_first.max(1),
            ld_second: args.ld_second.max(1),
            ..args
        };
        // cuBLAS launches into the calling thread's current context.
        cuda.context()
            .bind_to_thread()
            .map_err(Error::driver("binding the context for cuBLAS"))?;
        guarded(Library::Cublas, || {
            call(*self.handle.handle(), args).map_err(blas_error("running a GEMM"))
        })
    }
}

/// One column-major cuBLAS GEMM call: `first` is cuBLAS's A (our B), `second` its B (our A).
#[derive(Clone, Copy)]
struct CallArgs {
    op_first: sys::cublasOperation_t,
    op_second: sys::cublasOperation_t,
    m: c_int,
    n: c_int,
    k: c_int,
    first: u64,
    ld_first: c_int,
    second: u64,
    ld_second: c_int,
    c: u64,
    ldc: c_int,
}
