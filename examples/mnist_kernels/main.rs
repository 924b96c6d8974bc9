//! Trains an MLP on MNIST with the project's own kernels, then writes the weights, the metrics,
//! a training-curve PNG and the confusion matrix.
//!
//! `cargo run --release --example mnist_kernels -- --help`

mod args;
mod checkpoint;
mod data;
mod download;
mod error;
mod idx;
mod output;
mod plot;
#[cfg(test)]
mod reference;
mod train;

use std::cell::RefCell;
use std::path::Path;

use clap::Parser;
use gpu_dsl::prelude::Gpu;
use gpu_dsl::runtime::comm::RankEnv;
use gpu_dsl::runtime::Backend;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use args::{Args, OptimizerArg};
use error::{io, Error, Result};
use train::parallel::Ranks;
use train::{Dataset, EpochStats, Optimizer, Precision, Progress, TrainConfig};

/// Training and test samples used on the CPU backend when `--limit` is not given: the full
/// set would take minutes per epoch there.
const CPU_DEFAULT_LIMIT: (usize, usize) = (6000, 1000);

/// Steps between progress-bar updates, to keep the per-step callback cheap.
const PROGRESS_EVERY: usize = 50;

fn main() {
    // NVLink multicast (NVLS) stays off unless asked for: on shared GPU hosts a program using it
    // can put the GPUs out of service (scripts/launch says more). Set here, before any thread
    // exists, since NCCL reads it when the first communicator starts.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let args = Args::parse();
    if let Err(err) = run(&args) {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

/// The whole program; every failure comes back as an [`Error`] for `main` to print.
fn run(args: &Args) -> Result<()> {
    check_args(args)?;
    let placement = place(args)?;
    if placement.rank > 0 {
        return follow(args, placement);
    }
    let gpu = placement.lead.clone();
    let source = data::locate(
        args.data.as_deref(),
        Path::new(data::DEFAULT_DIR),
        Path::new(data::FASHION_MNIST_DIR),
        !args.no_download,
    )?;
    println!("dataset: {source}");
    let (mut train_set, mut test_set) = data::load_dir(&source.dir)?;
    apply_limit(args.limit, gpu.backend(), &mut train_set, &mut test_set);
    println!(
        "{} training and {} test images of {} pixels, {} classes",
        train_set.len, test_set.len, train_set.pixels, train_set.classes
    );
    std::fs::create_dir_all(&args.out).map_err(io(&args.out))?;
    if args.eval_only {
        evaluate_saved(args, &gpu, &test_set, &source)
    } else {
        train_and_report(args, placement, &train_set, &test_set, &source)
    }
}

/// Where training runs: one device, or the ranks of data-parallel training.
struct Placement {
    /// The device this process reports from (rank 0's, for data-parallel training).
    lead: Gpu,
    /// This process's rank (0 unless a launcher started it as another).
    rank: usize,
    /// Ranks in all; `None` for plain training on `lead`.
    ranks: Option<(usize, Ranks)>,
}

/// The devices the options and the launcher's environment ask for, saying which.
fn place(args: &Args) -> Result<Placement> {
    if let Some(env) = RankEnv::from_env()? {
        if args.cpu {
            return Err(Error::Usage(
                "--cpu: a process started as a rank (RANK, WORLD_SIZE set) drives one CUDA                  device; for CPU-backend ranks run one process with --cpu --devices N"
                    .into(),
            ));
        }
        if args.devices.is_some_and(|n| n as usize != env.world_size) {
            return Err(Error::Usage(format!(
                "--devices disagrees with WORLD_SIZE={}: leave it out when starting ranks                  with scripts/launch",
                env.world_size
            )));
        }
        let gpu = Gpu::new(env.local_rank)?;
        if env.rank == 0 {
            println!(
                "devices: {} processes, rank 0 on {} (CUDA backend), data parallel",
                env.world_size,
                gpu.name()
            );
        }
        let (rank, count) = (env.rank, env.world_size);
        let ranks = Ranks::Process {
            gpu: gpu.clone(),
            env,
        };
        return Ok(Placement {
            lead: gpu,
            rank,
            ranks: Some((count, ranks)),
        });
    }
    // `--devices 1` runs the data-parallel path on one rank (one NCCL rank on a GPU): the
    // baseline of a scaling table, step for step the same code as on N.
    let Some(count) = args.devices.map(|n| n as usize) else {
        return Ok(Placement {
            lead: open_device(args.cpu)?,
            rank: 0,
            ranks: None,
        });
    };
    let gpus = if args.cpu {
        vec![Gpu::cpu(); count]
    } else {
        (0..count)
            .map(Gpu::new)
            .collect::<gpu_dsl::Result<Vec<_>>>()?
    };
    println!(
        "devices: {count} x {} ({} backend), data parallel, a thread each",
        gpus[0].name(),
        gpus[0].backend()
    );
    Ok(Placement {
        lead: gpus[0].clone(),
        rank: 0,
        ranks: Some((count, Ranks::Threads(gpus))),
    })
}

/// A rank other than 0 of a launched group: trains its share without a word; rank 0
/// reports and writes the outputs.
fn follow(args: &Args, placement: Placement) -> Result<()> {
    let Some((_, ranks)) = placement.ranks else {
        return Ok(());
    };
    // Rank 0 downloads if it must; the others wait for no one and read what is there.
    let source = data::locate(
        args.data.as_deref(),
        Path::new(data::DEFAULT_DIR),
        Path::new(data::FASHION_MNIST_DIR),
        false,
    )?;
    let (mut train_set, mut test_set) = data::load_dir(&source.dir)?;
    if let Some(n) = args.limit {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        data::truncate(&mut train_set, n);
        data::truncate(&mut test_set, n);
    }
    let config = config(args);
    train::parallel::train_parallel(
        ranks,
        &config,
        &train_set,
        &test_set,
        &mut |_| {},
        &mut |_| {},
    )?;
    Ok(())
}

/// Rejects option values clap's parsers let through but training cannot use.
fn check_args(args: &Args) -> Result<()> {
    if !(args.lr.is_finite() && args.lr > 0.0) {
        return Err(Error::Usage(format!(
            "--lr {}: the learning rate must be a positive number",
            args.lr
        )));
    }
    if !(0.0..1.0).contains(&args.momentum) {
        return Err(Error::Usage(format!(
            "--momentum {}: must be in [0, 1)",
            args.momentum
        )));
    }
    Ok(())
}

/// The CPU backend when asked, else the best device, saying which and whether it fell back.
fn open_device(force_cpu: bool) -> Result<Gpu> {
    let gpu = if force_cpu { Gpu::cpu() } else { Gpu::best()? };
    match gpu.backend() {
        Backend::Cuda => println!("device: {} (CUDA backend)", gpu.name()),
        Backend::Cpu if force_cpu => println!("device: CPU backend (--cpu)"),
        Backend::Cpu => println!(
            "device: CPU backend (no usable CUDA device here, or GPU_BACKEND=cpu); \
             kernels run as their CPU twins"
        ),
    }
    Ok(gpu)
}

/// Truncates both sets to `--limit`, or to a small default on the CPU backend, saying so.
fn apply_limit(limit: Option<u64>, backend: Backend, train: &mut Dataset, test: &mut Dataset) {
    let (train_limit, test_limit) = match (limit, backend) {
        (Some(n), _) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            (n, n)
        }
        (None, Backend::Cpu) => {
            println!(
                "CPU backend without --limit: using the first {} training and {} test samples \
                 (pass --limit N to choose)",
                CPU_DEFAULT_LIMIT.0, CPU_DEFAULT_LIMIT.1
            );
            CPU_DEFAULT_LIMIT
        }
        (None, Backend::Cuda) => return,
    };
    data::truncate(train, train_limit);
    data::truncate(test, test_limit);
}

/// The training configuration the options describe.
fn config(args: &Args) -> TrainConfig {
    TrainConfig {
        hidden: args.hidden.iter().map(|&h| h as usize).collect(),
        batch: args.batch as usize,
        epochs: args.epochs as usize,
        lr: args.lr,
        optimizer: match args.optimizer {
            OptimizerArg::Adam => Optimizer::Adam,
            OptimizerArg::Sgd => Optimizer::Sgd {
                momentum: args.momentum,
            },
        },
        seed: args.seed,
        precision: if args.bf16 {
            Precision::Bf16
        } else {
            Precision::F32
        },
        fused: !args.unfused,
        profile: args.profile,
    }
}

/// A one-line description of the model and optimizer, for titles and logs.
fn describe(config: &TrainConfig, data: &Dataset) -> String {
    let sizes: Vec<String> = std::iter::once(data.pixels)
        .chain(config.hidden.iter().copied())
        .chain(std::iter::once(data.classes))
        .map(|n| n.to_string())
        .collect();
    let optimizer = match config.optimizer {
        Optimizer::Adam => "Adam".to_string(),
        Optimizer::Sgd { momentum } => format!("SGD momentum {momentum}"),
    };
    let precision = match config.precision {
        Precision::F32 => "f32",
        Precision::Bf16 => "bf16 mixed",
    };
    let step = if train::runs_fused(config, data) {
        "one launch a step"
    } else {
        "a launch per kernel"
    };
    format!(
        "MLP {}, {optimizer} lr {}, batch {}, {precision}, {step}",
        sizes.join("-"),
        config.lr,
        config.batch
    )
}

/// A progress bar for one epoch.
fn epoch_bar(epoch: usize, epochs: usize, steps: usize) -> ProgressBar {
    let bar = ProgressBar::new(steps as u64);
    let style = ProgressStyle::with_template(
        "epoch {prefix} [{bar:30.cyan/blue}] {pos:>5}/{len} steps  {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(format!("{epoch}/{epochs}"));
    bar
}

/// Trains, then saves the weights, metrics, curve and confusion matrix and prints a summary.
fn train_and_report(
    args: &Args,
    placement: Placement,
    train_set: &Dataset,
    test_set: &Dataset,
    source: &data::Source,
) -> Result<()> {
    let config = config(args);
    let gpu = &placement.lead;
    let devices = placement.ranks.as_ref().map_or(1, |(count, _)| *count);
    let description = if placement.ranks.is_some() {
        // Data-parallel steps are never fused: the gradients leave the step to be reduced.
        let unfused = TrainConfig {
            fused: false,
            ..config.clone()
        };
        let step = describe(&unfused, train_set);
        format!("{step}, data parallel over {devices} devices")
    } else {
        describe(&config, train_set)
    };
    println!("training {description}, {} epochs", config.epochs);

    // Shared by the two callbacks: the bar of the epoch in progress.
    let bar: RefCell<Option<ProgressBar>> = RefCell::new(None);
    let mut epochs: Vec<EpochStats> = Vec::new();
    let mut on_progress = |progress: &Progress| {
        if !progress.step.is_multiple_of(PROGRESS_EVERY) && progress.step != progress.steps {
            return;
        }
        let mut bar = bar.borrow_mut();
        let bar =
            bar.get_or_insert_with(|| epoch_bar(progress.epoch, config.epochs, progress.steps));
        bar.set_position(progress.step as u64);
        bar.set_message(format!(
            "loss {:.4}  {:.0} samples/s",
            progress.loss, progress.samples_per_second
        ));
    };
    let mut on_epoch = |stats: &EpochStats| {
        if let Some(bar) = bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
        println!(
            "epoch {}/{}: train loss {:.4} acc {:.2}% | test loss {:.4} acc {:.2}% | \
                 {:.2} s, {:.0} samples/s, {:.3} ms/step",
            stats.epoch,
            config.epochs,
            stats.train_loss,
            100.0 * stats.train_accuracy,
            stats.test_loss,
            100.0 * stats.test_accuracy,
            stats.seconds,
            stats.samples_per_second,
            stats.step_ms
        );
        epochs.push(stats.clone());
    };
    let model = match placement.ranks {
        None => train::train(
            gpu,
            &config,
            train_set,
            test_set,
            &mut on_progress,
            &mut on_epoch,
        )?,
        Some((_, ranks)) => train::parallel::train_parallel(
            ranks,
            &config,
            train_set,
            test_set,
            &mut on_progress,
            &mut on_epoch,
        )?,
    };
    if devices > 1 {
        println!("replicas: the weights are the same bits on all {devices} ranks (checked)");
    }

    let weights_path = args.out.join(checkpoint::FILE_NAME);
    checkpoint::save(&weights_path, &model)?;
    if let Some(report) = epochs.iter().find_map(|stats| stats.profile.as_ref()) {
        let path = args.out.join("profile.json");
        report.chrome_trace(&path)?;
        let steps = train::profiled_steps(train_set.len / config.batch);
        println!(
            "profile of steps {}..{} of epoch 1 (launched one by one, so that epoch's timing \
             includes them):\n{}Chrome trace (chrome://tracing, ui.perfetto.dev): {}",
            steps.start,
            steps.end,
            report.table(),
            path.display()
        );
    }
    let eval = train::evaluate(gpu, &model, test_set)?;
    let title = format!("{} — {description}", dataset_name(source));
    let names = source.class_names(eval.confusion.len());
    write_confusion(&args.out, &eval.confusion, &names, &dataset_name(source))?;
    let curve_path = args.out.join("training_curve.png");
    plot::training_curve(&curve_path, &epochs, &title)?;

    let timing = Timing::of(&epochs);
    let first_step = epochs.iter().find_map(|stats| stats.first_step_seconds);
    let stats = gpu_dsl::runtime::compile_stats();
    let metrics = json!({
        "dataset": dataset_name(source),
        "data_dir": source.dir.display().to_string(),
        "device": gpu.name(),
        "backend": gpu.backend().to_string(),
        "model": description,
        "hidden": config.hidden,
        "batch": config.batch,
        "devices": devices,
        "epochs": config.epochs,
        "lr": output::short(config.lr),
        "seed": config.seed,
        "train_samples": train_set.len,
        "test_samples": test_set.len,
        "test_loss": output::short(eval.loss),
        "test_accuracy": output::short(eval.accuracy),
        "mean_epoch_seconds": timing.epoch_seconds,
        "mean_step_ms": timing.step_ms,
        "samples_per_second": timing.samples_per_second,
        "per_epoch": epochs.iter().map(output::epoch_json).collect::<Vec<_>>(),
        "first_step_seconds": first_step,
        "kernels": {
            "aot_cubin": stats.aot_cubin_loads,
            "aot_ptx": stats.aot_ptx_jits,
            "nvrtc": stats.nvrtc_compiles,
            "disk_cache": stats.disk_hits,
        },
    });
    output::write_json(&args.out.join("metrics.json"), &metrics)?;

    println!("{}", output::confusion_table(&eval.confusion, &names));
    println!("test accuracy: {:.2}%", 100.0 * eval.accuracy);
    // One line per run for scaling tables: grep "^throughput:".
    println!(
        "throughput: {:.0} samples/s on {devices} device(s), global batch {}, hidden {:?}",
        timing.samples_per_second, config.batch, config.hidden
    );
    println!(
        "time per epoch: {:.3} s, {:.0} samples/s, {:.4} ms per step (means over the epochs; \
         kernels were compiled by a warm-up step before timing)",
        timing.epoch_seconds, timing.samples_per_second, timing.step_ms,
    );
    if let Some(seconds) = first_step {
        println!(
            "first training step: {seconds:.3} s from the start of training (compiling or \
             loading every kernel of a step, then running it)"
        );
    }
    println!("{}", kernel_sources());
    println!(
        "wrote {}, metrics.json, training_curve.png, confusion.csv, confusion.png in {}",
        checkpoint::FILE_NAME,
        args.out.display()
    );
    Ok(())
}

/// Means of the per-epoch timings (the trainer compiles its kernels before timing anything).
struct Timing {
    epoch_seconds: f64,
    samples_per_second: f64,
    step_ms: f64,
}

impl Timing {
    fn of(epochs: &[EpochStats]) -> Timing {
        let n = epochs.len().max(1) as f64;
        let mean = |get: fn(&EpochStats) -> f64| epochs.iter().map(get).sum::<f64>() / n;
        Timing {
            epoch_seconds: mean(|s| s.seconds),
            samples_per_second: mean(|s| s.samples_per_second),
            step_ms: mean(|s| s.step_ms),
        }
    }
}

/// "MNIST", "Fashion-MNIST" or the folder's name.
fn dataset_name(source: &data::Source) -> String {
    match source.kind {
        data::Kind::Mnist => "MNIST".to_string(),
        data::Kind::FashionMnist => "Fashion-MNIST".to_string(),
        data::Kind::Given => source.dir.display().to_string(),
    }
}

/// Writes confusion.csv and confusion.png, the classes by their names.
fn write_confusion(
    out: &Path,
    confusion: &[Vec<u32>],
    names: &[String],
    dataset: &str,
) -> Result<()> {
    output::write_text(
        &out.join("confusion.csv"),
        &output::confusion_csv(confusion, names),
    )?;
    let title = format!("{dataset} test set: confusion matrix");
    plot::confusion_heatmap(&out.join("confusion.png"), confusion, names, &title)
}

/// `--eval-only`: loads OUT/weights.bin and evaluates it on the test set.
fn evaluate_saved(args: &Args, gpu: &Gpu, test_set: &Dataset, source: &data::Source) -> Result<()> {
    let path = args.out.join(checkpoint::FILE_NAME);
    if !path.is_file() {
        return Err(Error::Usage(format!(
            "--eval-only: {} does not exist; train first (without --eval-only) with the same --out",
            path.display()
        )));
    }
    let model = checkpoint::load(&path, test_set.pixels, test_set.classes)?;
    let sizes: Vec<String> = std::iter::once(model.layers[0].inputs)
        .chain(model.layers.iter().map(|l| l.outputs))
        .map(|n| n.to_string())
        .collect();
    println!("loaded {} (MLP {})", path.display(), sizes.join("-"));
    let eval = train::evaluate(gpu, &model, test_set)?;
    let names = source.class_names(eval.confusion.len());
    write_confusion(&args.out, &eval.confusion, &names, &dataset_name(source))?;
    println!("{}", output::confusion_table(&eval.confusion, &names));
    println!(
        "test loss {:.4}, test accuracy: {:.2}% on {} samples",
        eval.loss,
        100.0 * eval.accuracy,
        test_set.len
    );
    println!("{}", kernel_sources());
    println!(
        "wrote confusion.csv and confusion.png in {}",
        args.out.display()
    );
    Ok(())
}

/// Where this run's kernels came from, and whether NVRTC was loaded at all: built with
/// `--features aot`, a run on a GPU the bundle covers needs no NVRTC.
fn kernel_sources() -> String {
    let stats = gpu_dsl::runtime::compile_stats();
    let nvrtc = match nvrtc_loaded() {
        Some(true) => "NVRTC was loaded",
        Some(false) => "NVRTC was never loaded",
        None => "whether NVRTC was loaded is unknown here",
    };
    format!(
        "kernels: {} loaded from AOT CUBINs, {} JIT-compiled by the driver from AOT PTX, {} \
         compiled by NVRTC, {} from the disk cache ({} AOT kernel variants embedded); {nvrtc}",
        stats.aot_cubin_loads,
        stats.aot_ptx_jits,
        stats.nvrtc_compiles,
        stats.disk_hits,
        gpu_dsl::aot::registered_variants(),
    )
}

/// Whether libnvrtc is mapped into this process (Linux's /proc; `None` elsewhere).
fn nvrtc_loaded() -> Option<bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    Some(maps.contains("libnvrtc"))
}
