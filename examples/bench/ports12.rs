//! Rows for the twelfth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels12.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels12::{self as ports, Complex};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{JULIA_C, STENCIL_Z_C};

/// Every row of the twelfth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port julia") {
        rows.push(julia(stream, 4096)?);
    }
    if only.wants("port stencil (z registers)") {
        rows.push(stencil_z(stream, 512)?);
    }
    Ok(rows)
}

fn julia(stream: &Stream, dim: usize) -> gpu_dsl::Result<Row> {
    let c = Complex { r: -0.8, i: 0.156 };
    let mut image = DeviceBuffer::<u8>::zeroed(stream, dim * dim * 4)?;
    let mut image_twin = DeviceBuffer::<u8>::zeroed(stream, dim * dim * 4)?;
    let config = LaunchConfig::new(
        Grid::xy(dim as u32, dim.div_ceil(128) as u32),
        Block::x(128),
    );
    let ms = median_ms(stream, || {
        ports::julia::launch(stream, config, dim, c, &mut image)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &JULIA_C,
            config,
            &[
                KernelArg::scalar(dim as i32),
                KernelArg::scalar(c.r),
                KernelArg::scalar(c.i),
                KernelArg::slice_mut(&mut image_twin),
            ],
        )
    })?;
    // A point on the set's edge may leave it one iteration apart: a few may differ.
    agree_exact(
        "julia",
        &image.to_host(stream)?,
        &image_twin.to_host(stream)?,
        dim,
    );
    Ok(row(
        "port julia",
        format!("{dim}x{dim}, 200 it."),
        ms,
        twin_ms,
        (dim * dim) as f64 / 1e9,
        "Gpx/s",
    ))
}

fn stencil_z(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let input = DeviceBuffer::from_host(stream, &values(n * n * n, 109))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n * n * n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n * n * n)?;
    let (c0, c1) = (0.4f32, 0.1f32);
    let grid = Grid::xy(n.div_ceil(32) as u32, n.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::stencil_z::launch(stream, config, n, c0, c1, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &STENCIL_Z_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::scalar(c0),
                KernelArg::scalar(c1),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "stencil (z registers)",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port stencil (z registers)",
        format!("{n}³"),
        ms,
        twin_ms,
        8.0 * (n * n * n) as f64 / 1e9,
        "GB/s",
    ))
}
