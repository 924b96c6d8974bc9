//! Element-wise kernels: built-in operations on `f32` buffers, and
//! [`elementwise!`](crate::elementwise!) for your own.
//!
//! Each thread walks the data with a grid-stride loop, so one launch of a grid sized to the
//! device covers any length. The built-ins move four elements per 16-byte load and store (device
//! buffers are 256-byte aligned), with a scalar loop for the tail.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{Block, DeviceBuffer, Error, Grid, LaunchConfig, Result, Stream};

/// Threads per block for the element-wise kernels.
pub const THREADS: u32 = 256;
/// Blocks per multiprocessor: enough resident warps to hide memory latency.
const BLOCKS_PER_SM: u32 = 8;

/// `y = a * x + y`.
#[kernel]
fn axpy_f32(a: f32, x: &[f32], y: &mut [f32]) {
    let n = y.len();
    let vectors = n / 4;
    for v in (global_idx().x..vectors).step_by(grid_size().x) {
        let xs = x.load4(v * 4);
        let mut ys = y.load4(v * 4);
        for k in 0..4 {
            ys[k] = a.mul_add(xs[k], ys[k]);
        }
        y.store4(v * 4, ys);
    }
    for i in (vectors * 4 + global_idx().x..n).step_by(grid_size().x) {
        y[i] = a.mul_add(x[i], y[i]);
    }
}

/// The binary built-ins.
#[gpu_dsl_macros::device]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum BinaryOp {
    Add,
    Mul,
}

/// The unary built-ins; `a` is the scale factor of `Scale`.
#[gpu_dsl_macros::device]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum UnaryOp {
    Scale,
    Relu,
    Sigmoid,
}

/// `out = op(x, y)` for the binary built-ins.
#[kernel]
fn binary_f32(op: BinaryOp, x: &[f32], y: &[f32], out: &mut [f32]) {
    let n = out.len();
    let vectors = n / 4;
    for v in (global_idx().x..vectors).step_by(grid_size().x) {
        let xs = x.load4(v * 4);
        let ys = y.load4(v * 4);
        let mut os = [0.0f32; 4];
        for k in 0..4 {
            os[k] = if op == BinaryOp::Add {
                xs[k] + ys[k]
            } else {
                xs[k] * ys[k]
            };
        }
        out.store4(v * 4, os);
    }
    for i in (vectors * 4 + global_idx().x..n).step_by(grid_size().x) {
        out[i] = if op == BinaryOp::Add {
            x[i] + y[i]
        } else {
            x[i] * y[i]
        };
    }
}

/// `x = op(x)` for the unary built-ins.
#[kernel]
fn unary_f32(op: UnaryOp, a: f32, x: &mut [f32]) {
    let n = x.len();
    let vectors = n / 4;
    for v in (global_idx().x..vectors).step_by(grid_size().x) {
        let mut xs = x.load4(v * 4);
        for k in 0..4 {
            xs[k] = apply_unary(op, a, xs[k]);
        }
        x.store4(v * 4, xs);
    }
    for i in (vectors * 4 + global_idx().x..n).step_by(grid_size().x) {
        x[i] = apply_unary(op, a, x[i]);
    }
}

