//! Rows for the eighteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels18.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels18::{
    self as ports, Deriche, OptionData, PayoffSums, LUD_BLOCK, MC_THREADS, RADIX, SPLIT_BLOCK,
};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{
    LUD_DIAGONAL_C, LUD_INTERNAL_C, LUD_PERIMETER_C, MONTE_CARLO_C, RADIX_SPLIT_C,
    RECURSIVE_GAUSSIAN_C,
};

/// Every row of the eighteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port lud (rodinia)") {
        rows.push(lud(stream, 2048)?);
    }
    if only.wants("port lud internal") {
        rows.push(lud_internal(stream, 8192)?);
    }
    if only.wants("port recursive gaussian") {
        rows.push(recursive_gaussian(stream, 16384, 2048)?);
    }
    if only.wants("port monte carlo") {
        rows.push(monte_carlo(stream, 1024, 1 << 18)?);
    }
    if only.wants("port radix split") {
        rows.push(radix_split(stream, 1 << 24)?);
    }
    Ok(rows)
}

/// A diagonally dominant matrix, which LU without pivoting keeps finite.
fn dominant(n: usize, seed: usize) -> Vec<f32> {
    let mut a = values(n * n, seed);
    for i in 0..n {
        a[i * n + i] += n as f32;
    }
    a
}

/// Rodinia's host loop over the CUDA C twins.
fn lud_twin(stream: &Stream, n: usize, a: &mut DeviceBuffer<f32>) -> gpu_dsl::Result<()> {
    let tiles = |offset: usize| ((n - offset) / LUD_BLOCK - 1) as u32;
    let diagonal = LaunchConfig::new(Grid::x(1), Block::x(LUD_BLOCK as u32));
    let args = |a: &mut DeviceBuffer<f32>, offset: usize| {
        stream.launch(
            &LUD_DIAGONAL_C,
            diagonal,
            &[
                KernelArg::slice_mut(a),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(offset as i32),
            ],
        )
    };
    let mut offset = 0;
    while offset + LUD_BLOCK < n {
        args(a, offset)?;
        stream.launch(
            &LUD_PERIMETER_C,
            LaunchConfig::new(Grid::x(tiles(offset)), Block::x(2 * LUD_BLOCK as u32)),
            &[
                KernelArg::slice_mut(a),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(offset as i32),
            ],
        )?;
        stream.launch(
            &LUD_INTERNAL_C,
            LaunchConfig::new(
                Grid::xy(tiles(offset), tiles(offset)),
                Block::xy(LUD_BLOCK as u32, LUD_BLOCK as u32),
            ),
            &[
                KernelArg::slice_mut(a),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(offset as i32),
            ],
        )?;
        offset += LUD_BLOCK;
    }
    args(a, offset)
}

fn lud(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let pristine = DeviceBuffer::from_host(stream, &dominant(n, 181))?;
    let mut a = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    let mut a_twin = DeviceBuffer::<f32>::zeroed(stream, n * n)?;
    // Each run factors the same matrix: both pay for the copy that restores it.
    let ms = median_ms(stream, || {
        a.copy_from(stream, &pristine)?;
        ports::lud(stream, n, &mut a)
    })?;
    let twin_ms = median_ms(stream, || {
        a_twin.copy_from(stream, &pristine)?;
        lud_twin(stream, n, &mut a_twin)
    })?;
    agree("lud", &a.to_host(stream)?, &a_twin.to_host(stream)?, 1e-3);
    Ok(row(
        "port lud (rodinia)",
        format!("{n}²"),
        ms,
        twin_ms,
        2.0 * (n as f64).powi(3) / 3.0 / 1e9,
        "Gflop/s",
    ))
}

fn lud_internal(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host = dominant(n, 182);
    let mut a = DeviceBuffer::from_host(stream, &host)?;
    let mut a_twin = DeviceBuffer::from_host(stream, &host)?;
    let tiles = (n / LUD_BLOCK - 1) as u32;
    let config = LaunchConfig::new(
        Grid::xy(tiles, tiles),
        Block::xy(LUD_BLOCK as u32, LUD_BLOCK as u32),
    );
    // Each run subtracts the same products again (the first row and column of tiles, which it
    // reads, stay put): both run equally often.
    let ms = median_ms(stream, || {
        ports::lud_internal::launch(stream, config, &mut a, n, 0)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &LUD_INTERNAL_C,
            config,
            &[
                KernelArg::slice_mut(&mut a_twin),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(0i32),
            ],
        )
    })?;
    agree(
        "lud internal",
        &a.to_host(stream)?,
        &a_twin.to_host(stream)?,
        1e-4,
    );
    let inner = (n - LUD_BLOCK) as f64;
    Ok(row(
        "port lud internal",
        format!("{n}², offset 0"),
        ms,
        twin_ms,
        2.0 * LUD_BLOCK as f64 * inner * inner / 1e9,
        "Gflop/s",
    ))
}

