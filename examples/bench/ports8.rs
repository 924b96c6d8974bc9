//! Rows for the eighth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels8.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels8::{self as ports, Node, FENCE_THREADS};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{BFS_C, FENCE_SUM_C, SPMV_ELL_C};

/// Every row of the eighth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port bfs level") {
        rows.push(bfs(stream, 1 << 22)?);
    }
    if only.wants("port spmv (ell)") {
        rows.push(spmv_ell(stream, 1 << 22, 16)?);
    }
    if only.wants("port fence sum") {
        rows.push(fence_sum(stream, 1 << 26)?);
    }
    Ok(rows)
}

/// A pseudo-random number from `i` (a multiplicative hash).
fn hash(i: usize) -> usize {
    (i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29) as usize
}

/// A random graph of `n` nodes of 2 to 10 edges each, in Rodinia's form, with the frontier
/// (every 8th node, visited) and half the other nodes visited.
pub fn graph(n: usize) -> (Vec<Node>, Vec<u32>, Vec<bool>, Vec<bool>) {
    let mut nodes = Vec::with_capacity(n);
    let mut edges = Vec::new();
    for v in 0..n {
        let degree = 2 + hash(v) % 9;
        nodes.push(Node {
            start: edges.len() as u32,
            edges: degree as u32,
        });
        edges.extend((0..degree).map(|e| (hash(v * 16 + e + 1) % n) as u32));
    }
    let mask: Vec<bool> = (0..n).map(|v| v.is_multiple_of(8)).collect();
    let visited: Vec<bool> = (0..n)
        .map(|v| v.is_multiple_of(8) || hash(v + 7).is_multiple_of(2))
        .collect();
    (nodes, edges, mask, visited)
}

fn bfs(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let (nodes, edges, mask, visited) = graph(n);
    let words: Vec<u32> = nodes.iter().flat_map(|v| [v.start, v.edges]).collect();
    let frontier = DeviceBuffer::from_host(stream, &mask)?;
    let dnodes = DeviceBuffer::from_host(stream, &nodes)?;
    let dwords = DeviceBuffer::from_host(stream, &words)?;
    let dedges = DeviceBuffer::from_host(stream, &edges)?;
    let dvisited = DeviceBuffer::from_host(stream, &visited)?;
    // The frontier is one level, so a neighbour shared by two of its nodes gets one cost.
    let cost0: Vec<i32> = (0..n).map(|v| if mask[v] { 4 } else { -1 }).collect();
    let (mut mask_a, mut mask_b) = (
        DeviceBuffer::<bool>::zeroed(stream, n)?,
        DeviceBuffer::<bool>::zeroed(stream, n)?,
    );
    let (mut up_a, mut up_b) = (
        DeviceBuffer::<bool>::zeroed(stream, n)?,
        DeviceBuffer::<bool>::zeroed(stream, n)?,
    );
    let (mut cost_a, mut cost_b) = (
        DeviceBuffer::from_host(stream, &cost0)?,
        DeviceBuffer::from_host(stream, &cost0)?,
    );
    let config = LaunchConfig::try_for_len(n, 256)?;
    // Each run starts from the same frontier: the copy is timed with both kernels alike.
    let ms = median_ms(stream, || {
        mask_a.copy_from(stream, &frontier)?;
        ports::bfs_expand::launch(
            stream,
            config,
            &dnodes,
            &dedges,
            &mut mask_a,
            &mut up_a,
            &dvisited,
            &mut cost_a,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        mask_b.copy_from(stream, &frontier)?;
        stream.launch(
            &BFS_C,
            config,
            &[
                KernelArg::slice(&dwords),
                KernelArg::slice(&dedges),
                KernelArg::slice_mut(&mut mask_b),
                KernelArg::slice_mut(&mut up_b),
                KernelArg::slice(&dvisited),
                KernelArg::slice_mut(&mut cost_b),
                KernelArg::scalar(n as i32),
            ],
        )
    })?;
    agree_exact(
        "bfs cost",
        &cost_a.to_host(stream)?,
        &cost_b.to_host(stream)?,
        0,
    );
    agree_exact(
        "bfs next frontier",
        &up_a.to_host(stream)?,
        &up_b.to_host(stream)?,
        0,
    );
    Ok(row(
        "port bfs level",
        format!("2^{} nodes, 1/8 frontier", n.trailing_zeros()),
        ms,
        twin_ms,
        edges.len() as f64 / 8.0 / 1e9,
        "Gedge/s",
    ))
}

fn spmv_ell(stream: &Stream, rows: usize, width: usize) -> gpu_dsl::Result<Row> {
    let cols: Vec<u32> = (0..rows * width).map(|i| (hash(i) % rows) as u32).collect();
    let dcols = DeviceBuffer::from_host(stream, &cols)?;
    let vals = DeviceBuffer::from_host(stream, &values(rows * width, 67))?;
    let x = DeviceBuffer::from_host(stream, &values(rows, 71))?;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let config = LaunchConfig::try_for_len(rows, 256)?;
    let ms = median_ms(stream, || {
        ports::spmv_ell::launch(stream, config, rows, width, &dcols, &vals, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SPMV_ELL_C,
            config,
            &[
                KernelArg::scalar(rows as i32),
                KernelArg::scalar(width as i32),
                KernelArg::slice(&dcols),
                KernelArg::slice(&vals),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "spmv ell",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port spmv (ell)",
        format!("2^{} rows, {width} a row", rows.trailing_zeros()),
        ms,
        twin_ms,
        8.0 * (rows * width) as f64 / 1e9,
        "GB/s",
    ))
}

fn fence_sum(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let blocks = 1024;
    let input = DeviceBuffer::from_host(stream, &values(n, 73))?;
    let mut partial = DeviceBuffer::<f32>::zeroed(stream, blocks)?;
    let mut partial_twin = DeviceBuffer::<f32>::zeroed(stream, blocks)?;
    let mut done = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let mut done_twin = DeviceBuffer::<u32>::zeroed(stream, 1)?;
    let mut total = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let mut total_twin = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(FENCE_THREADS as u32));
    let ms = median_ms(stream, || {
        ports::fence_sum::launch(stream, config, &input, &mut partial, &mut done, &mut total)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &FENCE_SUM_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut partial_twin),
                KernelArg::slice_mut(&mut done_twin),
                KernelArg::slice_mut(&mut total_twin),
            ],
        )
    })?;
    agree(
        "fence sum",
        &total.to_host(stream)?,
        &total_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port fence sum",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        4.0 * n as f64 / 1e9,
        "GB/s",
    ))
}
