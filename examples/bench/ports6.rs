//! Rows for the sixth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels6.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels6::{self as ports, PER_THREAD, TAPS9};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{COLLATZ_C, CONV1D_C, GAUSS_ROWS_C, TONE_HISTOGRAM_C};

/// Every row of the sixth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port gaussian rows") {
        rows.push(gauss_rows(stream, 8192, 8192)?);
    }
    if only.wants("port collatz") {
        rows.push(collatz(stream, 1 << 22)?);
    }
    if only.wants("port conv1d (4 a thread)") {
        rows.push(conv1d(stream, 1 << 26)?);
    }
    if only.wants("port tone histogram") {
        rows.push(tone_histogram(stream, 1 << 24)?);
    }
    Ok(rows)
}

fn gauss_rows(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let n = width * height;
    let input = DeviceBuffer::from_host(stream, &values(n, 31))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::gauss_rows::launch(stream, config, width, height, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &GAUSS_ROWS_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "gaussian rows",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port gaussian rows",
        format!("{width}x{height}, 7 taps"),
        ms,
        twin_ms,
        8.0 * n as f64 / 1e9,
        "GB/s",
    ))
}

fn collatz(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u32> = (0..n as u32)
        .map(|i| 1 + i.wrapping_mul(7919) % 1_000_000)
        .collect();
    let start = DeviceBuffer::from_host(stream, &host)?;
    let mut steps = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut steps_twin = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let ms = median_ms(stream, || {
        ports::collatz_steps::launch(stream, config, &start, &mut steps)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &COLLATZ_C,
            config,
            &[
                KernelArg::slice(&start),
                KernelArg::slice_mut(&mut steps_twin),
            ],
        )
    })?;
    agree_exact(
        "collatz",
        &steps.to_host(stream)?,
        &steps_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port collatz (loop/break)",
        format!("2^{} starts", n.trailing_zeros()),
        ms,
        twin_ms,
        n as f64 / 1e9,
        "G/s",
    ))
}

fn conv1d(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let x = DeviceBuffer::from_host(stream, &values(n + TAPS9.len() - 1, 37))?;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n / PER_THREAD, 256)?;
    let ms = median_ms(stream, || {
        ports::conv1d_blocked::launch(stream, config, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &CONV1D_C,
            config,
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut y_twin)],
        )
    })?;
    agree(
        "conv1d",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port conv1d (4 a thread)",
        format!("2^{}, 9 taps", n.trailing_zeros()),
        ms,
        twin_ms,
        8.0 * n as f64 / 1e9,
        "GB/s",
    ))
}

fn tone_histogram(stream: &Stream, pixels: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<f32> = values(pixels * 3, 41)
        .iter()
        .map(|v| (v + 1.0) * 0.5)
        .collect();
    let rgb = DeviceBuffer::from_host(stream, &host)?;
    let mut counts = DeviceBuffer::<u32>::zeroed(stream, 4)?;
    let mut counts_twin = DeviceBuffer::<u32>::zeroed(stream, 4)?;
    let config = LaunchConfig::try_for_len(pixels, 256)?;
    let ms = median_ms(stream, || {
        ports::tone_histogram::launch(stream, config, &rgb, &mut counts)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &TONE_HISTOGRAM_C,
            config,
            &[
                KernelArg::slice(&rgb),
                KernelArg::slice_mut(&mut counts_twin),
            ],
        )
    })?;
    // Both accumulate over every timed run: the counts agree once scaled by the runs.
    let (ours, theirs) = (counts.to_host(stream)?, counts_twin.to_host(stream)?);
    let total = |c: &[u32]| c.iter().map(|&v| v as u64).sum::<u64>().max(1);
    let ours: Vec<u64> = ours
        .iter()
        .map(|&v| v as u64 * 1_000_000 / total(&ours))
        .collect();
    let theirs: Vec<u64> = theirs
        .iter()
        .map(|&v| v as u64 * 1_000_000 / total(&theirs))
        .collect();
    agree_exact("tone histogram", &ours, &theirs, 0);
    Ok(row(
        "port tone histogram",
        format!("2^{} pixels", pixels.trailing_zeros()),
        ms,
        twin_ms,
        12.0 * pixels as f64 / 1e9,
        "GB/s",
    ))
}
