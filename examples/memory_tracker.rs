//! Where device memory goes: allocated, reserved and peak bytes across a small workload, a
//! tracker around each step (the tutorials' GPUMemoryTracker), the cache handed back with
//! `empty_cache`, and the out-of-memory error.
//!
//! `cargo run --release --example memory_tracker [N]`: N floats per buffer (default 4 Mi).
//! Without a GPU (or with `GPU_BACKEND=cpu`) it runs on the CPU backend, where nothing is
//! cached, so reserved always equals allocated; on a GPU the pool keeps freed memory, and the
//! steps after the first reuse it without growing what is reserved.

use gpu_dsl::kernels::{map, reduce};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{Backend, MemoryStats};

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn line(what: &str, stats: MemoryStats) {
    println!(
        "{what:<28} allocated {:>8.2} MiB  reserved {:>8.2} MiB  peak {:>8.2} MiB  buffers {}",
        mib(stats.allocated_bytes),
        mib(stats.reserved_bytes),
        mib(stats.peak_bytes),
        stats.live_buffers
    );
}

/// One step: `h = relu(a * x + b)` over temporaries, reduced to a number; every temporary is
/// freed when the step returns.
fn step(stream: &Stream, x: &DeviceBuffer<f32>, a: f32) -> gpu_dsl::Result<f32> {
    let n = x.len();
    let mut h = DeviceBuffer::from_host(stream, &vec![0.5f32; n])?;
    map::axpy(stream, a, x, &mut h)?;
    map::relu(stream, &mut h)?;
    let mut squared = DeviceBuffer::zeroed(stream, n)?;
    map::mul(stream, &h, &h, &mut squared)?;
    reduce::sum(stream, &squared)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(4 << 20);
    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();
    let buffer_mib = mib(n * 4);
    println!("buffers of {n} floats ({buffer_mib:.2} MiB each)\n");

    line("start", gpu.memory_stats());
    let x_host: Vec<f32> = (0..n).map(|i| (i % 100) as f32 * 0.01 - 0.5).collect();
    let x = DeviceBuffer::from_host(&stream, &x_host)?;
    line("input uploaded", gpu.memory_stats());

    let whole = gpu.track_memory();
    let mut reserved_after_first = None;
    for (i, a) in [1.0f32, 2.0, -1.0].into_iter().enumerate() {
        let tracker = gpu.track_memory();
        let value = step(&stream, &x, a)?;
        // Every temporary is freed, so the step kept nothing; on a GPU the pool kept their
        // memory for the next step.
        println!("step {i}: sum of squares {value:.1}; tracker: {tracker}");
        line(&format!("after step {i}"), gpu.memory_stats());
        assert_eq!(tracker.delta_bytes(), 0, "a step leaked a buffer");
        assert!(tracker.peak_increase_bytes() >= 2 * n * 4);
        // Only a GPU caches: on the CPU backend reserved is allocated, which the steps restore.
        if gpu.backend() == Backend::Cuda {
            let reserved = gpu.memory_reserved();
            match reserved_after_first {
                None => reserved_after_first = Some(reserved),
                Some(first) if reserved == first => println!("  reserved unchanged: reused"),
                Some(first) => println!(
                    "  reserved grew by {:.2} MiB since step 0",
                    mib(reserved.saturating_sub(first))
                ),
            }
        }
    }
    println!(
        "\nall steps: peak {:.2} MiB above the start ({:.2} MiB absolute), {:+} bytes kept",
        mib(whole.peak_increase_bytes()),
        mib(whole.peak_bytes()),
        whole.delta_bytes()
    );
    drop(whole);

    gpu.reset_peak_memory();
    line("peak reset", gpu.memory_stats());
    drop(x);
    line("input freed", gpu.memory_stats());
    gpu.empty_cache()?;
    line("cache emptied", gpu.memory_stats());

    // More than the device has: an error that says how much was asked, held and reserved.
    let asked = match gpu.backend() {
        Backend::Cuda => gpu.total_memory() * 2,
        // Twice the host's memory might be granted lazily by an overcommitting kernel; 4 EiB
        // never is.
        Backend::Cpu => 1 << 62,
    };
    match DeviceBuffer::<u8>::zeroed(&stream, asked) {
        Err(error @ Error::OutOfMemory { .. }) => println!("\nasking for too much: {error}"),
        Err(other) => return Err(other.into()),
        Ok(_) => println!("\n{asked} bytes were granted"),
    }
    Ok(())
}
