//! Matrix multiply, `C = alpha·op(A)·op(B) + beta·C`, with row-major matrices: `f32` inputs on
//! the CUDA cores, `f16` and `bf16` inputs on the tensor cores; C and the accumulation are
//! always `f32`. `f32` inputs run on the tensor cores as TF32 when the caller allows it
//! ([`Gemm::allow_tf32`], see [`tf32`] for the precision), on Hopper and the CPU backend.
//!
//! ```no_run
//! use gpu_dsl_kernels::gemm::{gemm, Gemm};
//! use gpu_dsl_runtime::{DeviceBuffer, Gpu};
//!
//! fn main() -> gpu_dsl_runtime::Result<()> {
//!     let stream = Gpu::best()?.default_stream();
//!     // [1 2; 3 4] · [5 6; 7 8]
//!     let a = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0, 4.0])?;
//!     let b = DeviceBuffer::from_host(&stream, &[5.0f32, 6.0, 7.0, 8.0])?;
//!     let mut c = DeviceBuffer::zeroed(&stream, 4)?;
//!     gemm(&stream, &Gemm::new(2, 2, 2), &a, &b, &mut c)?;
//!     assert_eq!(c.to_host(&stream)?, [19.0, 22.0, 43.0, 50.0]);
//!     Ok(())
//! }
//! ```

mod simt;
mod simt_small;
pub mod tensor_core;
pub mod tf32;
mod tf32_rs;
mod tma;

use gpu_dsl_macros::{device, kernel};
use gpu_dsl_runtime::half::{bf16, f16};
use gpu_dsl_runtime::{DeviceBuffer, Error, Kernel, Result, Scalar, Stream, TemplateArg};

/// Whether an operand is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    /// Used as stored.
    No,
    /// Used transposed.
    Yes,
}

/// C = alpha·op(A)·op(B) + beta·C, all row-major. op(A) is m×k (A stored m×k, or k×m when
/// transposed), op(B) is k×n (B stored k×n, or n×k when transposed), C m×n.
#[derive(Clone, Copy, Debug)]
pub struct Gemm {
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// Whether A is used transposed.
    pub trans_a: Transpose,
    /// Whether B is used transposed.
    pub trans_b: Transpose,
    /// The product's scale.
    pub alpha: f32,
    /// The scale of C's old value; 0 means C is only written, never read (as in BLAS).
    pub beta: f32,
    /// Whether `f32` inputs may be multiplied as TF32 on the tensor cores (see
    /// [`Gemm::allow_tf32`]); false by default.
    pub tf32: bool,
}

impl Gemm {
    /// `C = A·B` for an m×k A and a k×n B: no transposes, alpha 1, beta 0.
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        Gemm {
            m,
            n,
            k,
            trans_a: Transpose::No,
            trans_b: Transpose::No,
            alpha: 1.0,
            beta: 0.0,
            tf32: false,
        }
    }

    /// Uses A transposed: A is stored k×m.
    pub fn trans_a(mut self) -> Self {
        self.trans_a = Transpose::Yes;
        self
    }

    /// Uses B transposed: B is stored n×k.
    pub fn trans_b(mut self) -> Self {
        self.trans_b = Transpose::Yes;
        self
    }

    /// Sets the product's scale.
    pub fn alpha(mut self, alpha: f32) -> Self {
        self.alpha = alpha;
        self
    }

    /// Sets the scale of C's old value.
    pub fn beta(mut self, beta: f32) -> Self {
        self.beta = beta;
        self
    }

    /// Lets an `f32` GEMM run on the tensor cores with its inputs read as TF32 (10 mantissa
    /// bits, truncated; `f32` accumulation), as `torch.backends.cuda.matmul.allow_tf32` does:
    /// several times faster, and each element of C off by about `2^-11 · sqrt(k) · rms(a·b)`
    /// (about 2^-11 of C for inputs of random sign), at most `2^-9 · Σ|a·b|`, where exact
    /// `f32` is off by about `2^-24 · sqrt(k) · rms(a·b)` (see [`tf32`]). It applies where the
    /// TF32 kernel runs: a compute capability 9.0 GPU or the CPU backend, with every row of A
    /// and B starting on a 16-byte boundary (its stored row length a multiple of 4 elements);
    /// elsewhere the GEMM stays exact `f32` on the CUDA cores. On the CPU backend the TF32
    /// kernel runs too, so results match a Hopper GPU's (it is slower there than the `f32`
    /// path: the tensor cores are emulated). The 16-bit inputs ignore it.
    pub fn allow_tf32(mut self) -> Self {
        self.tf32 = true;
        self
    }

    /// Floating-point operations of one run, counting a multiply-add as two.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

