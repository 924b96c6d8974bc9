//! Rows for the tenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels10.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels10::{self as ports, DCT_SIZE};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{DCT_C, GEMV_I8_C, STEREO_C};

/// Every row of the tenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port stereo sad") {
        rows.push(stereo(stream, 1024, 768)?);
    }
    if only.wants("port dct 8x8") {
        rows.push(dct(stream, 8192)?);
    }
    if only.wants("port gemv i8") {
        rows.push(gemv_i8(stream, 16384, 4096)?);
    }
    Ok(rows)
}

/// A textured pair: the right image is the left one shifted by a disparity that varies by
/// row, plus a little noise.
pub fn stereo_pair(w: usize, h: usize) -> (Vec<u8>, Vec<u8>) {
    let texture = |x: usize, y: usize| ((x * 7919 + y * 104_729) % 251) as u8;
    let left: Vec<u8> = (0..w * h).map(|i| texture(i % w, i / w)).collect();
    let right: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let shift = 3 + y % 20;
            texture(x + shift, y).wrapping_add((i % 3) as u8)
        })
        .collect();
    (left, right)
}

fn stereo(stream: &Stream, w: usize, h: usize) -> gpu_dsl::Result<Row> {
    let (left, right) = stereo_pair(w, h);
    let dl = DeviceBuffer::from_host(stream, &left)?;
    let dr = DeviceBuffer::from_host(stream, &right)?;
    let mut out = DeviceBuffer::<u32>::zeroed(stream, w * h)?;
    let mut out_twin = DeviceBuffer::<u32>::zeroed(stream, w * h)?;
    let grid = Grid::xy(w.div_ceil(32) as u32, h.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::stereo_sad::launch(stream, config, w, h, &dl, &dr, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &STEREO_C,
            config,
            &[
                KernelArg::scalar(w as i32),
                KernelArg::scalar(h as i32),
                KernelArg::slice(&dl),
                KernelArg::slice(&dr),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree_exact(
        "stereo sad",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port stereo sad",
        format!("{w}x{h}, 9x9, 32 disparities"),
        ms,
        twin_ms,
        (w * h) as f64 / 1e9,
        "Gpx/s",
    ))
}

fn dct(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let src = DeviceBuffer::from_host(stream, &values(n * n, 97))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let blocks = (n / DCT_SIZE) as u32;
    let side = DCT_SIZE as u32;
    let config = LaunchConfig::new(Grid::xy(blocks, blocks), Block::xy(side, side));
    let ms = median_ms(stream, || {
        ports::dct8x8::launch(stream, config, n, &src, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &DCT_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice(&src),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "dct 8x8",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port dct 8x8",
        format!("{n}x{n}"),
        ms,
        twin_ms,
        8.0 * (n * n) as f64 / 1e9,
        "GB/s",
    ))
}

fn gemv_i8(stream: &Stream, rows: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let quantize = |v: &f32| (v * 127.0) as i8;
    let w: Vec<i8> = values(rows * cols, 101).iter().map(quantize).collect();
    let x: Vec<i8> = values(cols, 103).iter().map(quantize).collect();
    let (dw, dx) = (
        DeviceBuffer::from_host(stream, &w)?,
        DeviceBuffer::from_host(stream, &x)?,
    );
    let mut y = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let scale = 1.0 / (127.0 * 127.0);
    let config = LaunchConfig::try_for_len(rows * 32, 256)?;
    let ms = median_ms(stream, || {
        ports::gemv_i8::launch(stream, config, rows, cols, &dw, &dx, scale, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &GEMV_I8_C,
            config,
            &[
                KernelArg::scalar(rows as i32),
                KernelArg::scalar(cols as i32),
                KernelArg::slice(&dw),
                KernelArg::slice(&dx),
                KernelArg::scalar(scale),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "gemv i8",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port gemv i8",
        format!("{rows}x{cols}"),
        ms,
        twin_ms,
        (rows * cols) as f64 / 1e9,
        "GB/s",
    ))
}
