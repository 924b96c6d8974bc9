//! Rows for the fifth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels5.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels5::{self as ports, NO_PATH};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{
    BOX_FILTER_C, COMPACT_C, FLOYD_STEP_C, GEMV_ROWS_C, HEAT_RING_C, MURMUR_C, PATH_ROW_C,
};

/// Every row of the fifth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port box filter") {
        rows.push(box_filter(stream, 8192, 8192)?);
    }
    if only.wants("port floyd-warshall") {
        rows.push(floyd(stream, 4096)?);
    }
    if only.wants("port pathfinder") {
        rows.push(path_row(stream, 1 << 26)?);
    }
    if only.wants("port compaction") {
        rows.push(compact(stream, 1 << 26)?);
    }
    if only.wants("port gemv (row iterator)") {
        rows.push(gemv_rows(stream, 16384, 4096)?);
    }
    if only.wants("port heat ring") {
        rows.push(heat_ring(stream, 1 << 26)?);
    }
    if only.wants("port murmur mix") {
        rows.push(murmur(stream, 1 << 26)?);
    }
    Ok(rows)
}

fn box_filter(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let n = width * height;
    let input = DeviceBuffer::from_host(stream, &values(n, 11))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::box_filter::launch(stream, config, width, height, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BOX_FILTER_C,
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
        "box filter",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port box filter",
        format!("{width}x{height}, 5x5, isize"),
        ms,
        twin_ms,
        8.0 * n as f64 / 1e9,
        "GB/s",
    ))
}

/// Distances of a graph with an edge `i → j` of weight 1-100 wherever `(i * 31 + j * 17) % 7`
/// is 0, `NO_PATH` elsewhere, 0 on the diagonal.
pub fn floyd_graph(n: usize) -> Vec<i32> {
    (0..n * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            if i == j {
                0
            } else if (i * 31 + j * 17) % 7 == 0 {
                ((i * 13 + j * 7) % 100 + 1) as i32
            } else {
                NO_PATH
            }
        })
        .collect()
}

fn floyd(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let graph = floyd_graph(n);
    let mut dist = DeviceBuffer::from_host(stream, &graph)?;
    let mut dist_twin = DeviceBuffer::from_host(stream, &graph)?;
    let grid = Grid::xy(n.div_ceil(32) as u32, n.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    // The same sequence of k on both: every run a step, so the last runs relax little.
    let mut k = 0;
    let ms = median_ms(stream, || {
        k = (k + 97) % n;
        ports::floyd_step::launch(stream, config, n, k, &mut dist)
    })?;
    let mut k = 0;
    let twin_ms = median_ms(stream, || {
        k = (k + 97) % n;
        stream.launch(
            &FLOYD_STEP_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::scalar(k as i32),
                KernelArg::slice_mut(&mut dist_twin),
            ],
        )
    })?;
    agree_exact(
        "floyd-warshall",
        &dist.to_host(stream)?,
        &dist_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port floyd-warshall",
        format!("{n} vertices, a step"),
        ms,
        twin_ms,
        8.0 * (n * n) as f64 / 1e9,
        "GB/s",
    ))
}

fn path_row(stream: &Stream, width: usize) -> gpu_dsl::Result<Row> {
    let wall: Vec<i32> = (0..width).map(|j| ((j * 7919) % 10) as i32).collect();
    let prev: Vec<i32> = (0..width).map(|j| ((j * 104_729) % 1000) as i32).collect();
    let wall = DeviceBuffer::from_host(stream, &wall)?;
    let prev = DeviceBuffer::from_host(stream, &prev)?;
    let mut next = DeviceBuffer::<i32>::zeroed(stream, width)?;
    let mut next_twin = DeviceBuffer::<i32>::zeroed(stream, width)?;
    let config = LaunchConfig::try_for_len(width, 256)?;
    let ms = median_ms(stream, || {
        ports::path_row::launch(stream, config, width, 0, &wall, &prev, &mut next)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &PATH_ROW_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(0i32),
                KernelArg::slice(&wall),
                KernelArg::slice(&prev),
                KernelArg::slice_mut(&mut next_twin),
            ],
        )
    })?;
    agree_exact(
        "pathfinder",
        &next.to_host(stream)?,
        &next_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port pathfinder",
        format!("2^{} cells, a row", width.trailing_zeros()),
        ms,
        twin_ms,
        12.0 * width as f64 / 1e9,
        "GB/s",
    ))
}

