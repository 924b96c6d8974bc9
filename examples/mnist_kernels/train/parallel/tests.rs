//! Data-parallel training on CPU-backend ranks, and on every GPU through NCCL where a machine
//! has two or more: identical replicas, and N ranks at global batch B training like one rank
//! at batch B.

use super::super::{train as train_one, Optimizer, Precision};
use super::*;

/// `len` samples of 12 values whose class (of 3) is where the brightest third of the sample
/// lies, so a small model can learn it.
fn learnable_data(len: usize, seed: u64) -> Dataset {
    let mut random = Random::new(seed, 9);
    let images: Vec<f32> = (0..len * 12).map(|_| random.uniform()).collect();
    let labels = images
        .chunks(12)
        .map(|row| {
            let third = |t: usize| row[t * 4..][..4].iter().sum::<f32>();
            (0..3u8)
                .max_by(|&a, &b| third(a as usize).total_cmp(&third(b as usize)))
                .unwrap_or(0)
        })
        .collect();
    Dataset {
        images,
        labels,
        len,
        pixels: 12,
        classes: 3,
    }
}

fn config(batch: usize, epochs: usize) -> TrainConfig {
    TrainConfig {
        hidden: vec![9, 7],
        batch,
        epochs,
        lr: 1e-2,
        optimizer: Optimizer::Adam,
        seed: 5,
        precision: Precision::F32,
        fused: false,
        profile: false,
    }
}

fn cpu_ranks(n: usize) -> Vec<Gpu> {
    vec![Gpu::cpu(); n]
}

/// Trains on `ranks` CPU ranks; every rank's model and rank 0's epochs.
fn run(ranks: usize, config: &TrainConfig, data: &Dataset) -> (Vec<Model>, Vec<EpochStats>) {
    let mut epochs = Vec::new();
    let models = train_threads(
        &cpu_ranks(ranks),
        config,
        data,
        data,
        &mut |_| {},
        &mut |e| epochs.push(e.clone()),
    )
    .unwrap();
    (models, epochs)
}

