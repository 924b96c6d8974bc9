//! The first kernel: `y = a * x + y` on the GPU, checked against the CPU.
//!
//! `cargo run --release --example saxpy [N]` — prints the CUDA C++ the macro generated, the
//! result check, and the kernel's time and bandwidth. Without a GPU (or with `GPU_BACKEND=cpu`)
//! it runs on the CPU backend and says so.

use gpu_dsl::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1 << 24);
    println!("CUDA C++ generated for `saxpy`:\n{}", saxpy::SOURCE);

    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();

    let a = 2.5f32;
    let x_host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y_host: Vec<f32> = (0..n).map(|i| 1.0 - (i % 777) as f32 * 0.002).collect();
    let x = DeviceBuffer::from_host(&stream, &x_host)?;
    let mut y = DeviceBuffer::from_host(&stream, &y_host)?;
    let config = LaunchConfig::for_len(n, 256);

    // The first launch compiles (or loads from the disk cache); time the ones after it.
    saxpy::launch(&stream, config, a, &x, &mut y)?;
    let runs = 20;
    let start = stream.record_event()?;
    for _ in 0..runs {
        saxpy::launch(&stream, config, a, &x, &mut y)?;
    }
    let end = stream.record_event()?;
    let ms = start.elapsed_ms(&end)? / runs as f32;
    let result = y.to_host(&stream)?;

    // y was updated 1 + runs times: y + (1 + runs) * a * x, computed the same way on the CPU.
    let mut worst = 0.0f32;
    for i in 0..n {
        let mut expected = y_host[i];
        for _ in 0..=runs {
            expected += a * x_host[i];
        }
        worst = worst.max((result[i] - expected).abs() / expected.abs().max(1.0));
    }
    let bytes = 3.0 * n as f64 * 4.0;
    println!(
        "saxpy n={n}: {ms:.4} ms per launch, {:.0} GB/s, max relative error vs CPU {worst:.2e}",
        bytes / (ms as f64 * 1e-3) / 1e9
    );
    println!("y[0..4] = {:?}", &result[..4.min(n)]);
    if worst > 1e-5 {
        return Err(format!("the result differs from the CPU reference by {worst:e}").into());
    }
    println!("ok: the result matches the CPU reference");
    Ok(())
}
