//! The CPU backend against a plain Rust loop: saxpy over 2^24 f32, as a `#[kernel]` on
//! `Gpu::cpu()` and as `for (y, x) in ys.iter_mut().zip(&xs)` on one thread and split over as
//! many threads as the backend has workers, each the best of five runs: the speed of the
//! kernel per worker thread relative to the one-thread loop, and relative to the split loop
//! (the cores it uses, sharing memory bandwidth as the kernel does). Figures, and where the
//! rest of the time goes: docs/ARCHITECTURE.md, "The block loop".
//!
//! `cargo run --release --example cpu_saxpy`

use gpu_dsl::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1 << 24;
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let mut ys = vec![1.0f32; n];
    let x = DeviceBuffer::from_host(&stream, &xs)?;
    let mut y = DeviceBuffer::from_host(&stream, &ys)?;
    let config = LaunchConfig::for_len(n, 256).checked(false);
    let mut kernel = f64::MAX;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        saxpy::launch(&stream, config, 2.0, &x, &mut y)?;
        kernel = kernel.min(start.elapsed().as_secs_f64());
    }
    let mut plain = f64::MAX;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        let a = std::hint::black_box(2.0f32);
        for (y, x) in ys.iter_mut().zip(&xs) {
            *y += a * x;
        }
        std::hint::black_box(&mut ys);
        plain = plain.min(start.elapsed().as_secs_f64());
    }
    // Both ran y = 2x + y five times from y = 1.
    let got = y.to_host(&stream)?;
    if got != ys {
        return Err("the kernel and the loop disagree".into());
    }
    // The CPU backend counts its worker threads as multiprocessors.
    let workers = gpu.sm_count().max(1) as usize;
    // The same loop split over as many threads as the backend has workers: what the cores it
    // uses reach together, memory bandwidth shared as the kernel shares it.
    let mut split = f64::MAX;
    let mut ys_split = vec![1.0f32; n];
    for _ in 0..5 {
        let start = std::time::Instant::now();
        let a = std::hint::black_box(2.0f32);
        let chunk = n.div_ceil(workers);
        std::thread::scope(|scope| {
            for (ys, xs) in ys_split.chunks_mut(chunk).zip(xs.chunks(chunk)) {
                scope.spawn(move || {
                    for (y, x) in ys.iter_mut().zip(xs) {
                        *y += a * x;
                    }
                });
            }
        });
        std::hint::black_box(&mut ys_split);
        split = split.min(start.elapsed().as_secs_f64());
    }
    if ys_split != ys {
        return Err("the split loop and the loop disagree".into());
    }
    println!(
        "{}: kernel {:.2} ms, plain single-threaded loop {:.2} ms, the loop split over {workers} \
         threads {:.2} ms; kernel/loop speed {:.2}, {:.2} per worker thread; kernel/split loop \
         speed {:.2}",
        gpu.name(),
        kernel * 1e3,
        plain * 1e3,
        split * 1e3,
        plain / kernel,
        plain / kernel / workers as f64,
        split / kernel
    );
    Ok(())
}
