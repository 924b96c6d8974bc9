//! Runs kernels with planted bugs (a missing barrier, a barrier in a branch, two blocks writing
//! one element, a read of unwritten shared memory, a shuffle naming lanes that returned), for
//! the debugging tools to find.
//!
//! `cargo run --release --example planted_bugs -- [--cpu] [BUG...]` — with `--cpu`, each runs
//! on the CPU backend under the race checker, which prints its report; without, on GPU 0,
//! where `compute-sanitizer --tool racecheck|synccheck|initcheck|memcheck` is the checker
//! (`scripts/sanitize --planted` runs every bug under every tool and prints the table of
//! `docs/DEBUGGING.md`). BUG names: missing-barrier, branch-barrier, shared-output,
//! unwritten-read, shuffle-exit; none names them all.

mod kernels;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Result;

/// Every planted bug, by the name the command line takes.
const BUGS: [&str; 5] = [
    "missing-barrier",
    "branch-barrier",
    "shared-output",
    "unwritten-read",
    "shuffle-exit",
];

fn config(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig::new(Grid::x(blocks), Block::x(threads))
}

/// Runs bug `name` on `stream` and synchronizes.
fn run(name: &str, stream: &Stream) -> Result<()> {
    let x: Vec<f32> = (0..1024).map(|i| (i % 17) as f32).collect();
    let x = DeviceBuffer::from_host(stream, &x)?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, 1024)?;
    match name {
        "missing-barrier" => {
            kernels::sum_missing_barrier::launch(stream, config(4, 256), &x, &mut out)?
        }
        "branch-barrier" => {
            let mut ids = DeviceBuffer::<u32>::zeroed(stream, 32)?;
            kernels::barrier_in_branch::launch(stream, config(1, 32), &mut ids)?
        }
        "shared-output" => {
            kernels::blocks_share_output::launch(stream, config(8, 128), &x, &mut out)?
        }
        "unwritten-read" => {
            kernels::reads_unwritten_shared::launch(stream, config(4, 64), &mut out)?
        }
        "shuffle-exit" => {
            let part = DeviceBuffer::from_host(stream, &[1.0f32; 20])?;
            kernels::shuffle_after_exit::launch(stream, config(1, 32), &part, &mut out)?
        }
        other => {
            eprintln!("unknown bug `{other}`; the bugs are {}", BUGS.join(", "));
            std::process::exit(2);
        }
    }
    stream.synchronize()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cpu = args.iter().any(|a| a == "--cpu");
    let mut names: Vec<&str> = args
        .iter()
        .filter(|a| *a != "--cpu")
        .map(String::as_str)
        .collect();
    if names.is_empty() {
        names = BUGS.to_vec();
    }
    let gpu = if cpu {
        Gpu::cpu_racecheck()
    } else {
        match Gpu::new(0) {
            Ok(gpu) => gpu,
            Err(err) => {
                eprintln!("skipped: no CUDA device ({err}); pass --cpu for the race checker");
                return;
            }
        }
    };
    let stream = gpu.default_stream();
    for name in names {
        match run(name, &stream) {
            Ok(()) => println!("{name}: ran without an error"),
            Err(err) => println!("{name}: {err}"),
        }
    }
}