impl From<&Gemm> for gpu_dsl_runtime::blas::GemmShape {
    /// The same multiply, for the cuBLAS reference.
    fn from(spec: &Gemm) -> Self {
        gpu_dsl_runtime::blas::GemmShape {
            m: spec.m,
            n: spec.n,
            k: spec.k,
            trans_a: spec.trans_a == Transpose::Yes,
            trans_b: spec.trans_b == Transpose::Yes,
            alpha: spec.alpha,
            beta: spec.beta,
        }
    }
}

mod sealed {
    /// Keeps [`super::GemmInput`] to the types the module has kernels for.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for super::f16 {}
    impl Sealed for super::bf16 {}
}

/// Input element types: f32 (CUDA cores), f16 and bf16 (tensor cores, f32 accumulate); C is
/// always f32.
pub trait GemmInput: Scalar + sealed::Sealed {
    /// Runs a validated, non-empty `spec` with this type's kernels.
    #[doc(hidden)]
    fn launch_gemm(
        stream: &Stream,
        spec: &Gemm,
        a: &DeviceBuffer<Self>,
        b: &DeviceBuffer<Self>,
        c: &mut DeviceBuffer<f32>,
        scratch: &mut GemmScratch,
    ) -> Result<()>;
}

impl GemmInput for f32 {
    fn launch_gemm(
        stream: &Stream,
        spec: &Gemm,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
        scratch: &mut GemmScratch,
    ) -> Result<()> {
        if spec.tf32 && tf32::runs(stream, spec) {
            return tf32::gemm_tf32(stream, spec, a, b, c);
        }
        simt::gemm_f32(stream, spec, a, b, c, scratch)
    }
}

impl GemmInput for f16 {
    fn launch_gemm(
        stream: &Stream,
        spec: &Gemm,
        a: &DeviceBuffer<f16>,
        b: &DeviceBuffer<f16>,
        c: &mut DeviceBuffer<f32>,
        _scratch: &mut GemmScratch,
    ) -> Result<()> {
        tensor_core::gemm_f16(stream, spec, a, b, c)
    }
}

impl GemmInput for bf16 {
    fn launch_gemm(
        stream: &Stream,
        spec: &Gemm,
        a: &DeviceBuffer<bf16>,
        b: &DeviceBuffer<bf16>,
        c: &mut DeviceBuffer<f32>,
        _scratch: &mut GemmScratch,
    ) -> Result<()> {
        tensor_core::gemm_bf16(stream, spec, a, b, c)
    }
}

/// `C = alpha·op(A)·op(B) + beta·C` as described by `spec`, on `stream`.
///
/// Fails with [`Error::LengthMismatch`] when a buffer's length does not match the shape. With
/// m or n zero there is nothing to do; with k zero (or alpha zero) C becomes beta·C, and A and
/// B are not read. Shapes with few tiles of C and a long k may allocate temporary memory for
/// partial products; inside [`Stream::capture`] use [`gemm_with_scratch`] instead.
pub fn gemm<T: GemmInput>(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    gemm_with_scratch(stream, spec, a, b, c, &mut GemmScratch::new())
}

/// Memory for the partial products of a split-k GEMM, kept between calls.
///
/// A captured graph replays kernels with the pointers they had when captured, so memory they use
/// must outlive the graph: keep one `GemmScratch` per product in the step, and run the step once
/// before capturing it so that each has grown to its size (it only ever grows).
#[derive(Debug, Default)]
pub struct GemmScratch {
    partials: Option<DeviceBuffer<f32>>,
}

impl GemmScratch {
    /// No memory yet; the first call that splits k allocates it.
    pub fn new() -> Self {
        GemmScratch::default()
    }

    /// At least `len` elements, allocated only when the memory held is smaller.
    pub(crate) fn partials(
        &mut self,
        stream: &Stream,
        len: usize,
    ) -> Result<&mut DeviceBuffer<f32>> {
        if self.partials.as_ref().is_none_or(|p| p.len() < len) {
            self.partials = Some(DeviceBuffer::zeroed(stream, len)?);
        }
        match &mut self.partials {
            Some(partials) => Ok(partials),
            None => Err(Error::InvalidLaunch("gemm: scratch memory missing".into())),
        }
    }
}