fn bits(model: &Model) -> Vec<u32> {
    model
        .layers
        .iter()
        .flat_map(|layer| layer.weights.iter().chain(&layer.bias))
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn one_rank_trains_exactly_as_the_unfused_step() {
    let data = learnable_data(96, 1);
    let config = config(8, 2);
    let (models, _) = run(1, &config, &data);
    let single = train_one(&Gpu::cpu(), &config, &data, &data, &mut |_| {}, &mut |_| {}).unwrap();
    assert_eq!(bits(&models[0]), bits(&single));
}

#[test]
fn after_training_every_rank_holds_the_same_weights() {
    let data = learnable_data(96, 2);
    let start = init_model(&layer_sizes(&config(12, 1), &data), 5);
    for ranks in [2, 3, 4] {
        // One epoch of 96 / 12 = 8 steps; then a single step.
        for config in [config(12, 1), config(96, 1)] {
            let (models, epochs) = run(ranks, &config, &data);
            assert_eq!(models.len(), ranks);
            for (rank, model) in models.iter().enumerate() {
                assert_eq!(bits(model), bits(&models[0]), "rank {rank} of {ranks}");
            }
            assert_ne!(bits(&models[0]), bits(&start), "the weights did not move");
            assert_eq!(epochs.len(), 1);
        }
    }
}

#[test]
fn n_ranks_at_batch_b_train_like_one_rank_at_batch_b() {
    for ranks in [2, 4] {
        trains_like_one_rank(&Gpu::cpu(), &cpu_ranks(ranks));
    }
}

/// Every CUDA device (two or more) when NCCL loads; `None`, after saying why, otherwise.
fn gpu_ranks() -> Option<Vec<Gpu>> {
    gpu_dsl::runtime::test_gpu()?;
    if !gpu_dsl::runtime::test_nccl() {
        return None;
    }
    match Gpu::count() {
        Ok(count) if count >= 2 => Some((0..count).map(|i| Gpu::new(i).unwrap()).collect()),
        _ => {
            eprintln!("skipped: one CUDA device; data-parallel GPU tests need two or more");
            None
        }
    }
}

#[test]
fn gpu_ranks_through_nccl_train_like_one_gpu() {
    let Some(gpus) = gpu_ranks() else { return };
    let ranks = if gpus.len() >= 4 {
        &gpus[..4]
    } else {
        &gpus[..2]
    };
    trains_like_one_rank(&gpus[0], ranks);
    // Every rank ends with the same bits, after many steps and after a single one.
    let data = learnable_data(96, 2);
    for config in [config(16, 2), config(96, 1)] {
        let models = train_threads(ranks, &config, &data, &data, &mut |_| {}, &mut |_| {}).unwrap();
        assert_eq!(models.len(), ranks.len());
        for (rank, model) in models.iter().enumerate() {
            assert_eq!(
                bits(model),
                bits(&models[0]),
                "rank {rank} of {}",
                ranks.len()
            );
        }
    }
}

/// `ranks` at global batch B against one rank on `one` at batch B: the same losses and test
/// accuracy epoch by epoch (within 0.3 pt), and nearby weights at the end.
fn trains_like_one_rank(one: &Gpu, ranks: &[Gpu]) {
    let (train, test) = (learnable_data(384, 3), learnable_data(1024, 4));
    let config = config(32, 6);
    let mut single = Vec::new();
    let alone = train_one(one, &config, &train, &test, &mut |_| {}, &mut |e| {
        single.push(e.clone())
    })
    .unwrap();
    let (one_end, one_start) = (&single[single.len() - 1], &single[0]);
    assert!(one_end.test_accuracy > 0.8, "{}", one_end.test_accuracy);
    assert!(one_end.train_loss < one_start.train_loss * 0.7);
    let mut epochs = Vec::new();
    let models = train_threads(ranks, &config, &train, &test, &mut |_| {}, &mut |e| {
        epochs.push(e.clone())
    })
    .unwrap();
    assert_eq!(epochs.len(), single.len());
    let count = ranks.len();
    for (epoch, (a, b)) in epochs.iter().zip(&single).enumerate() {
        let what = format!("{count} ranks, epoch {}", epoch + 1);
        assert!(
            (a.train_loss - b.train_loss).abs() <= 1e-3 * b.train_loss,
            "{what}: loss {} vs {}",
            a.train_loss,
            b.train_loss
        );
        assert!(
            (a.test_accuracy - b.test_accuracy).abs() <= 0.003,
            "{what}: accuracy {} vs {}",
            a.test_accuracy,
            b.test_accuracy
        );
    }
    for (a, b) in models[0].layers.iter().zip(&alone.layers) {
        let scale = b.weights.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (x, y) in a.weights.iter().zip(&b.weights) {
            assert!(
                (x - y).abs() <= 1e-2 * scale,
                "{count} ranks: weight {x} vs {y}"
            );
        }
    }
}

#[test]
fn a_batch_that_does_not_split_over_the_ranks_is_an_error_on_every_rank() {
    let data = learnable_data(96, 2);
    let err = train_threads(
        &cpu_ranks(4),
        &config(10, 1),
        &data,
        &data,
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("does not split evenly over 4 ranks"), "{err}");
    let shard = shard(&[5, 6, 7, 8, 9, 10, 11, 12, 13], 2, 4, 2, 1);
    assert_eq!(shard, [7, 8, 11, 12, 0, 0, 0, 0, 0]);
}

#[test]
fn diverged_replicas_are_caught() {
    let data = learnable_data(12, 2);
    let model = init_model(&layer_sizes(&config(12, 1), &data), 5);
    let mut nudged = model.clone();
    nudged.layers[1].bias[2] = f32::from_bits(nudged.layers[1].bias[2].to_bits() ^ 1);
    assert_ne!(fingerprint(&model), fingerprint(&nudged));
    let comms = Communicator::for_devices(&cpu_ranks(3)).unwrap();
    let results: Vec<gpu_dsl::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|comm| {
                let replica = if comm.rank() == 2 { &nudged } else { &model };
                scope.spawn(move || check_replicas(&comm, &comm.gpu().default_stream(), replica))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for result in results {
        let err = result.unwrap_err().to_string();
        assert!(err.contains("rank 2's weights differ"), "{err}");
    }
}