fn compact(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host = values(n, 13);
    let kept = host.iter().filter(|v| **v > 0.0).count();
    let input = DeviceBuffer::from_host(stream, &host)?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut count = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let mut count_twin = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    // Each run starts from a count of 0; both pay for the one-word fill.
    let ms = median_ms(stream, || {
        count.fill(stream, 0)?;
        ports::compact_positive::launch(stream, config, &input, &mut out, &mut count)
    })?;
    let twin_ms = median_ms(stream, || {
        count_twin.fill(stream, 0)?;
        stream.launch(
            &COMPACT_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::slice_mut(&mut count_twin),
            ],
        )
    })?;
    // The order differs from run to run; the values kept do not.
    let sorted = |buffer: &DeviceBuffer<f32>| -> gpu_dsl::Result<Vec<u32>> {
        let mut kept_values: Vec<u32> = buffer.to_host(stream)?[..kept]
            .iter()
            .map(|v| v.to_bits())
            .collect();
        kept_values.sort_unstable();
        Ok(kept_values)
    };
    agree_exact("compaction", &sorted(&out)?, &sorted(&out_twin)?, 0);
    agree_exact(
        "compaction count",
        &count.to_host(stream)?,
        &[kept as u32],
        0,
    );
    Ok(row(
        "port compaction",
        format!("2^{}, {}% kept", n.trailing_zeros(), 100 * kept / n),
        ms,
        twin_ms,
        (4 * n + 4 * kept) as f64 / 1e9,
        "GB/s",
    ))
}

fn gemv_rows(stream: &Stream, rows: usize, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(rows * n, 17))?;
    let x = DeviceBuffer::from_host(stream, &values(n, 19))?;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let config = LaunchConfig::try_for_len(rows, 128)?;
    let ms = median_ms(stream, || {
        ports::gemv_rows::launch(stream, config, n, &a, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &GEMV_ROWS_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "gemv (row iterator)",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port gemv (row iterator)",
        format!("{rows}x{n}"),
        ms,
        twin_ms,
        4.0 * (rows * n) as f64 / 1e9,
        "GB/s",
    ))
}

fn heat_ring(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let u = DeviceBuffer::from_host(stream, &values(n, 23))?;
    let mut next = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut next_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let alpha = 0.2f32;
    let ms = median_ms(stream, || {
        ports::heat_ring::launch(stream, config, alpha, &u, &mut next)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HEAT_RING_C,
            config,
            &[
                KernelArg::scalar(alpha),
                KernelArg::slice(&u),
                KernelArg::slice_mut(&mut next_twin),
            ],
        )
    })?;
    agree(
        "heat ring",
        &next.to_host(stream)?,
        &next_twin.to_host(stream)?,
        1e-6,
    );
    Ok(row(
        "port heat ring",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        8.0 * n as f64 / 1e9,
        "GB/s",
    ))
}

fn murmur(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let keys = DeviceBuffer::from_host(stream, &host)?;
    let mut hashes = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut hashes_twin = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let seed = 0x9747_b28cu32;
    let ms = median_ms(stream, || {
        ports::murmur_mix::launch(stream, config, seed, &keys, &mut hashes)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MURMUR_C,
            config,
            &[
                KernelArg::scalar(seed),
                KernelArg::slice(&keys),
                KernelArg::slice_mut(&mut hashes_twin),
            ],
        )
    })?;
    agree_exact(
        "murmur mix",
        &hashes.to_host(stream)?,
        &hashes_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port murmur mix",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        8.0 * n as f64 / 1e9,
        "GB/s",
    ))
}
