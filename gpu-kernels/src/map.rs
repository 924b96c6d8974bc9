//! Element-wise kernels: each thread walks the data with a grid-stride loop, so one launch of a
//! fixed grid covers any length.

use gpu_macros::kernel;
use gpu_runtime::{DeviceBuffer, Error, LaunchConfig, Result, Stream};

/// Threads per block for the element-wise kernels.
const THREADS: u32 = 256;
/// Blocks per multiprocessor: enough resident warps to hide memory latency.
const BLOCKS_PER_SM: u32 = 8;

#[kernel]
fn saxpy_f32(a: f32, x: &[f32], y: &mut [f32]) {
    let n = y.len();
    for i in (global_idx().x..n).step_by(grid_size().x) {
        y[i] = a.mul_add(x[i], y[i]);
    }
}

#[kernel]
fn scale_f32(a: f32, x: &mut [f32]) {
    let n = x.len();
    for i in (global_idx().x..n).step_by(grid_size().x) {
        x[i] *= a;
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&gpu_runtime::Kernel] = &[&saxpy_f32::KERNEL, &scale_f32::KERNEL];

/// A grid-stride configuration for `n` elements on the stream's device.
pub fn grid_stride_config(stream: &Stream, n: usize) -> LaunchConfig {
    let max_blocks = stream.gpu().sm_count().max(1) * BLOCKS_PER_SM;
    let needed = n.div_ceil(THREADS as usize).max(1);
    let blocks = needed.min(max_blocks as usize) as u32;
    LaunchConfig::for_len(blocks as usize * THREADS as usize, THREADS)
}

/// `y = a * x + y`, element-wise.
pub fn saxpy(
    stream: &Stream,
    a: f32,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::LengthMismatch {
            what: "saxpy: x and y",
            expected: y.len(),
            found: x.len(),
        });
    }
    saxpy_f32::launch(stream, grid_stride_config(stream, y.len()), a, x, y)
}

/// `x = a * x`, element-wise.
pub fn scale(stream: &Stream, a: f32, x: &mut DeviceBuffer<f32>) -> Result<()> {
    scale_f32::launch(stream, grid_stride_config(stream, x.len()), a, x)
}
