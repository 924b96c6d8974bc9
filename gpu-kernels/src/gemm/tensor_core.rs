//! `f16` and `bf16` GEMM with `f32` accumulation. For now one thread per output element, a
//! correct reference for the tensor-core kernels that will take its place.

use gpu_macros::kernel;
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::{Block, DeviceBuffer, Grid, Kernel, LaunchConfig, Result, Stream};

use super::{Gemm, Transpose};

/// One thread per element of C: the dot product of a row of op(A) and a column of op(B).
#[kernel]
fn gemm_naive_f16(
    m: usize,
    n: usize,
    k: usize,
    trans_a: u32,
    trans_b: u32,
    alpha: f32,
    beta: f32,
    a: &[f16],
    b: &[f16],
    c: &mut [f32],
) {
    let col = block_idx().x as usize * 16 + thread_idx().x as usize;
    let row = block_idx().y as usize * 16 + thread_idx().y as usize;
    if row < m && col < n {
        let mut acc = 0.0f32;
        for p in 0..k {
            let x = if trans_a == 0 {
                a[row * k + p]
            } else {
                a[p * m + row]
            };
            let y = if trans_b == 0 {
                b[p * n + col]
            } else {
                b[col * k + p]
            };
            acc += x.to_f32() * y.to_f32();
        }
        let index = row * n + col;
        c[index] = if beta != 0.0 {
            alpha * acc + beta * c[index]
        } else {
            alpha * acc
        };
    }
}

/// [`gemm_naive_f16`] for `bf16`.
#[kernel]
fn gemm_naive_bf16(
    m: usize,
    n: usize,
    k: usize,
    trans_a: u32,
    trans_b: u32,
    alpha: f32,
    beta: f32,
    a: &[bf16],
    b: &[bf16],
    c: &mut [f32],
) {
    let col = block_idx().x as usize * 16 + thread_idx().x as usize;
    let row = block_idx().y as usize * 16 + thread_idx().y as usize;
    if row < m && col < n {
        let mut acc = 0.0f32;
        for p in 0..k {
            let x = if trans_a == 0 {
                a[row * k + p]
            } else {
                a[p * m + row]
            };
            let y = if trans_b == 0 {
                b[p * n + col]
            } else {
                b[col * k + p]
            };
            acc += x.to_f32() * y.to_f32();
        }
        let index = row * n + col;
        c[index] = if beta != 0.0 {
            alpha * acc + beta * c[index]
        } else {
            alpha * acc
        };
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&Kernel] = &[&gemm_naive_f16::KERNEL, &gemm_naive_bf16::KERNEL];

/// 16×16 threads per block, one per element of C.
fn config(spec: &Gemm) -> LaunchConfig {
    let grid = Grid::xy(spec.n.div_ceil(16) as u32, spec.m.div_ceil(16) as u32);
    LaunchConfig::new(grid, Block::xy(16, 16))
}

fn flags(spec: &Gemm) -> (u32, u32) {
    let flag = |t: Transpose| (t == Transpose::Yes) as u32;
    (flag(spec.trans_a), flag(spec.trans_b))
}

/// `spec` with `f16` inputs; the caller has checked the lengths and that m, n, k are not zero.
pub(crate) fn gemm_f16(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<f16>,
    b: &DeviceBuffer<f16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let (ta, tb) = flags(spec);
    let (m, n, k) = (spec.m, spec.n, spec.k);
    let (alpha, beta) = (spec.alpha, spec.beta);
    gemm_naive_f16::launch(stream, config(spec), m, n, k, ta, tb, alpha, beta, a, b, c)
}

/// `spec` with `bf16` inputs; the caller has checked the lengths and that m, n, k are not zero.
pub(crate) fn gemm_bf16(
    stream: &Stream,
    spec: &Gemm,
    a: &DeviceBuffer<bf16>,
    b: &DeviceBuffer<bf16>,
    c: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let (ta, tb) = flags(spec);
    let (m, n, k) = (spec.m, spec.n, spec.k);
    let (alpha, beta) = (spec.alpha, spec.beta);
    gemm_naive_bf16::launch(stream, config(spec), m, n, k, ta, tb, alpha, beta, a, b, c)
}
