//! Rows for the ninth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels9.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels9::{self as ports, BILATERAL_RADIUS, HOT_BLOCK, NW_BLOCK};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{BILATERAL_C, HOTSPOT_C, NW_C};

/// Every row of the ninth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port needleman-wunsch") {
        rows.push(needleman_wunsch(stream, 4096)?);
    }
    if only.wants("port hotspot") {
        rows.push(hotspot(stream, 8192)?);
    }
    if only.wants("port bilateral") {
        rows.push(bilateral(stream, 4096)?);
    }
    Ok(rows)
}

/// Rodinia's score matrix setup for sequences of `n` (a multiple of the tile): `n + 1` columns,
/// row and column 0 the gap penalties, and a similarity for each pair.
pub fn nw_input(n: usize, penalty: i32) -> (Vec<i32>, Vec<i32>) {
    let cols = n + 1;
    let mut score = vec![0i32; cols * cols];
    for i in 0..cols {
        score[i * cols] = -(i as i32) * penalty;
        score[i] = -(i as i32) * penalty;
    }
    let reference: Vec<i32> = (0..cols * cols)
        .map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 7) as i32 % 21 - 10)
        .collect();
    (reference, score)
}

fn needleman_wunsch(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let penalty = 10;
    let (reference, score0) = nw_input(n, penalty);
    let cols = n + 1;
    let dref = DeviceBuffer::from_host(stream, &reference)?;
    let mut score = DeviceBuffer::from_host(stream, &score0)?;
    let mut score_twin = DeviceBuffer::from_host(stream, &score0)?;
    let tiles = n / NW_BLOCK;
    let block = Block::x(NW_BLOCK as u32);
    // The upper-left half of the matrix: one launch per anti-diagonal of tiles, as Rodinia's
    // first loop runs them.
    let ms = median_ms(stream, || {
        for diagonal in 1..=tiles {
            let config = LaunchConfig::new(Grid::x(diagonal as u32), block);
            ports::nw_diagonal::launch(stream, config, &dref, &mut score, cols, penalty, diagonal)?;
        }
        Ok(())
    })?;
    let twin_ms = median_ms(stream, || {
        for diagonal in 1..=tiles {
            let config = LaunchConfig::new(Grid::x(diagonal as u32), block);
            stream.launch(
                &NW_C,
                config,
                &[
                    KernelArg::slice(&dref),
                    KernelArg::slice_mut(&mut score_twin),
                    KernelArg::scalar(cols as i32),
                    KernelArg::scalar(penalty),
                    KernelArg::scalar(diagonal as i32),
                ],
            )?;
        }
        Ok(())
    })?;
    agree_exact(
        "needleman-wunsch",
        &score.to_host(stream)?,
        &score_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port needleman-wunsch",
        format!("{n}², upper half, {tiles} launches"),
        ms,
        twin_ms,
        (n * n / 2) as f64 / 1e9,
        "Gcell/s",
    ))
}

fn hotspot(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let power = DeviceBuffer::from_host(stream, &values(n * n, 79))?;
    let temps: Vec<f32> = values(n * n, 83).iter().map(|v| 320.0 + 10.0 * v).collect();
    let temp_in = DeviceBuffer::from_host(stream, &temps)?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let small = HOT_BLOCK - 2;
    let grid = Grid::xy(n.div_ceil(small) as u32, n.div_ceil(small) as u32);
    let config = LaunchConfig::new(grid, Block::xy(HOT_BLOCK as u32, HOT_BLOCK as u32));
    let (cap, rx, ry, rz) = (0.5f32, 0.1f32, 0.1f32, 0.02f32);
    let ms = median_ms(stream, || {
        ports::hotspot_step::launch(
            stream, config, &power, &temp_in, &mut out, n, n, cap, rx, ry, rz,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HOTSPOT_C,
            config,
            &[
                KernelArg::slice(&power),
                KernelArg::slice(&temp_in),
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(cap),
                KernelArg::scalar(rx),
                KernelArg::scalar(ry),
                KernelArg::scalar(rz),
            ],
        )
    })?;
    agree(
        "hotspot",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port hotspot",
        format!("{n}x{n}, 16² tiles"),
        ms,
        twin_ms,
        12.0 * (n * n) as f64 / 1e9,
        "GB/s",
    ))
}

/// The bilateral filter's spatial weights, `exp(-d² / 2σ²)` for offsets `-R..=R`.
pub fn bilateral_gaussian(sigma: f32) -> Vec<f32> {
    (-BILATERAL_RADIUS..=BILATERAL_RADIUS)
        .map(|d| (-((d * d) as f32) / (2.0 * sigma * sigma)).exp())
        .collect()
}

fn bilateral(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let image: Vec<f32> = values(n * n, 89).iter().map(|v| (v + 1.0) * 0.5).collect();
    let src = DeviceBuffer::from_host(stream, &image)?;
    let gaussian = DeviceBuffer::from_host(stream, &bilateral_gaussian(2.0))?;
    let inv_2r2 = 1.0 / (2.0 * 0.1f32 * 0.1);
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let grid = Grid::xy(n.div_ceil(16) as u32, n.div_ceil(16) as u32);
    let config = LaunchConfig::new(grid, Block::xy(16, 16));
    let ms = median_ms(stream, || {
        ports::bilateral::launch(stream, config, n, n, &gaussian, inv_2r2, &src, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BILATERAL_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::scalar(n as i32),
                KernelArg::slice(&gaussian),
                KernelArg::scalar(inv_2r2),
                KernelArg::slice(&src),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "bilateral",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-5,
    );
    let window = (2 * BILATERAL_RADIUS + 1) as usize;
    Ok(row(
        "port bilateral",
        format!("{n}x{n}, {window}x{window}"),
        ms,
        twin_ms,
        (n * n) as f64 / 1e9,
        "Gpx/s",
    ))
}
