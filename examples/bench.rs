//! Benchmarks of the library kernels against a reference measured in the same run: a device-copy
//! kernel (16-byte loads and stores) for the bandwidth-bound ones. Times are CUDA-event medians
//! after a warm-up; bandwidth counts bytes read plus bytes written, as the copy does.
//!
//! `cargo run --release --example bench [OUT.json]` — prints a table and writes it as JSON
//! (default `bench.json`).

use gpu::kernels::{map, reduce, scan, stencil};
use gpu::prelude::*;

#[kernel]
fn copy_f32(x: &[f32], y: &mut [f32]) {
    let vectors = y.len() / 4;
    for v in (global_idx().x..vectors).step_by(grid_size().x) {
        let values = x.load4(v * 4);
        y.store4(v * 4, values);
    }
    for i in (vectors * 4 + global_idx().x..y.len()).step_by(grid_size().x) {
        y[i] = x[i];
    }
}

/// Median milliseconds of `runs` launches after `warmup` more.
fn median_ms(stream: &Stream, mut launch: impl FnMut() -> gpu::Result<()>) -> gpu::Result<f64> {
    let (warmup, runs) = (5, 25);
    for _ in 0..warmup {
        launch()?;
    }
    stream.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = stream.record_event()?;
        launch()?;
        let end = stream.record_event()?;
        times.push(start.elapsed_ms(&end)? as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[runs / 2])
}

struct Row {
    workload: &'static str,
    size: String,
    ms: f64,
    gbps: f64,
    reference_gbps: f64,
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let out_path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench.json".into());
    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();
    let on_gpu = gpu.backend() == gpu::runtime::Backend::Cuda;
    let sizes: &[usize] = if on_gpu {
        &[1 << 20, 1 << 24, 1 << 26, 1 << 28]
    } else {
        &[1 << 16, 1 << 20]
    };
    let mut rows = Vec::new();
    for &n in sizes {
        let host: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host)?;
        let mut y = DeviceBuffer::from_host(&stream, &host)?;
        let config = map::grid_stride_config(&stream, n / 4 + 1);
        let copy_ms = median_ms(&stream, || copy_f32::launch(&stream, config, &x, &mut y))?;
        let bytes = |b: f64| b * n as f64;
        let gbps = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e9;
        let copy_gbps = gbps(bytes(8.0), copy_ms);
        let size = format!("2^{}", n.trailing_zeros());
        rows.push(Row {
            workload: "copy (reference)",
            size: size.clone(),
            ms: copy_ms,
            gbps: copy_gbps,
            reference_gbps: copy_gbps,
        });

        let saxpy_ms = median_ms(&stream, || map::axpy(&stream, 2.0, &x, &mut y))?;
        rows.push(Row {
            workload: "saxpy f32",
            size: size.clone(),
            ms: saxpy_ms,
            gbps: gbps(bytes(12.0), saxpy_ms),
            reference_gbps: copy_gbps,
        });

        let mut total = DeviceBuffer::zeroed(&stream, 1)?;
        let mut scratch = reduce::ReduceScratch::<f32>::new(&stream)?;
        let sum_ms = median_ms(&stream, || {
            reduce::reduce_into(&stream, &x, reduce::ReduceOp::Sum, &mut total, &mut scratch)
        })?;
        rows.push(Row {
            workload: "reduce sum f32",
            size: size.clone(),
            ms: sum_ms,
            // A reduction reads each element once and writes nothing of note.
            gbps: gbps(bytes(4.0), sum_ms),
            reference_gbps: copy_gbps,
        });

        let mut scanned = DeviceBuffer::zeroed(&stream, n)?;
        let mut scan_scratch = scan::ScanScratch::new(&stream, n)?;
        let scan_ms = median_ms(&stream, || {
            scan::scan(
                &stream,
                &x,
                &mut scanned,
                scan::ScanOp::Sum,
                scan::ScanKind::Inclusive,
                &mut scan_scratch,
            )
        })?;
        rows.push(Row {
            workload: "scan sum f32",
            size: size.clone(),
            ms: scan_ms,
            gbps: gbps(bytes(8.0), scan_ms),
            reference_gbps: copy_gbps,
        });
        let xi: Vec<i32> = (0..n as i32).map(|i| i % 1000 - 500).collect();
        let xi = DeviceBuffer::from_host(&stream, &xi)?;
        let mut scanned_i = DeviceBuffer::zeroed(&stream, n)?;
        let mut scan_scratch_i = scan::ScanScratch::new(&stream, n)?;
        let scan_i_ms = median_ms(&stream, || {
            scan::scan(
                &stream,
                &xi,
                &mut scanned_i,
                scan::ScanOp::Sum,
                scan::ScanKind::Exclusive,
                &mut scan_scratch_i,
            )
        })?;
        rows.push(Row {
            workload: "scan sum i32 (excl.)",
            size: size.clone(),
            ms: scan_i_ms,
            gbps: gbps(bytes(8.0), scan_i_ms),
            reference_gbps: copy_gbps,
        });

        // A square image of n pixels (n is a power of 4 here, or the nearest below).
        let side = 1usize << (n.trailing_zeros() / 2);
        let image = DeviceBuffer::from_host(&stream, &host[..side * side])?;
        let mut next = DeviceBuffer::zeroed(&stream, side * side)?;
        let jacobi_ms = median_ms(&stream, || {
            stencil::jacobi5(
                &stream,
                &image,
                side,
                side,
                stencil::Boundary::Clamp,
                &mut next,
            )
        })?;
        rows.push(Row {
            workload: "jacobi 5-point f32",
            size: format!("{side}^2"),
            ms: jacobi_ms,
            gbps: gbps(8.0 * (side * side) as f64, jacobi_ms),
            reference_gbps: copy_gbps,
        });
    }

    println!(
        "{:<22} {:>8} {:>10} {:>10} {:>12} {:>7}",
        "workload", "size", "ms", "GB/s", "copy GB/s", "ratio"
    );
    let mut json = String::from("[\n");
    for (i, row) in rows.iter().enumerate() {
        let ratio = row.gbps / row.reference_gbps;
        println!(
            "{:<22} {:>8} {:>10.4} {:>10.1} {:>12.1} {:>7.3}",
            row.workload, row.size, row.ms, row.gbps, row.reference_gbps, ratio
        );
        json.push_str(&format!(
            "  {{\"workload\": \"{}\", \"size\": \"{}\", \"ms\": {:.6}, \"gbps\": {:.2}, \"reference\": \"device copy\", \"reference_gbps\": {:.2}, \"ratio\": {:.4}}}{}\n",
            row.workload,
            row.size,
            row.ms,
            row.gbps,
            row.reference_gbps,
            ratio,
            if i + 1 < rows.len() { "," } else { "" }
        ));
    }
    json.push_str("]\n");
    std::fs::write(&out_path, json)?;
    println!("wrote {out_path}");
    Ok(())
}