fn recursive_gaussian(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let pixels: Vec<u32> = values(width * height, 183)
        .iter()
        .map(|v| (v.to_bits() ^ (v.to_bits() >> 13)).wrapping_mul(0x9E37_79B9))
        .collect();
    let input = DeviceBuffer::from_host(stream, &pixels)?;
    let mut out = DeviceBuffer::<u32>::zeroed(stream, pixels.len())?;
    let mut out_twin = DeviceBuffer::<u32>::zeroed(stream, pixels.len())?;
    let f = Deriche::gaussian(10.0);
    let config = LaunchConfig::try_for_len(width, 64)?;
    let ms = median_ms(stream, || {
        ports::recursive_gaussian_rgba::launch(stream, config, &input, &mut out, width, height, f)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &RECURSIVE_GAUSSIAN_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::scalar(f.a0),
                KernelArg::scalar(f.a1),
                KernelArg::scalar(f.a2),
                KernelArg::scalar(f.a3),
                KernelArg::scalar(f.b1),
                KernelArg::scalar(f.b2),
                KernelArg::scalar(f.coefp),
                KernelArg::scalar(f.coefn),
            ],
        )
    })?;
    // FMA contraction may move a channel across a rounding step: count the channels more
    // than one step apart.
    let bytes = |p: Vec<u32>| -> Vec<u8> { p.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let (ours, theirs) = (
        bytes(out.to_host(stream)?),
        bytes(out_twin.to_host(stream)?),
    );
    let far: Vec<u8> = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| u8::from(a.abs_diff(*b) > 1))
        .collect();
    agree_exact("recursive gaussian", &far, &vec![0u8; far.len()], 0);
    Ok(row(
        "port recursive gaussian",
        format!("{width}x{height} rgba"),
        ms,
        twin_ms,
        (width * height) as f64 / 1e9,
        "Gpx/s",
    ))
}

fn monte_carlo(stream: &Stream, options: usize, path_n: usize) -> gpu_dsl::Result<Row> {
    let opts: Vec<OptionData> = values(options * 5, 184)
        .chunks(5)
        .map(|c| OptionData {
            s: 30.0 + 5.0 * c[0],
            x: 30.0 + 5.0 * c[1],
            t: 1.0 + 0.5 * c[2],
            r: 0.03,
            v: 0.25 + 0.05 * c[4],
        })
        .collect();
    let words: Vec<f32> = opts
        .iter()
        .flat_map(|o| [o.s, o.x, o.t, o.r, o.v])
        .collect();
    let data = DeviceBuffer::from_host(stream, &opts)?;
    let data_twin = DeviceBuffer::from_host(stream, &words)?;
    let mut sums = DeviceBuffer::<PayoffSums>::zeroed(stream, options)?;
    let mut sums_twin = DeviceBuffer::<f32>::zeroed(stream, 2 * options)?;
    let config = LaunchConfig::new(Grid::x(options as u32), Block::x(MC_THREADS as u32));
    let ms = median_ms(stream, || {
        ports::monte_carlo_call::launch(stream, config, 7, path_n, &data, &mut sums)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MONTE_CARLO_C,
            config,
            &[
                KernelArg::scalar(7u32),
                KernelArg::scalar(path_n as i32),
                KernelArg::slice(&data_twin),
                KernelArg::slice_mut(&mut sums_twin),
            ],
        )
    })?;
    let ours: Vec<f32> = sums
        .to_host(stream)?
        .iter()
        .flat_map(|s| [s.sum, s.sum_sq])
        .collect();
    agree("monte carlo", &ours, &sums_twin.to_host(stream)?, 1e-4);
    Ok(row(
        "port monte carlo",
        format!("{options} options x 2^{}", path_n.trailing_zeros()),
        ms,
        twin_ms,
        (options * path_n) as f64 / 1e9,
        "Gpath/s",
    ))
}

fn radix_split(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u32> = values(n, 185)
        .iter()
        .map(|v| v.to_bits().wrapping_mul(0x85EB_CA6B).rotate_left(7))
        .collect();
    let keys = DeviceBuffer::from_host(stream, &host)?;
    let chunks = n / SPLIT_BLOCK;
    let mut sorted = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut sorted_twin = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut counts = DeviceBuffer::<u32>::zeroed(stream, RADIX * chunks)?;
    let mut counts_twin = DeviceBuffer::<u32>::zeroed(stream, RADIX * chunks)?;
    let config = LaunchConfig::new(Grid::x(chunks as u32), Block::x(SPLIT_BLOCK as u32));
    let shift = 8u32;
    let ms = median_ms(stream, || {
        ports::radix_split_4bit::launch(stream, config, shift, &keys, &mut sorted, &mut counts)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &RADIX_SPLIT_C,
            config,
            &[
                KernelArg::scalar(shift),
                KernelArg::slice(&keys),
                KernelArg::slice_mut(&mut sorted_twin),
                KernelArg::slice_mut(&mut counts_twin),
            ],
        )
    })?;
    agree_exact(
        "radix split",
        &sorted.to_host(stream)?,
        &sorted_twin.to_host(stream)?,
        0,
    );
    agree_exact(
        "radix split counts",
        &counts.to_host(stream)?,
        &counts_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port radix split",
        format!("2^{}, 4 bits", n.trailing_zeros()),
        ms,
        twin_ms,
        (2 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}
