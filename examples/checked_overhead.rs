//! What checked mode (bounds-checked indexing, Rust-style panics) costs on bandwidth-bound
//! kernels: each kernel timed in checked and unchecked mode in the same run.
//!
//! `cargo run --release --example checked_overhead [N]`

use gpu_dsl::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[kernel]
fn saxpy_grid_stride(a: f32, x: &[f32], y: &mut [f32]) {
    for i in (global_idx().x..y.len()).step_by(grid_size().x) {
        y[i] = a * x[i] + y[i];
    }
}

#[kernel]
fn copy4(x: &[f32], y: &mut [f32]) {
    let i = global_idx().x * 4;
    if i + 4 <= x.len() {
        let v = x.load4(i);
        y.store4(i, v);
    }
}

#[kernel]
fn gather(indices: &[u32], x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = x[indices[i] as usize];
    }
}

/// Median milliseconds of `runs` launches, after one warm-up.
fn time(
    stream: &Stream,
    runs: usize,
    mut launch: impl FnMut() -> gpu_dsl::Result<()>,
) -> gpu_dsl::Result<f32> {
    launch()?;
    stream.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = stream.record_event()?;
        launch()?;
        let end = stream.record_event()?;
        times.push(start.elapsed_ms(&end)?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[runs / 2])
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> gpu_dsl::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1 << 26);
    let gpu = Gpu::new(0)?;
    println!("device: {}, n = {n}", gpu.name());
    let stream = gpu.default_stream();
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let x = DeviceBuffer::from_host(&stream, &host)?;
    let mut y = DeviceBuffer::from_host(&stream, &host)?;
    let indices_host: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % n as u32)
        .collect();
    let indices = DeviceBuffer::from_host(&stream, &indices_host)?;
    let runs = 30;
    let one = LaunchConfig::for_len(n, 256);
    let stride = LaunchConfig::new(Grid::x(gpu.sm_count() * 8), Block::x(256));
    let quarter = LaunchConfig::for_len(n / 4, 256);

    println!(
        "{:<20} {:>12} {:>12} {:>10}",
        "kernel", "unchecked", "checked", "checked/unchecked"
    );
    let mut rows = Vec::new();
    for checked in [false, true] {
        let t_saxpy = time(&stream, runs, || {
            saxpy::launch(&stream, one.checked(checked), 2.0, &x, &mut y)
        })?;
        let t_stride = time(&stream, runs, || {
            saxpy_grid_stride::launch(&stream, stride.checked(checked), 2.0, &x, &mut y)
        })?;
        let t_copy = time(&stream, runs, || {
            copy4::launch(&stream, quarter.checked(checked), &x, &mut y)
        })?;
        let t_gather = time(&stream, runs, || {
            gather::launch(&stream, one.checked(checked), &indices, &x, &mut y)
        })?;
        rows.push([t_saxpy, t_stride, t_copy, t_gather]);
    }
    let bytes = [12.0, 12.0, 8.0, 12.0].map(|b| b * n as f64);
    let names = ["saxpy", "saxpy grid-stride", "copy (float4)", "gather"];
    for k in 0..4 {
        let (u, c) = (rows[0][k], rows[1][k]);
        let gbps = |ms: f32| bytes[k] / (ms as f64 * 1e-3) / 1e9;
        println!(
            "{:<20} {:>7.0} GB/s {:>7.0} GB/s {:>10.3}",
            names[k],
            gbps(u),
            gbps(c),
            c / u
        );
    }
    Ok(())
}
