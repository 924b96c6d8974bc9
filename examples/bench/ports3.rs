//! Rows for the third set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels3.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels3::{self as ports, REDUCE_BLOCK};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{GRAY_C, LIFE_C, MATMUL_NAIVE_C, REDUCE_TREE_C};

/// Every row of the third set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port matmul (naive)") {
        rows.push(matmul_naive(stream, 2048)?);
    }
    if only.wants("port game of life") {
        rows.push(life(stream, 16384, 16384)?);
    }
    if only.wants("port rgba to gray") {
        rows.push(gray(stream, 1 << 26)?);
    }
    if only.wants("port reduce (tree)") {
        rows.push(reduce_tree(stream, 1 << 26)?);
    }
    Ok(rows)
}

fn matmul_naive(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(n * n, 1))?;
    let b = DeviceBuffer::from_host(stream, &values(n * n, 2))?;
    let mut c = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut c_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let grid = Grid::xy(n.div_ceil(16) as u32, n.div_ceil(16) as u32);
    let config = LaunchConfig::new(grid, Block::xy(16, 16));
    let ms = median_ms(stream, || {
        ports::matmul_naive::launch(stream, config, n, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MATMUL_NAIVE_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree(
        "matmul naive",
        &c.to_host(stream)?,
        &c_twin.to_host(stream)?,
        1e-5,
    );
    let flop = 2.0 * (n * n * n) as f64 / 1e12;
    Ok(row(
        "port matmul (naive)",
        format!("{n}^3"),
        ms,
        twin_ms,
        flop,
        "TFLOP/s",
    ))
}

fn life(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u8> = (0..width * height)
        .map(|i| u8::from((i * 2_654_435_761) >> 13 & 3 == 0))
        .collect();
    let cells = DeviceBuffer::from_host(stream, &host)?;
    let mut next = DeviceBuffer::<u8>::zeroed(stream, width * height)?;
    let mut next_twin = DeviceBuffer::<u8>::zeroed(stream, width * height)?;
    let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::life_step::launch(stream, config, width, height, &cells, &mut next)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &LIFE_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::slice(&cells),
                KernelArg::slice_mut(&mut next_twin),
            ],
        )
    })?;
    agree_exact(
        "game of life",
        &next.to_host(stream)?,
        &next_twin.to_host(stream)?,
        0,
    );
    let gb = 2.0 * (width * height) as f64 / 1e9;
    Ok(row(
        "port game of life",
        format!("{width}x{height}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn gray(stream: &Stream, pixels: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u8> = (0..pixels * 4).map(|i| ((i * 7919) >> 3) as u8).collect();
    let rgba = DeviceBuffer::from_host(stream, &host)?;
    let mut out = DeviceBuffer::<u8>::zeroed(stream, pixels)?;
    let mut out_twin = DeviceBuffer::<u8>::zeroed(stream, pixels)?;
    let config = LaunchConfig::try_for_len(pixels, 256)?;
    let ms = median_ms(stream, || {
        ports::rgba_to_gray::launch(stream, config, &rgba, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &GRAY_C,
            config,
            &[KernelArg::slice(&rgba), KernelArg::slice_mut(&mut out_twin)],
        )
    })?;
    agree_exact(
        "rgba to gray",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0,
    );
    let gb = 5.0 * pixels as f64 / 1e9;
    Ok(row(
        "port rgba to gray",
        format!("2^{}", pixels.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn reduce_tree(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let x = DeviceBuffer::from_host(stream, &values(n, 3))?;
    let blocks = n.div_ceil(REDUCE_BLOCK * 2);
    let mut sums = DeviceBuffer::<f32>::zeroed(stream, blocks)?;
    let mut sums_twin = DeviceBuffer::<f32>::zeroed(stream, blocks)?;
    let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(REDUCE_BLOCK as u32));
    let ms = median_ms(stream, || {
        ports::reduce_tree::launch(stream, config, &x, &mut sums)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &REDUCE_TREE_C,
            config,
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut sums_twin)],
        )
    })?;
    agree(
        "reduce tree",
        &sums.to_host(stream)?,
        &sums_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 4.0 * n as f64 / 1e9;
    Ok(row(
        "port reduce (tree)",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}
