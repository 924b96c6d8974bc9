//! What a `grid_sync()` costs: one launch that meets at the grid barrier `rounds` times,
//! against `rounds` launches of an empty kernel (what a multi-phase algorithm pays without
//! the barrier), for persistent grids of several block sizes.
//!
//! `cargo run --release --example grid_sync_cost [ROUNDS]` (on the GPU, else the CPU backend)

use std::time::Instant;

use gpu_dsl::prelude::*;

/// Meets at the grid barrier `rounds` times; block 0's thread 0 counts the rounds.
#[kernel]
fn barriers(rounds: u32, count: &mut [u32]) {
    for _ in 0..rounds {
        if global_idx().x == 0 {
            count[0] += 1;
        }
        grid_sync();
    }
}

/// One phase of the same work as a launch of its own.
#[kernel]
fn one_phase(count: &mut [u32]) {
    if global_idx().x == 0 {
        count[0] += 1;
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> gpu_dsl::Result<()> {
    let gpu = Gpu::best()?;
    let on_cpu = gpu.backend() == gpu_dsl::runtime::Backend::Cpu;
    let rounds: u32 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(if on_cpu { 200 } else { 20_000 });
    println!(
        "device: {} ({:?}), {rounds} rounds",
        gpu.name(),
        gpu.backend()
    );
    let stream = gpu.default_stream();
    let mut count = DeviceBuffer::<u32>::zeroed(&stream, 1)?;
    let mut expected = 0u32;
    println!(
        "{:>8} {:>8} {:>16} {:>18}",
        "threads", "blocks", "grid_sync (us)", "launch/phase (us)"
    );
    for threads in [128u32, 256, 1024] {
        let block = Block::x(threads);
        let max = stream
            .max_cooperative_blocks(&barriers::KERNEL, LaunchConfig::new(Grid::x(1), block))?;
        let mut sizes = vec![max];
        if !on_cpu && gpu.sm_count() < max {
            sizes.insert(0, gpu.sm_count());
        }
        for blocks in sizes {
            let config = LaunchConfig::new(Grid::x(blocks), block).checked(false);
            // Warm up: compile, load, allocate the stream's barrier word.
            barriers::launch(&stream, config, 1, &mut count)?;
            one_phase::launch(&stream, config, &mut count)?;
            stream.synchronize()?;

            let start = Instant::now();
            barriers::launch(&stream, config, rounds, &mut count)?;
            stream.synchronize()?;
            let fused = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);

            let start = Instant::now();
            for _ in 0..rounds {
                one_phase::launch(&stream, config, &mut count)?;
            }
            stream.synchronize()?;
            let launched = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
            expected += 2 * (1 + rounds);
            println!("{threads:>8} {blocks:>8} {fused:>16.3} {launched:>18.3}");
        }
    }
    // Every phase ran exactly once, fused or launched.
    let got = count.to_host(&stream)?[0];
    if got != expected {
        eprintln!("error: the phases counted {got}, expected {expected}");
        std::process::exit(1);
    }
    Ok(())
}
