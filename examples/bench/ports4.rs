//! Rows for the fourth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels4.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels4::{self as ports, HIST_BINS, MASK_WIDTH, SCAN_BLOCK};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{CONV2D_C, HISTOGRAM_F32_C, KMEANS_C, SCAN_NAIVE_C, STENCIL7_C};

/// The convolution mask both versions use: 1, 2, ..., 25 (the twin spells it out).
pub fn conv_mask() -> [f32; MASK_WIDTH * MASK_WIDTH] {
    std::array::from_fn(|i| (i + 1) as f32)
}

/// Every row of the fourth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port stencil 3d") {
        rows.push(stencil7(stream, 512, 512, 256)?);
    }
    if only.wants("port scan (naive)") {
        rows.push(scan_naive(stream, 1 << 24)?);
    }
    if only.wants("port convolution 2d") {
        rows.push(conv2d(stream, 8192, 8192, false)?);
        rows.push(conv2d(stream, 8192, 8192, true)?);
    }
    if only.wants("port k-means") {
        rows.push(kmeans(stream, 1 << 20, 34, 5)?);
    }
    if only.wants("port histogram (f32)") {
        rows.push(histogram_f32(stream, 1 << 26)?);
    }
    Ok(rows)
}

fn stencil7(stream: &Stream, nx: usize, ny: usize, nz: usize) -> gpu_dsl::Result<Row> {
    let n = nx * ny * nz;
    let input = DeviceBuffer::from_host(stream, &values(n, 1))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let (c0, c1) = (0.4f32, 0.1f32);
    let grid = Grid::xy(nx.div_ceil(32) as u32, ny.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::stencil7::launch(stream, config, nx, ny, nz, c0, c1, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &STENCIL7_C,
            config,
            &[
                KernelArg::scalar(nx as i32),
                KernelArg::scalar(ny as i32),
                KernelArg::scalar(nz as i32),
                KernelArg::scalar(c0),
                KernelArg::scalar(c1),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "stencil 3d",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * n as f64 / 1e9;
    Ok(row(
        "port stencil 3d",
        format!("{nx}x{ny}x{nz}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn scan_naive(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let input = DeviceBuffer::from_host(stream, &values(n, 2))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::new(
        Grid::x((n / SCAN_BLOCK) as u32),
        Block::x(SCAN_BLOCK as u32),
    )
    .with_shared_mem((2 * SCAN_BLOCK * 4) as u32);
    let ms = median_ms(stream, || {
        ports::scan_naive::launch(stream, config, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SCAN_NAIVE_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "scan naive",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * n as f64 / 1e9;
    Ok(row(
        "port scan (naive)",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

/// The 2-D convolution with its offsets in `i64` or (`i32`) in `i32`.
fn conv2d(stream: &Stream, width: usize, height: usize, i32: bool) -> gpu_dsl::Result<Row> {
    let n = width * height;
    let input = DeviceBuffer::from_host(stream, &values(n, 3))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mask = conv_mask();
    let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        if i32 {
            ports::conv2d_i32::launch(stream, config, &mask, width, height, &input, &mut out)
        } else {
            ports::conv2d::launch(stream, config, &mask, width, height, &input, &mut out)
        }
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &CONV2D_C,
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
        "convolution 2d",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * n as f64 / 1e9;
    let offsets = if i32 { "i32" } else { "i64" };
    Ok(row(
        "port convolution 2d",
        format!("{width}x{height}, 5x5, {offsets}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn kmeans(
    stream: &Stream,
    points: usize,
    nfeatures: usize,
    nclusters: usize,
) -> gpu_dsl::Result<Row> {
    let features = DeviceBuffer::from_host(stream, &values(points * nfeatures, 4))?;
    let clusters = DeviceBuffer::from_host(stream, &values(nclusters * nfeatures, 5))?;
    let mut member = DeviceBuffer::<u32>::zeroed(stream, points)?;
    let mut member_twin = DeviceBuffer::<u32>::zeroed(stream, points)?;
    let config = LaunchConfig::try_for_len(points, 256)?;
    let ms = median_ms(stream, || {
        ports::kmeans_assign::launch(stream, config, nfeatures, &features, &clusters, &mut member)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &KMEANS_C,
            config,
            &[
                KernelArg::scalar(nfeatures as i32),
                KernelArg::slice(&features),
                KernelArg::slice(&clusters),
                KernelArg::slice_mut(&mut member_twin),
            ],
        )
    })?;
    agree_exact(
        "k-means",
        &member.to_host(stream)?,
        &member_twin.to_host(stream)?,
        0,
    );
    let gb = 4.0 * (points * nfeatures) as f64 / 1e9;
    Ok(row(
        "port k-means",
        format!("{points} x {nfeatures}, k={nclusters}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn histogram_f32(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    // Values in [0, 1) spread over every bin.
    let host: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 65536) as f32 / 65536.0)
        .collect();
    let data = DeviceBuffer::from_host(stream, &host)?;
    let mut bins = DeviceBuffer::<u32>::zeroed(stream, HIST_BINS)?;
    let mut bins_twin = DeviceBuffer::<u32>::zeroed(stream, HIST_BINS)?;
    let config = LaunchConfig::new(Grid::x(1024), Block::x(256));
    let ms = median_ms(stream, || {
        ports::histogram_f32::launch(stream, config, &data, 0.0, 1.0, &mut bins)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HISTOGRAM_F32_C,
            config,
            &[
                KernelArg::slice(&data),
                KernelArg::scalar(0.0f32),
                KernelArg::scalar(1.0f32),
                KernelArg::slice_mut(&mut bins_twin),
            ],
        )
    })?;
    // Both were run the same number of times, so their counts agree.
    agree_exact(
        "histogram f32",
        &bins.to_host(stream)?,
        &bins_twin.to_host(stream)?,
        0,
    );
    let gb = 4.0 * n as f64 / 1e9;
    Ok(row(
        "port histogram (f32)",
        format!("2^{}, {HIST_BINS} bins", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}
