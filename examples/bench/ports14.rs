//! Rows for the fourteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels14.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels14::{self as ports, BLOCK_SIZE};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{MATRIX_MUL_C, MERGE_BASIC_C, SHFL_SCAN_C};

/// Every row of the fourteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port matrixMul (samples)") {
        rows.push(matrix_mul(stream, 2048)?);
    }
    if only.wants("port merge (co-rank)") {
        rows.push(merge(stream, 1 << 24)?);
    }
    if only.wants("port scan (warp shuffles)") {
        rows.push(shfl_scan(stream, 1 << 26)?);
    }
    Ok(rows)
}

fn matrix_mul(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(n * n, 141))?;
    let b = DeviceBuffer::from_host(stream, &values(n * n, 142))?;
    let mut c = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut c_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let side = BLOCK_SIZE as u32;
    let grid = Grid::xy(n as u32 / side, n as u32 / side);
    let config = LaunchConfig::new(grid, Block::xy(side, side));
    let ms = median_ms(stream, || {
        ports::matrix_mul::launch::<BLOCK_SIZE>(stream, config, n, n, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MATRIX_MUL_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree(
        "matrixMul",
        &c.to_host(stream)?,
        &c_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port matrixMul (samples)",
        format!("{n}^3, {BLOCK_SIZE}² tiles"),
        ms,
        twin_ms,
        2.0 * (n * n * n) as f64 / 1e12,
        "TFLOP/s",
    ))
}

/// `n` sorted values.
fn sorted(n: usize, seed: usize) -> Vec<f32> {
    let mut v = values(n, seed);
    v.sort_by(f32::total_cmp);
    v
}

fn merge(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &sorted(n, 143))?;
    let b = DeviceBuffer::from_host(stream, &sorted(n, 144))?;
    let mut c = DeviceBuffer::<f32>::zeroed(stream, 2 * n)?;
    let mut c_twin = DeviceBuffer::<f32>::zeroed(stream, 2 * n)?;
    let config = LaunchConfig::new(Grid::x(stream.gpu().sm_count() * 8), Block::x(128));
    let ms = median_ms(stream, || {
        ports::merge_basic::launch(stream, config, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MERGE_BASIC_C,
            config,
            &[
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree_exact("merge", &c.to_host(stream)?, &c_twin.to_host(stream)?, 0);
    Ok(row(
        "port merge (co-rank)",
        format!("2 x 2^{} sorted", n.trailing_zeros()),
        ms,
        twin_ms,
        (4 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}

fn shfl_scan(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let threads = 256usize;
    let blocks = n / threads;
    let host: Vec<i32> = (0..n).map(|i| (i as i32 % 97) - 48).collect();
    let mut data = DeviceBuffer::from_host(stream, &host)?;
    let mut data_twin = DeviceBuffer::from_host(stream, &host)?;
    let mut sums = DeviceBuffer::<i32>::zeroed(stream, blocks)?;
    let mut sums_twin = DeviceBuffer::<i32>::zeroed(stream, blocks)?;
    let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32))
        .with_shared_mem((threads / 32 * 4) as u32);
    // In place, so each launch scans the last one's sums: both run equally often.
    let ms = median_ms(stream, || {
        ports::shfl_scan::launch(stream, config, &mut data, &mut sums)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SHFL_SCAN_C,
            config,
            &[
                KernelArg::slice_mut(&mut data_twin),
                KernelArg::slice_mut(&mut sums_twin),
            ],
        )
    })?;
    agree_exact(
        "shfl scan",
        &data.to_host(stream)?,
        &data_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port scan (warp shuffles)",
        format!("2^{} in 256s", n.trailing_zeros()),
        ms,
        twin_ms,
        (2 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}