#[gpu_dsl_macros::device]
fn apply_unary(op: UnaryOp, a: f32, v: f32) -> f32 {
    match op {
        UnaryOp::Scale => a * v,
        UnaryOp::Relu => v.max(0.0),
        UnaryOp::Sigmoid => 1.0 / (1.0 + (-v).exp()),
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&gpu_dsl_runtime::Kernel] =
    &[&axpy_f32::KERNEL, &binary_f32::KERNEL, &unary_f32::KERNEL];

/// A grid-stride configuration for `n` work items on the stream's device.
pub fn grid_stride_config(stream: &Stream, n: usize) -> LaunchConfig {
    let max_blocks = stream.gpu().sm_count().max(1) * BLOCKS_PER_SM;
    let needed = n.div_ceil(THREADS as usize).max(1);
    let blocks = needed.min(max_blocks as usize) as u32;
    LaunchConfig::new(Grid::x(blocks), Block::x(THREADS))
}

/// Fails unless `found` has the `expected` length.
#[doc(hidden)]
pub fn same_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
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

/// `y = a * x + y`, element-wise.
pub fn axpy(
    stream: &Stream,
    a: f32,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> Result<()> {
    same_len("axpy: x and y", y.len(), x.len())?;
    axpy_f32::launch(stream, grid_stride_config(stream, y.len() / 4 + 1), a, x, y)
}

/// `y = a * x + y`: the BLAS name for [`axpy`].
pub fn saxpy(
    stream: &Stream,
    a: f32,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> Result<()> {
    axpy(stream, a, x, y)
}

fn binary(
    stream: &Stream,
    op: BinaryOp,
    x: &DeviceBuffer<f32>,
    y: &DeviceBuffer<f32>,
    out: &mut DeviceBuffer<f32>,
) -> Result<()> {
    same_len("element-wise: x and out", out.len(), x.len())?;
    same_len("element-wise: y and out", out.len(), y.len())?;
    binary_f32::launch(
        stream,
        grid_stride_config(stream, out.len() / 4 + 1),
        op,
        x,
        y,
        out,
    )
}

/// `out = x + y`, element-wise.
pub fn add(
    stream: &Stream,
    x: &DeviceBuffer<f32>,
    y: &DeviceBuffer<f32>,
    out: &mut DeviceBuffer<f32>,
) -> Result<()> {
    binary(stream, BinaryOp::Add, x, y, out)
}

/// `out = x * y`, element-wise.
pub fn mul(
    stream: &Stream,
    x: &DeviceBuffer<f32>,
    y: &DeviceBuffer<f32>,
    out: &mut DeviceBuffer<f32>,
) -> Result<()> {
    binary(stream, BinaryOp::Mul, x, y, out)
}

fn unary(stream: &Stream, op: UnaryOp, a: f32, x: &mut DeviceBuffer<f32>) -> Result<()> {
    unary_f32::launch(
        stream,
        grid_stride_config(stream, x.len() / 4 + 1),
        op,
        a,
        x,
    )
}

/// `x = a * x`, in place.
pub fn scale(stream: &Stream, a: f32, x: &mut DeviceBuffer<f32>) -> Result<()> {
    unary(stream, UnaryOp::Scale, a, x)
}

/// `x = max(x, 0)`, in place.
pub fn relu(stream: &Stream, x: &mut DeviceBuffer<f32>) -> Result<()> {
    unary(stream, UnaryOp::Relu, 0.0, x)
}

/// `x = 1 / (1 + e^-x)`, in place.
pub fn sigmoid(stream: &Stream, x: &mut DeviceBuffer<f32>) -> Result<()> {
    unary(stream, UnaryOp::Sigmoid, 0.0, x)
}

/// Defines an element-wise operation without index code: a kernel with a grid-stride loop and a
/// safe function of the same name that checks lengths and picks the launch.
///
/// Scalars come before the `;`, per-element inputs after it; the body computes one output
/// element from them (any expression of the kernel language).
///
/// ```no_run
/// gpu_dsl_kernels::elementwise! {
///     /// `out = a * x + y`, element-wise.
///     pub fn fused_axpy(a: f32; x: f32, y: f32) -> f32 { a * x + y }
/// }
///
/// # fn main() -> gpu_dsl_runtime::Result<()> {
/// let stream = gpu_dsl_runtime::Gpu::best()?.default_stream();
/// let x = gpu_dsl_runtime::DeviceBuffer::from_host(&stream, &[1.0f32, 2.0])?;
/// let y = gpu_dsl_runtime::DeviceBuffer::from_host(&stream, &[3.0f32, 4.0])?;
/// let mut out = gpu_dsl_runtime::DeviceBuffer::zeroed(&stream, 2)?;
/// fused_axpy(&stream, 2.0, &x, &y, &mut out)?;
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! elementwise {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($($scalar:ident: $scalar_ty:ty),* ; $($input:ident: $input_ty:ty),+) -> $out_ty:ty $body:block
    ) => {
        $(#[$attr])*
        #[allow(clippy::too_many_arguments)]
        $vis fn $name(
            stream: &$crate::__private::runtime::Stream,
            $($scalar: $scalar_ty,)*
            $($input: &$crate::__private::runtime::DeviceBuffer<$input_ty>,)+
            out: &mut $crate::__private::runtime::DeviceBuffer<$out_ty>,
        ) -> $crate::__private::runtime::Result<()> {
            #[$crate::__private::kernel]
            fn elementwise_kernel($($scalar: $scalar_ty,)* $($input: &[$input_ty],)+ out: &mut [$out_ty]) {
                for element in (global_idx().x..out.len()).step_by(grid_size().x) {
                    $(let $input = $input[element];)+
                    out[element] = $body;
                }
            }
            $($crate::map::same_len(
                concat!(stringify!($name), ": ", stringify!($input), " and out"),
                out.len(),
                $input.len(),
            )?;)+
            let config = $crate::map::grid_stride_config(stream, out.len());
            elementwise_kernel::launch(stream, config, $($scalar,)* $($input,)+ out)
        }
    };
}
