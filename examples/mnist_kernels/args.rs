//! The command line.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Trains an MLP on MNIST (or any dataset of IDX files) with the project's own GPU kernels.
#[derive(Debug, Parser)]
#[command(name = "mnist_kernels", version)]
pub struct Args {
    /// Folder with the four IDX files (raw or .gz); default: ./data/mnist, then a download,
    /// then Fashion-MNIST from /usr/share/datasets/fashion-mnist.
    #[arg(long, env = "MNIST_DIR", value_name = "DIR")]
    pub data: Option<PathBuf>,

    /// Folder for the weights, metrics, training curve and confusion matrix.
    #[arg(long, value_name = "DIR", default_value = "out/mnist")]
    pub out: PathBuf,

    /// Passes over the training set.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: u32,

    /// Samples per training step.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,

    /// Learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f32,

    /// Hidden layer sizes, comma-separated (`512,256` for two hidden layers).
    #[arg(long, value_delimiter = ',', default_value = "128", value_parser = clap::value_parser!(u32).range(1..))]
    pub hidden: Vec<u32>,

    /// The optimizer.
    #[arg(long, value_enum, default_value_t = OptimizerArg::Adam)]
    pub optimizer: OptimizerArg,

    /// Momentum of SGD (ignored by Adam).
    #[arg(long, default_value_t = 0.9)]
    pub momentum: f32,

    /// Seed of the initial weights and the shuffling.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Mixed precision: bf16 matrix products, f32 accumulation and master weights.
    #[arg(long)]
    pub bf16: bool,

    /// Run the step as a launch per kernel (the library's GEMMs and MLP kernels) instead of
    /// one cooperative launch.
    #[arg(long)]
    pub unfused: bool,

    /// Use only the first N training samples and the first N test samples.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,

    /// Load OUT/weights.bin and evaluate it on the test set instead of training.
    #[arg(long)]
    pub eval_only: bool,

    /// Run on the CPU backend even when a CUDA device is present.
    #[arg(long)]
    pub cpu: bool,

    /// Data-parallel training on N devices (CUDA devices 0..N, or N CPU-backend ranks with
    /// --cpu), a thread each: every device takes batch/N samples of each step (`--devices 1`:
    /// the same path on one rank). A process started by scripts/launch is one rank of its
    /// group instead (RANK, WORLD_SIZE).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub devices: Option<u32>,

    /// Profile steps 10..20 of the first epoch (each kernel launched, not replayed as a
    /// graph): print the table and write OUT/profile.json, a Chrome trace.
    #[arg(long)]
    pub profile: bool,

    /// Never download MNIST.
    #[arg(long)]
    pub no_download: bool,
}

/// The `--optimizer` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    /// Adam.
    Adam,
    /// SGD with momentum (`--momentum`).
    Sgd,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_reference_setup() {
        let args = Args::try_parse_from(["mnist_kernels"]).unwrap();
        assert_eq!((args.epochs, args.batch, args.hidden), (10, 64, vec![128]));
        assert_eq!(
            (args.lr, args.optimizer, args.seed),
            (1e-3, OptimizerArg::Adam, 42)
        );
        assert_eq!(args.out, PathBuf::from("out/mnist"));
        assert!(!args.bf16 && !args.cpu && !args.eval_only && args.limit.is_none());
    }

    #[test]
    fn parses_depth_and_optimizer() {
        let args = Args::try_parse_from([
            "mnist_kernels",
            "--hidden",
            "512,256",
            "--optimizer",
            "sgd",
            "--momentum",
            "0.5",
            "--limit",
            "100",
        ])
        .unwrap();
        assert_eq!(args.hidden, vec![512, 256]);
        assert_eq!((args.optimizer, args.momentum), (OptimizerArg::Sgd, 0.5));
        assert_eq!(args.limit, Some(100));
        assert_eq!(args.devices, None);
        let wide = Args::try_parse_from([
            "mnist_kernels",
            "--hidden",
            "4096,4096",
            "--batch",
            "4096",
            "--devices",
            "4",
        ])
        .unwrap();
        assert_eq!(
            (wide.hidden, wide.batch, wide.devices),
            (vec![4096, 4096], 4096, Some(4))
        );
    }

    #[test]
    fn rejects_zero_sizes() {
        assert!(Args::try_parse_from(["mnist_kernels", "--batch", "0"]).is_err());
        assert!(Args::try_parse_from(["mnist_kernels", "--hidden", "128,0"]).is_err());
        assert!(Args::try_parse_from(["mnist_kernels", "--devices", "0"]).is_err());
    }
}
