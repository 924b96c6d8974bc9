//! The `mixed_precision` example's training on the CPU backend: a few steps in f32 and with
//! bf16 operands from the same weights on the same batches, each lowering the loss and
//! learning more than chance.

// The data-file reader and the table's helpers are the example's alone.
#[allow(dead_code)]
#[path = "../examples/mixed_precision/training.rs"]
mod training;

use gpu_dsl::kernels::mlp_step::packed_len;
use gpu_dsl::prelude::*;
use training::{Config, DeviceData, Precision};

#[test]
fn both_precisions_lower_the_loss_and_beat_chance() {
    let classes = 4;
    let (train_set, test_set) = training::synthetic(640, 256, classes, 3).split(128);
    let config = Config {
        hidden: vec![32],
        batch: 16,
        steps: 60,
        lr: 3e-2,
        seed: 3,
    };
    let sizes = training::layer_sizes(&config, &train_set);
    let init = training::init_params(&sizes, config.seed);
    let stream = Gpu::cpu().default_stream();
    let train = DeviceData::upload(&stream, &train_set).unwrap();
    // Parameters, gradients and Adam's two moments, in f32: a floor for the run's peak.
    let model_bytes = 4 * packed_len(&sizes) * std::mem::size_of::<f32>();
    let mut finals = Vec::new();
    for precision in [Precision::F32, Precision::Bf16] {
        let run = training::train(
            &stream, &config, &sizes, &init, &train, &test_set, precision,
        )
        .unwrap();
        assert_eq!(run.losses.len(), config.steps);
        assert!(
            run.losses.iter().all(|l| l.is_finite()),
            "{precision:?}: {:?}",
            run.losses
        );
        assert!(
            run.final_loss() < 0.8 * run.first_loss(),
            "{precision:?}: the loss went from {} to {}",
            run.first_loss(),
            run.final_loss()
        );
        assert!(
            run.test_accuracy > 1.5 / classes as f32,
            "{precision:?}: test accuracy {}",
            run.test_accuracy
        );
        assert!(
            run.peak_bytes >= model_bytes,
            "{precision:?}: peak {} below the model's {model_bytes} bytes",
            run.peak_bytes
        );
        finals.push(run.losses);
    }
    // The same batches from the same weights: bf16 operands must change the arithmetic.
    assert_ne!(finals[0], finals[1], "f32 and bf16 trained identically");
}

#[test]
fn a_batch_larger_than_the_data_is_refused() {
    let (train_set, test_set) = training::synthetic(40, 8, 2, 1).split(8);
    let config = Config {
        hidden: vec![4],
        batch: 64,
        steps: 2,
        lr: 1e-3,
        seed: 1,
    };
    let sizes = training::layer_sizes(&config, &train_set);
    let init = training::init_params(&sizes, 1);
    let stream = Gpu::cpu().default_stream();
    let train = DeviceData::upload(&stream, &train_set).unwrap();
    let result = training::train(
        &stream,
        &config,
        &sizes,
        &init,
        &train,
        &test_set,
        Precision::F32,
    );
    assert!(matches!(result, Err(training::Error::Usage(_))));
}

#[test]
fn evaluation_counts_a_perfect_model_right() {
    // One layer from 2 inputs to 2 classes, the identity: the larger input is the class.
    let sizes = [2, 2];
    let params = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let data = training::Dataset {
        images: vec![0.9, 0.1, 0.2, 0.7, 0.6, 0.3],
        labels: vec![0, 1, 0],
        pixels: 2,
        classes: 2,
    };
    let (loss, accuracy) = training::evaluate(&sizes, &params, &data);
    assert_eq!(accuracy, 1.0);
    let expected = [(0.9f32, 0.1f32), (0.7, 0.2), (0.6, 0.3)]
        .iter()
        .map(|&(right, wrong)| ((wrong - right).exp() + 1.0).ln())
        .sum::<f32>()
        / 3.0;
    assert!((loss - expected).abs() < 1e-6, "{loss} against {expected}");
}
