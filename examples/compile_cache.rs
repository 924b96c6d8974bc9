//! How kernels are compiled: NVRTC on first use, then the in-process cache, then the disk cache
//! in a later process. Prints the time of each path.
//!
//! `cargo run --release --example compile_cache`

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{compile_stats, CacheConfig};

#[kernel]
fn smooth(x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    let n = x.len();
    if i < n {
        let left = if i > 0 { x[i - 1] } else { x[i] };
        let right = if i + 1 < n { x[i + 1] } else { x[i] };
        y[i] = 0.25 * left + 0.5 * x[i] + 0.25 * right;
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    println!("device: {}", gpu.name());
    // A fresh cache directory, so the first compile really goes to NVRTC.
    let dir = std::env::temp_dir().join(format!("gpu-compile-cache-{}", std::process::id()));
    let cache = CacheConfig::Dir(dir.clone());
    gpu.set_cache_config(cache.clone());

    let cold = gpu.precompile(&smooth::KERNEL)?;
    println!("cold (NVRTC + load):  {cold}");
    let warm = gpu.precompile(&smooth::KERNEL)?;
    println!("warm (in-process):    {warm}");
    gpu.forget_compiled(&smooth::KERNEL);
    let disk = gpu.precompile(&smooth::KERNEL)?;
    println!("disk cache (load):    {disk}");
    println!("counters: {:?}", compile_stats());

    // The kernel works after all that.
    let stream = gpu.default_stream();
    let host: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.1).sin()).collect();
    let x = DeviceBuffer::from_host(&stream, &host)?;
    let mut y = DeviceBuffer::zeroed(&stream, host.len())?;
    smooth::launch(&stream, LaunchConfig::for_len(host.len(), 128), &x, &mut y)?;
    let out = y.to_host(&stream)?;
    let expected = 0.25 * host[4] + 0.5 * host[5] + 0.25 * host[6];
    println!("y[5] = {} (CPU {expected})", out[5]);
    cache.clear()?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}
