//! Rows for the seventeenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels17.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels17::{self as ports, Activation};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{BIAS_ACTIVATION_C, COMPACT_WARP_C, TRANSPOSE_IN_PLACE_C};

/// Every row of the seventeenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port bias + activation (enum)") {
        rows.push(bias_activation(stream, 1 << 26, 1024)?);
    }
    if only.wants("port transpose (in place)") {
        rows.push(transpose_in_place(stream, 8192)?);
    }
    if only.wants("port compaction (warp ballots)") {
        rows.push(compact(stream, 1 << 26)?);
    }
    Ok(rows)
}

fn bias_activation(stream: &Stream, n: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let x = DeviceBuffer::from_host(stream, &values(n, 171))?;
    let bias = DeviceBuffer::from_host(stream, &values(cols, 172))?;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let act = Activation::Gelu;
    let ms = median_ms(stream, || {
        ports::bias_activation::launch(stream, config, act, &x, &bias, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BIAS_ACTIVATION_C,
            config,
            &[
                KernelArg::scalar(act as u32),
                KernelArg::slice(&x),
                KernelArg::slice(&bias),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "bias + gelu",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port bias + activation (enum)",
        format!("2^{}, gelu", n.trailing_zeros()),
        ms,
        twin_ms,
        (2 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}

fn transpose_in_place(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host = values(n * n, 173);
    let mut a = DeviceBuffer::from_host(stream, &host)?;
    let mut a_twin = DeviceBuffer::from_host(stream, &host)?;
    let config = LaunchConfig::new(
        Grid::xy(n.div_ceil(32) as u32, n.div_ceil(8) as u32),
        Block::xy(32, 8),
    );
    // Each run transposes the last one's result: both run equally often.
    let ms = median_ms(stream, || {
        ports::transpose_in_place::launch(stream, config, n, &mut a)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &TRANSPOSE_IN_PLACE_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice_mut(&mut a_twin),
            ],
        )
    })?;
    agree_exact(
        "transpose (in place)",
        &a.to_host(stream)?,
        &a_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port transpose (in place)",
        format!("{n}²"),
        ms,
        twin_ms,
        // Half the matrix is read and written twice over.
        (2 * n * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}

fn compact(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let input = DeviceBuffer::from_host(stream, &values(n, 174))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut count = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let mut count_twin = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    // Each run starts from a count of 0; both pay for the one-word fill.
    let ms = median_ms(stream, || {
        count.fill(stream, 0)?;
        ports::compact_warp_aggregated::launch(stream, config, &input, &mut out, &mut count)
    })?;
    let twin_ms = median_ms(stream, || {
        count_twin.fill(stream, 0)?;
        stream.launch(
            &COMPACT_WARP_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::slice_mut(&mut count_twin),
            ],
        )
    })?;
    // The order of the warps' reservations differs run to run; the counts agree.
    agree_exact(
        "compaction (warp ballots) count",
        &count.to_host(stream)?,
        &count_twin.to_host(stream)?,
        0,
    );
    let kept = count.to_host(stream)?[0] as usize;
    let mut ours = out.to_host(stream)?[..kept].to_vec();
    let mut theirs = out_twin.to_host(stream)?[..kept].to_vec();
    ours.sort_by(f32::total_cmp);
    theirs.sort_by(f32::total_cmp);
    agree("compaction (warp ballots)", &ours, &theirs, 0.0);
    Ok(row(
        "port compaction (warp ballots)",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        (n * 4 + kept * 4) as f64 / 1e9,
        "GB/s",
    ))
}
