//! Rows for the thirteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels13.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels13::{self as ports, Cf32, BM, BN, TM, TN};
use crate::ports::{agree, row, values};
use crate::{median_ms, Only, Row};
use twins::{FFT_RADIX2_C, LAYER_NORM_C, SGEMM_BLOCKED_C};

/// Every row of the thirteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port sgemm (8x8 a thread)") {
        rows.push(sgemm(stream, 2048)?);
    }
    if only.wants("port fft (radix-2 stockham)") {
        rows.push(fft(stream, 1 << 22)?);
    }
    if only.wants("port layer norm") {
        rows.push(layer_norm(stream, 16384, 1024)?);
    }
    Ok(rows)
}

fn sgemm(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(n * n, 131))?;
    let b = DeviceBuffer::from_host(stream, &values(n * n, 132))?;
    let mut c = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut c_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let grid = Grid::xy((n / BN) as u32, (n / BM) as u32);
    let config = LaunchConfig::new(grid, Block::x(((BM / TM) * (BN / TN)) as u32));
    let ms = median_ms(stream, || {
        ports::sgemm_blocked::launch(stream, config, n, n, n, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SGEMM_BLOCKED_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree("sgemm", &c.to_host(stream)?, &c_twin.to_host(stream)?, 1e-4);
    Ok(row(
        "port sgemm (8x8 a thread)",
        format!("{n}^3"),
        ms,
        twin_ms,
        2.0 * (n * n * n) as f64 / 1e12,
        "TFLOP/s",
    ))
}

fn fft(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let words = values(2 * n, 133);
    let points: Vec<Cf32> = words
        .chunks(2)
        .map(|w| Cf32 { re: w[0], im: w[1] })
        .collect();
    let input = DeviceBuffer::from_host(stream, &points)?;
    let input_twin = DeviceBuffer::from_host(stream, &words)?;
    let (mut ping, mut pong) = (
        DeviceBuffer::<Cf32>::zeroed(stream, n)?,
        DeviceBuffer::<Cf32>::zeroed(stream, n)?,
    );
    let (mut ping_twin, mut pong_twin) = (
        DeviceBuffer::<f32>::zeroed(stream, 2 * n)?,
        DeviceBuffer::<f32>::zeroed(stream, 2 * n)?,
    );
    let config = LaunchConfig::try_for_len(n / 2, 256)?;
    let passes = n.trailing_zeros();
    // The whole transform: the first pass reads the input, each later one the last's output.
    let ms = median_ms(stream, || {
        ports::fft_radix2::launch(stream, config, 1, &input, &mut ping)?;
        for pass in 1..passes {
            ports::fft_radix2::launch(stream, config, 1 << pass, &ping, &mut pong)?;
            std::mem::swap(&mut ping, &mut pong);
        }
        Ok(())
    })?;
    let twin_ms = median_ms(stream, || {
        let launch = |span: usize, from: &DeviceBuffer<f32>, to: &mut DeviceBuffer<f32>| {
            stream.launch(
                &FFT_RADIX2_C,
                config,
                &[
                    KernelArg::scalar(span as i32),
                    KernelArg::slice(from),
                    KernelArg::slice_mut(to),
                ],
            )
        };
        launch(1, &input_twin, &mut ping_twin)?;
        for pass in 1..passes {
            launch(1 << pass, &ping_twin, &mut pong_twin)?;
            std::mem::swap(&mut ping_twin, &mut pong_twin);
        }
        Ok(())
    })?;
    // Both ran the transform equally often, so each holds the same buffer's result.
    let ours: Vec<f32> = ping
        .to_host(stream)?
        .iter()
        .flat_map(|c| [c.re, c.im])
        .collect();
    agree("fft", &ours, &ping_twin.to_host(stream)?, 1e-3);
    Ok(row(
        "port fft (radix-2 stockham)",
        format!("2^{passes} points, {passes} passes"),
        ms,
        twin_ms,
        n as f64 / 1e9,
        "Gpt/s",
    ))
}

fn layer_norm(stream: &Stream, rows: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let x = DeviceBuffer::from_host(stream, &values(rows * cols, 134))?;
    let gamma = DeviceBuffer::from_host(stream, &values(cols, 135))?;
    let beta = DeviceBuffer::from_host(stream, &values(cols, 136))?;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, rows * cols)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, rows * cols)?;
    let eps = 1e-5f32;
    let config = LaunchConfig::try_for_len(rows * 32, 256)?;
    let ms = median_ms(stream, || {
        ports::layer_norm::launch(stream, config, cols, eps, &x, &gamma, &beta, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &LAYER_NORM_C,
            config,
            &[
                KernelArg::scalar(cols as i32),
                KernelArg::scalar(eps),
                KernelArg::slice(&x),
                KernelArg::slice(&gamma),
                KernelArg::slice(&beta),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "layer norm",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port layer norm",
        format!("{rows}x{cols}"),
        ms,
        twin_ms,
        (2 * rows * cols * 4) as f64 / 1e9,
        "GB/s",
    ))
}
