//! The profiler over a small workload: uploads, a few library kernels on two streams, copies
//! through pinned memory and back; prints the table and writes a Chrome trace.
//!
//! `cargo run --release --example profile [N] [TRACE]`: N floats per buffer (default 1 Mi),
//! the trace to TRACE (default `profile.json`; open it in chrome://tracing or
//! ui.perfetto.dev). Without a GPU (or with `GPU_BACKEND=cpu`) it runs on the CPU backend,
//! where the times are wall times of work that runs when it is queued.

use gpu_dsl::kernels::{map, reduce};
use gpu_dsl::prelude::*;

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

/// A few steps of `h = relu(a * x + h)`, `h *= h`, summed, on `stream`.
fn work(stream: &Stream, x: &DeviceBuffer<f32>, h: &mut DeviceBuffer<f32>) -> gpu_dsl::Result<f32> {
    let mut total = 0.0;
    for a in [0.5f32, -1.0, 2.0] {
        map::axpy(stream, a, x, h)?;
        map::relu(stream, h)?;
        map::scale(stream, 0.5, h)?;
        total += reduce::sum(stream, h)?;
    }
    Ok(total)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let trace = args.next().unwrap_or_else(|| "profile.json".to_string());
    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();
    let side = gpu.new_stream()?;
    let host: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.01 - 0.4).collect();

    // Once outside the profile, so kernel compilation is not what it shows.
    {
        let x = DeviceBuffer::from_host(&stream, &host)?;
        let mut h = DeviceBuffer::zeroed(&stream, n)?;
        work(&stream, &x, &mut h)?;
    }

    let (result, report) = gpu_dsl::profile(|| -> gpu_dsl::Result<(f32, f32)> {
        let x = DeviceBuffer::from_host(&stream, &host)?;
        let mut pinned = PinnedBuffer::from_slice(&gpu, &host)?;
        let mut h = DeviceBuffer::zeroed(&stream, n)?;
        let mut g = DeviceBuffer::zeroed(&side, n)?;
        g.copy_from_pinned(&side, &pinned)?;
        let on_main = work(&stream, &x, &mut h)?;
        let on_side = work(&side, &x, &mut g)?;
        g.copy_from(&side, &h)?;
        g.copy_to_pinned(&side, &mut pinned)?;
        pinned.synchronize()?;
        h.to_host(&stream)?;
        Ok((on_main, on_side))
    })?;
    let (on_main, on_side) = result?;
    println!("sums: {on_main:.3} on the default stream, {on_side:.3} on the other\n");
    print!("{}", report.table());
    report.chrome_trace(&trace)?;
    println!(
        "{} records; Chrome trace written to {trace}",
        report.records().len()
    );
    Ok(())
}