/// [`gemm`] with its temporary memory in `scratch`, reused across calls (and graph replays).
pub fn gemm_with_scratch<T: GemmInput>(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<f32>,
    scratch: &mut GemmScratch,
) -> Result<()> {
    if prepare(stream, spec, a, b, c)? {
        T::launch_gemm(stream, spec, a, b, c, scratch)?;
    }
    Ok(())
}

/// Which tile configuration [`gemm_f32_with_tiles`] uses.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiles {
    /// Chosen from the shape, as [`gemm`] does.
    Auto,
    /// 32×32 tiles of C per block.
    Small,
    /// 32×32 tiles, k split in as many slices of at least 128 as it has (at most 64).
    SmallSplitK,
    /// 64×64 tiles of C per block.
    Medium,
    /// 128×128 tiles of C per block.
    Large,
}

/// [`gemm`] for `f32` with a forced tile configuration, so tests cover both on any device.
#[doc(hidden)]
pub fn gemm_f32_with_tiles(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
    tiles: Tiles,
) -> Result<()> {
    if prepare(stream, spec, a, b, c)? {
        simt::gemm_f32_tiles(stream, spec, a, b, c, tiles, &mut GemmScratch::new())?;
    }
    Ok(())
}

/// Checks the buffers against the shape and handles the cases without a product (an empty C,
/// k or alpha zero); true when the product kernel still has to run.
fn prepare<T: Scalar>(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<f32>,
) -> Result<bool> {
    let elements = |what: &str, rows: usize, cols: usize| {
        rows.checked_mul(cols).ok_or_else(|| {
            Error::InvalidLaunch(format!(
                "gemm: {what} would have {rows}×{cols} elements, more than memory can address"
            ))
        })
    };
    let a_len = elements("A", spec.m, spec.k)?;
    let b_len = elements("B", spec.k, spec.n)?;
    let c_len = elements("C", spec.m, spec.n)?;
    crate::map::same_len("gemm: A, m·k elements", a_len, a.len())?;
    crate::map::same_len("gemm: B, k·n elements", b_len, b.len())?;
    crate::map::same_len("gemm: C, m·n elements", c_len, c.len())?;
    if c_len == 0 {
        return Ok(false);
    }
    if spec.k == 0 || spec.alpha == 0.0 {
        let config = crate::map::grid_stride_config(stream, c_len);
        scale_by_beta::launch(stream, config, spec.beta, c)?;
        return Ok(false);
    }
    Ok(true)
}

/// The block row of block `pid` when blocks run in groups of `group` block rows that sweep the
/// block columns together, so the rows of a group share B's columns in L2.
#[device]
fn grouped_block_row(pid: usize, grid_m: usize, grid_n: usize, group: usize) -> usize {
    let per_group = group * grid_n;
    let first = (pid / per_group) * group;
    let rows = (grid_m - first).min(group);
    first + (pid % per_group) % rows
}

/// The block column of block `pid` in the order of [`grouped_block_row`].
#[device]
fn grouped_block_col(pid: usize, grid_m: usize, grid_n: usize, group: usize) -> usize {
    let per_group = group * grid_n;
    let first = (pid / per_group) * group;
    let rows = (grid_m - first).min(group);
    (pid % per_group) / rows
}

/// `c = beta·c`, where beta = 0 writes zeros even over NaN (C is not read, as in BLAS).
#[kernel]
fn scale_by_beta(beta: f32, c: &mut [f32]) {
    for i in (global_idx().x..c.len()).step_by(grid_size().x) {
        c[i] = if beta == 0.0 { 0.0 } else { beta * c[i] };
    }
}

/// Every kernel instantiation this module launches, for compiling them all ahead of time; the
/// kernels without template arguments are also in `all_kernels()`.
pub fn instantiations() -> Vec<(&'static Kernel, Vec<TemplateArg>)> {
    let mut all: Vec<_> = kernels().into_iter().map(|k| (k, Vec::new())).collect();
    all.extend(simt::instantiations());
    all.extend(tensor_core::instantiations());
    all.extend(tf32::instantiations());
    all
}

/// The kernels of this module that take no template arguments.
pub(crate) fn kernels() -> Vec<&'static Kernel> {
    let mut all = vec![&scale_by_beta::KERNEL];
    all.extend_from_slice(simt::KERNELS);
    all.extend_from_slice(tensor_core::KERNELS);
    all.extend_from_slice(tf32_rs::KERNELS);
    all
}
