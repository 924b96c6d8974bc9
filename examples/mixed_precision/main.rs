//! Mixed precision: the same MLP trained for the same steps in f32 and with bf16 operands
//! (`gpu_dsl::kernels::mlp_step`, f32 accumulation and master weights in both), with the time
//! and peak memory of each and the loss and accuracy they reach.
//!
//! `cargo run --release --example mixed_precision -- --help`. The data is synthetic (class
//! prototypes under noise) unless `--data DIR` names a folder with Fashion-MNIST's (or MNIST's)
//! four IDX files. `--cpu` (or `GPU_BACKEND=cpu`) runs on the CPU backend.
//!
//! Both runs start from the same weights and see the same batches. Peak memory is what the
//! run allocated beyond the data set, measured with `Gpu::track_memory`: the packed model keeps
//! its f32 master weights and their bf16 copy in either precision, so the two runs hold the same
//! memory and differ in the products' rounding and in time (`gpu_dsl::kernels::mlp_step`'s
//! notes: 0.0202-0.0206 ms a step with bf16 operands against 0.0194-0.0198 ms in f32 for this
//! model and batch on an H100).

mod training;

use std::path::PathBuf;

use clap::Parser;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Backend;

use training::{Config, DeviceData, Precision, Run};

/// Trains an MLP in f32 and in bf16 and compares time, peak memory, loss and accuracy.
#[derive(Debug, Parser)]
#[command(name = "mixed_precision")]
struct Args {
    /// Training steps in each precision.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,

    /// Samples per step.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    batch: u32,

    /// Hidden layer widths, input side first.
    #[arg(long, value_delimiter = ',', default_value = "128")]
    hidden: Vec<usize>,

    /// Adam's learning rate.
    #[arg(long, default_value_t = 1e-3)]
    lr: f32,

    /// Seeds the data, the initial weights and the order of samples.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// A folder with Fashion-MNIST's (or MNIST's) IDX files, raw or gzipped; synthetic data
    /// without it.
    #[arg(long)]
    data: Option<PathBuf>,

    /// Synthetic samples of 784 values in 10 classes: the training set (the test set is a
    /// quarter of it).
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,

    /// Run on the CPU backend even when a GPU is present.
    #[arg(long)]
    cpu: bool,
}

fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> training::Result<()> {
    let gpu = if args.cpu { Gpu::cpu() } else { Gpu::best()? };
    match gpu.backend() {
        Backend::Cuda => println!("device: {} (CUDA backend)", gpu.name()),
        Backend::Cpu => println!("device: CPU backend (--cpu, GPU_BACKEND=cpu or no usable GPU)"),
    }
    let (train_set, test_set) = match &args.data {
        Some(dir) => {
            let sets = training::load_idx_dir(dir)?;
            println!(
                "data: {} ({} training samples)",
                dir.display(),
                sets.0.len()
            );
            sets
        }
        None => {
            let samples = args.samples as usize;
            let all = training::synthetic(samples + samples / 4, 784, 10, args.seed);
            println!("data: synthetic, {samples} training samples of 784 values in 10 classes");
            all.split(samples / 4)
        }
    };
    let config = Config {
        hidden: args.hidden.clone(),
        batch: args.batch as usize,
        steps: args.steps as usize,
        lr: args.lr,
        seed: args.seed,
    };
    let sizes = training::layer_sizes(&config, &train_set);
    let init = training::init_params(&sizes, args.seed);
    println!(
        "model: {sizes:?} ({} parameters), batch {}, Adam lr {}",
        init.len(),
        config.batch,
        config.lr
    );
    let stream = gpu.default_stream();
    let train = DeviceData::upload(&stream, &train_set)?;
    let runs = [Precision::F32, Precision::Bf16]
        .into_iter()
        .map(|precision| {
            training::train(
                &stream, &config, &sizes, &init, &train, &test_set, precision,
            )
        })
        .collect::<training::Result<Vec<Run>>>()?;
    print_table(&runs);
    Ok(())
}

fn print_table(runs: &[Run]) {
    println!();
    println!(
        "{:<9} {:>5} {:>9} {:>10} {:>11} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "precision",
        "steps",
        "total s",
        "ms/step",
        "peak MiB",
        "first loss",
        "final loss",
        "train acc",
        "test loss",
        "test acc"
    );
    for run in runs {
        println!(
            "{:<9} {:>5} {:>9.3} {:>10.3} {:>11.3} {:>10.4} {:>10.4} {:>8.1}% {:>9.4} {:>7.1}%",
            run.precision.name(),
            run.steps,
            run.seconds,
            run.step_ms(),
            run.peak_bytes as f64 / (1024.0 * 1024.0),
            run.first_loss(),
            run.final_loss(),
            run.train_accuracy * 100.0,
            run.test_loss,
            run.test_accuracy * 100.0
        );
    }
    if let Some(run) = runs.first() {
        println!(
            "\nfirst and final loss: the mean of the first and last {} steps; train acc over the \
             last {0} steps' batches; test loss and accuracy of the trained weights in f32",
            run.window()
        );
    }
}
