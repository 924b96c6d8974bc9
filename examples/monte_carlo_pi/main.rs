//! π by Monte Carlo: random points in the unit square, the share inside the quarter circle.
//!
//! `cargo run --release --example monte_carlo_pi -- --help` — every GPU thread draws many
//! points from its own Philox4x32-10 stream (`philox4x32_10` in the kernel), counts its hits,
//! and the library's reduce kernel sums them per launch. Prints the estimate, its error against
//! π in standard errors, the samples per second, and the same count on one host thread for a
//! slice of the points as the reference (timed, and checked hit for hit). `--quick` (the
//! default on the CPU backend, chosen with `--cpu` or `GPU_BACKEND=cpu`) runs in a second.

mod pi;

use std::time::Instant;

use clap::Parser;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Backend;

use pi::Plan;

/// Estimates π from random points drawn on the GPU with Philox.
#[derive(Debug, Parser)]
#[command(name = "monte_carlo_pi")]
struct Args {
    /// Threads per launch.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    threads: u64,

    /// Philox draws (two points each) per thread and launch.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pairs: u32,

    /// Launches, each drawing threads × pairs × 2 points.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    batches: u32,

    /// The generator's key: the same seed draws the same points.
    #[arg(long, default_value_t = 2024)]
    seed: u64,

    /// A run of a second: 16,384 threads × 128 draws × 2 points × 2 launches (8.4 million
    /// points); the default on the CPU backend.
    #[arg(long)]
    quick: bool,

    /// Run on the CPU backend even when a GPU is present.
    #[arg(long)]
    cpu: bool,
}

/// Threads of the host reference: enough for a timing that is not noise, small enough to take
/// well under a second.
const HOST_THREADS: usize = 2048;

fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = if args.cpu { Gpu::cpu() } else { Gpu::best()? };
    let quick = args.quick || gpu.backend() == Backend::Cpu;
    match gpu.backend() {
        Backend::Cuda => println!("device: {} (CUDA backend)", gpu.name()),
        Backend::Cpu => println!(
            "device: CPU backend (--cpu, GPU_BACKEND=cpu or no usable GPU){}",
            if args.quick { "" } else { "; running --quick" }
        ),
    }
    let plan = if quick {
        Plan {
            threads: 16_384,
            pairs: 128,
            batches: 2,
            seed: args.seed,
        }
    } else {
        Plan {
            threads: usize::try_from(args.threads)?,
            pairs: args.pairs,
            batches: args.batches,
            seed: args.seed,
        }
    };
    let stream = gpu.default_stream();

    // A one-batch run first compiles the kernels (or loads them from the disk cache), so the
    // timed run measures drawing and counting only.
    let warm_up = Plan {
        batches: 1,
        threads: plan.threads.min(1 << 16),
        ..plan
    };
    pi::count(&stream, &warm_up)?;
    let start = Instant::now();
    let hits = pi::count(&stream, &plan)?;
    let seconds = start.elapsed().as_secs_f64();

    let points = plan.points();
    let (estimate, std_error) = pi::estimate(hits, points);
    let error = estimate - std::f64::consts::PI;
    let rate = points as f64 / seconds;
    println!(
        "{points} points ({} launches of {} threads × {} points), seed {}",
        plan.batches,
        plan.threads,
        2 * plan.pairs,
        plan.seed
    );
    println!("hits: {hits}");
    println!(
        "π ≈ {estimate:.9}, error {error:+.3e} = {:+.2} standard errors (standard error {std_error:.2e})",
        error / std_error
    );
    println!(
        "time: {:.3} ms, {:.3e} samples/s ({:.2} Gsamples/s)",
        seconds * 1e3,
        rate,
        rate / 1e9
    );

    // The reference: the first threads of batch 0, counted on one host thread with the host
    // twin of Philox. The kernel's counts for them must agree exactly.
    let host_threads = HOST_THREADS.min(plan.threads);
    let mut per_thread = DeviceBuffer::<u32>::zeroed(&stream, plan.threads)?;
    let config = LaunchConfig::for_len(plan.threads, pi::BLOCK);
    let (lo, hi) = (plan.seed as u32, (plan.seed >> 32) as u32);
    pi::count_hits::launch(&stream, config, lo, hi, 0, plan.pairs, &mut per_thread)?;
    let device_counts = per_thread.to_host(&stream)?;
    let host_start = Instant::now();
    let host_counts = pi::host_hits(&plan, 0, 0..host_threads);
    let host_rate =
        (host_threads as f64 * 2.0 * f64::from(plan.pairs)) / host_start.elapsed().as_secs_f64();
    if host_counts[..] != device_counts[..host_threads] {
        return Err("the kernel's hits differ from the host's for the same Philox draws".into());
    }
    println!(
        "host reference (one thread, {} points): {:.3e} samples/s; the device drew {:.1}x \
         as many per second, and its counts for those threads agree exactly",
        host_threads as u64 * 2 * u64::from(plan.pairs),
        host_rate,
        rate / host_rate
    );
    if error.abs() > 5.0 * std_error {
        return Err(format!(
            "the estimate is {:.1} standard errors from π: the generator or the count is wrong",
            error.abs() / std_error
        )
        .into());
    }
    Ok(())
}
