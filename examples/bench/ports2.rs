//! Rows for the second set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels2.rs`), each timed against its CUDA C twin as `ports.rs` times the first set:
//! the textbook or CUDA-sample code of the same algorithm with the same launch shape, compiled
//! in the same run by the same NVRTC, and checked to agree with the port.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels2::{
    self as ports, DOT_BLOCK, KERNEL_LENGTH, LOG_NUM_BANKS, OPTIONS_BLOCK, ROWS_BLOCKDIM_X,
    ROWS_BLOCKDIM_Y, ROWS_RESULT_STEPS, SCAN_CHUNK, SORT_CHUNK,
};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{
    BITONIC_C, BLACK_SCHOLES_C, CONVOLUTION_ROWS_C, DOT_C, FWT_C, GEMV_C, MANDELBROT_C, PRESCAN_C,
    SOBEL_C, SOFTMAX_C, SPMV_C,
};

/// The row convolution's filter: the binomial coefficients C(16, k), exact in `f32` (the twin
/// spells them out in its `__constant__` initialiser).
fn binomial_taps() -> [f32; KERNEL_LENGTH] {
    let mut taps = [1.0f32; KERNEL_LENGTH];
    for k in 1..KERNEL_LENGTH {
        taps[k] = taps[k - 1] * (KERNEL_LENGTH - k) as f32 / k as f32;
    }
    taps
}

/// Every row of the second set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port spmv (csr vector)") {
        rows.push(spmv(stream, 1 << 20)?);
    }
    if only.wants("port black-scholes") {
        rows.push(black_scholes(stream, 1 << 25)?);
    }
    if only.wants("port scan (blelloch)") {
        rows.push(scan(stream, 1 << 26)?);
    }
    if only.wants("port bitonic sort") {
        rows.push(bitonic(stream, 1 << 24)?);
    }
    if only.wants("port convolution rows") {
        rows.push(convolution_rows(stream, 8192, 8192)?);
    }
    if only.wants("port softmax") {
        rows.push(softmax(stream, 16384, 4096)?);
    }
    if only.wants("port sobel (u8)") {
        rows.push(sobel(stream, 16384, 16384)?);
    }
    if only.wants("port mandelbrot") {
        rows.push(mandelbrot(stream, 4096, 4096)?);
    }
    if only.wants("port gemv (warp/row)") {
        rows.push(gemv(stream, 16384, 8192)?);
    }
    if only.wants("port dot") {
        rows.push(dot(stream, 1 << 26)?);
    }
    if only.wants("port walsh transform") {
        rows.push(walsh(stream, 11, 1 << 15)?);
    }
    Ok(rows)
}

fn spmv(stream: &Stream, rows: usize) -> gpu_dsl::Result<Row> {
    // 16 to 64 nonzeros a row, columns scattered over the whole vector.
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    for r in 0..rows {
        let len = 16 + (r * 37) % 49;
        col_idx.extend((0..len).map(|j| ((r * 7919 + j * 104_729) % rows) as u32));
        row_ptr.push(col_idx.len() as u32);
    }
    let nnz = col_idx.len();
    let d_ptr = DeviceBuffer::from_host(stream, &row_ptr)?;
    let d_cols = DeviceBuffer::from_host(stream, &col_idx)?;
    let d_vals = DeviceBuffer::from_host(stream, &values(nnz, 7))?;
    let x = DeviceBuffer::from_host(stream, &values(rows, 8))?;
    let mut y = DeviceBuffer::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::zeroed(stream, rows)?;
    let config = LaunchConfig::new(Grid::x((rows * 32).div_ceil(256) as u32), Block::x(256));
    let ms = median_ms(stream, || {
        ports::spmv_csr_vector::launch(stream, config, &d_ptr, &d_cols, &d_vals, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SPMV_C,
            config,
            &[
                KernelArg::scalar(rows as i32),
                KernelArg::slice(&d_ptr),
                KernelArg::slice(&d_cols),
                KernelArg::slice(&d_vals),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree("spmv", &y.to_host(stream)?, &y_twin.to_host(stream)?, 1e-5);
    // The matrix (values, columns, row pointers) and both vectors, each read or written once.
    let gb = (8 * nnz + 4 * (rows + 1) + 8 * rows) as f64 / 1e9;
    Ok(row(
        "port spmv (csr vector)",
        format!("2^{} rows, {}M nnz", rows.trailing_zeros(), nnz >> 20),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn black_scholes(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let scaled = |seed, mid: f32, half: f32| -> Vec<f32> {
        values(n, seed).iter().map(|v| mid + half * v).collect()
    };
    let price = DeviceBuffer::from_host(stream, &scaled(9, 17.5, 12.5))?;
    let strike = DeviceBuffer::from_host(stream, &scaled(10, 50.5, 49.5))?;
    let years = DeviceBuffer::from_host(stream, &scaled(11, 5.25, 4.75))?;
    let (riskfree, volatility) = (0.02f32, 0.30f32);
    let mut call = DeviceBuffer::zeroed(stream, n)?;
    let mut put = DeviceBuffer::zeroed(stream, n)?;
    let mut call_twin = DeviceBuffer::zeroed(stream, n)?;
    let mut put_twin = DeviceBuffer::zeroed(stream, n)?;
    let config = LaunchConfig::new(Grid::x(16 * 132), Block::x(OPTIONS_BLOCK as u32));
    let ms = median_ms(stream, || {
        ports::black_scholes::launch(
            stream, config, &mut call, &mut put, &price, &strike, &years, riskfree, volatility,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BLACK_SCHOLES_C,
            config,
            &[
                KernelArg::slice_mut(&mut call_twin),
                KernelArg::slice_mut(&mut put_twin),
                KernelArg::slice(&price),
                KernelArg::slice(&strike),
                KernelArg::slice(&years),
                KernelArg::scalar(riskfree),
                KernelArg::scalar(volatility),
                KernelArg::scalar(n as i32),
            ],
        )
    })?;
    agree(
        "black-scholes call",
        &call.to_host(stream)?,
        &call_twin.to_host(stream)?,
        1e-5,
    );
    agree(
        "black-scholes put",
        &put.to_host(stream)?,
        &put_twin.to_host(stream)?,
        1e-5,
    );
    // Three inputs read, two prices written per option.
    let gb = 20.0 * n as f64 / 1e9;
    Ok(row(
        "port black-scholes",
        format!("2^{} options", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn scan(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let blocks = n / SCAN_CHUNK;
    let input = DeviceBuffer::from_host(stream, &values(n, 12))?;
    let mut out = DeviceBuffer::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::zeroed(stream, n)?;
    let mut sums = DeviceBuffer::zeroed(stream, blocks)?;
    let mut sums_twin = DeviceBuffer::zeroed(stream, blocks)?;
    let padded = SCAN_CHUNK + (SCAN_CHUNK >> LOG_NUM_BANKS);
    let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(SCAN_CHUNK as u32 / 2))
        .with_shared_mem((padded * 4) as u32);
    let ms = median_ms(stream, || {
        ports::prescan_blocks::launch(stream, config, &input, &mut out, &mut sums)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &PRESCAN_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::slice_mut(&mut sums_twin),
            ],
        )
    })?;
    agree(
        "scan",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-6,
    );
    agree(
        "scan sums",
        &sums.to_host(stream)?,
        &sums_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * n as f64 / 1e9;
    Ok(row(
        "port scan (blelloch)",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn bitonic(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let keys: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let src_key = DeviceBuffer::from_host(stream, &keys)?;
    let src_val = DeviceBuffer::from_host(stream, &vals)?;
    let mut dst_key = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut dst_val = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut key_twin = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut val_twin = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let config = LaunchConfig::new(
        Grid::x((n / SORT_CHUNK) as u32),
        Block::x(SORT_CHUNK as u32 / 2),
    );
    let ms = median_ms(stream, || {
        ports::bitonic_sort_shared::launch(
            stream,
            config,
            &mut dst_key,
            &mut dst_val,
            &src_key,
            &src_val,
            true,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BITONIC_C,
            config,
            &[
                KernelArg::slice_mut(&mut key_twin),
                KernelArg::slice_mut(&mut val_twin),
                KernelArg::slice(&src_key),
                KernelArg::slice(&src_val),
                KernelArg::scalar(1u32),
            ],
        )
    })?;
    let (ours, theirs) = (dst_key.to_host(stream)?, key_twin.to_host(stream)?);
    agree_exact("bitonic sort keys", &ours, &theirs, 0);
    agree_exact(
        "bitonic sort values",
        &dst_val.to_host(stream)?,
        &val_twin.to_host(stream)?,
        0,
    );
    // Keys and values, each read and written once.
    let gb = 16.0 * n as f64 / 1e9;
    Ok(row(
        "port bitonic sort",
        format!("2^{} in 1024s", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn convolution_rows(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let taps = binomial_taps();
    let src = DeviceBuffer::from_host(stream, &values(width * height, 13))?;
    let mut dst = DeviceBuffer::zeroed(stream, width * height)?;
    let mut dst_twin = DeviceBuffer::zeroed(stream, width * height)?;
    let grid = Grid::xy(
        (width / (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X)) as u32,
        (height / ROWS_BLOCKDIM_Y) as u32,
    );
    let config = LaunchConfig::new(
        grid,
        Block::xy(ROWS_BLOCKDIM_X as u32, ROWS_BLOCKDIM_Y as u32),
    );
    let ms = median_ms(stream, || {
        ports::convolution_rows::launch(stream, config, &taps, width, &src, &mut dst)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &CONVOLUTION_ROWS_C,
            config,
            &[
                KernelArg::slice_mut(&mut dst_twin),
                KernelArg::slice(&src),
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::scalar(width as i32),
            ],
        )
    })?;
    agree(
        "convolution rows",
        &dst.to_host(stream)?,
        &dst_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * (width * height) as f64 / 1e9;
    Ok(row(
        "port convolution rows",
        format!("{width}x{height}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn softmax(stream: &Stream, rows: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<f32> = values(rows * cols, 14).iter().map(|v| 8.0 * v).collect();
    let x = DeviceBuffer::from_host(stream, &host)?;
    let mut y = DeviceBuffer::zeroed(stream, rows * cols)?;
    let mut y_twin = DeviceBuffer::zeroed(stream, rows * cols)?;
    let config = LaunchConfig::new(Grid::x(rows as u32), Block::x(256));
    let ms = median_ms(stream, || {
        ports::softmax_rows::launch(stream, config, cols, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SOFTMAX_C,
            config,
            &[
                KernelArg::scalar(cols as i32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "softmax",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    // Each element read from memory once (the row's later passes hit the caches) and written once.
    let gb = 8.0 * (rows * cols) as f64 / 1e9;
    Ok(row(
        "port softmax",
        format!("{rows}x{cols}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn sobel(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u8> = (0..width * height)
        .map(|i| ((i * 7919) >> 5) as u8)
        .collect();
    let image = DeviceBuffer::from_host(stream, &host)?;
    let mut edges = DeviceBuffer::<u8>::zeroed(stream, width * height)?;
    let mut edges_twin = DeviceBuffer::<u8>::zeroed(stream, width * height)?;
    let scale = 0.5f32;
    let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(16) as u32);
    let config = LaunchConfig::new(grid, Block::xy(16, 16));
    let ms = median_ms(stream, || {
        ports::sobel::launch(stream, config, width, height, scale, &image, &mut edges)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SOBEL_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::scalar(scale),
                KernelArg::slice(&image),
                KernelArg::slice_mut(&mut edges_twin),
            ],
        )
    })?;
    agree_exact(
        "sobel",
        &edges.to_host(stream)?,
        &edges_twin.to_host(stream)?,
        0,
    );
    let gb = 2.0 * (width * height) as f64 / 1e9;
    Ok(row(
        "port sobel (u8)",
        format!("{width}x{height}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn mandelbrot(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let (x_min, y_min, step, max_iter) = (-2.0f32, -1.25f32, 2.5 / width as f32, 512u32);
    let mut counts = DeviceBuffer::<u32>::zeroed(stream, width * height)?;
    let mut counts_twin = DeviceBuffer::<u32>::zeroed(stream, width * height)?;
    let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(16) as u32);
    let config = LaunchConfig::new(grid, Block::xy(16, 16));
    let ms = median_ms(stream, || {
        ports::mandelbrot::launch(
            stream,
            config,
            width,
            height,
            x_min,
            y_min,
            step,
            max_iter,
            &mut counts,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MANDELBROT_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::scalar(x_min),
                KernelArg::scalar(y_min),
                KernelArg::scalar(step),
                KernelArg::scalar(max_iter as i32),
                KernelArg::slice_mut(&mut counts_twin),
            ],
        )
    })?;
    let (ours, theirs) = (counts.to_host(stream)?, counts_twin.to_host(stream)?);
    // Contracting to FMAs differently may move a point on the set's chaotic edge.
    agree_exact("mandelbrot", &ours, &theirs, ours.len() / 1000);
    let giterations = theirs.iter().map(|&i| u64::from(i)).sum::<u64>() as f64 / 1e9;
    Ok(row(
        "port mandelbrot",
        format!("{width}x{height}, {max_iter} it."),
        ms,
        twin_ms,
        giterations,
        "Giter/s",
    ))
}

fn gemv(stream: &Stream, rows: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(rows * cols, 15))?;
    let x = DeviceBuffer::from_host(stream, &values(cols, 16))?;
    let mut y = DeviceBuffer::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::zeroed(stream, rows)?;
    let config = LaunchConfig::new(Grid::x((rows * 32).div_ceil(256) as u32), Block::x(256));
    let ms = median_ms(stream, || {
        ports::gemv_warp::launch(stream, config, cols, &a, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &GEMV_C,
            config,
            &[
                KernelArg::scalar(rows as i32),
                KernelArg::scalar(cols as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree("gemv", &y.to_host(stream)?, &y_twin.to_host(stream)?, 1e-5);
    let gb = 4.0 * (rows * cols + cols + rows) as f64 / 1e9;
    Ok(row(
        "port gemv (warp/row)",
        format!("{rows}x{cols}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn dot(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(n, 17))?;
    let b = DeviceBuffer::from_host(stream, &values(n, 18))?;
    let mut total = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let mut total_twin = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let config = LaunchConfig::new(Grid::x(8 * 132), Block::x(DOT_BLOCK as u32));
    let ms = median_ms(stream, || {
        ports::dot::launch(stream, config, &a, &b, &mut total)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &DOT_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut total_twin),
            ],
        )
    })?;
    // Both accumulated the same number of runs (30).
    agree(
        "dot",
        &total.to_host(stream)?,
        &total_twin.to_host(stream)?,
        1e-3,
    );
    let gb = 8.0 * n as f64 / 1e9;
    Ok(row(
        "port dot",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn walsh(stream: &Stream, log2n: u32, chunks: usize) -> gpu_dsl::Result<Row> {
    let n = 1usize << log2n;
    let input = DeviceBuffer::from_host(stream, &values(n * chunks, 19))?;
    let mut out = DeviceBuffer::zeroed(stream, n * chunks)?;
    let mut out_twin = DeviceBuffer::zeroed(stream, n * chunks)?;
    let config = LaunchConfig::new(Grid::x(chunks as u32), Block::x(n as u32 / 4))
        .with_shared_mem((n * 4) as u32);
    let ms = median_ms(stream, || {
        ports::fwt_batch1::launch(stream, config, &mut out, &input, log2n)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &FWT_C,
            config,
            &[
                KernelArg::slice_mut(&mut out_twin),
                KernelArg::slice(&input),
                KernelArg::scalar(log2n as i32),
            ],
        )
    })?;
    agree(
        "walsh transform",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0.0,
    );
    let gb = 8.0 * (n * chunks) as f64 / 1e9;
    Ok(row(
        "port walsh transform",
        format!("2^{} in 2^{log2n}s", (n * chunks).trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}
