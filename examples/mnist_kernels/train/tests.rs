//! The trainer against the plain-Rust reference, on the test device.

use super::*;
use crate::reference;
use gpu_dsl::runtime::test_device;

/// `len` samples of `pixels` values in [0, 1) and labels below `classes`.
fn random_data(len: usize, pixels: usize, classes: usize, seed: u64) -> Dataset {
    let mut random = Random::new(seed, 9);
    Dataset {
        images: (0..len * pixels).map(|_| random.uniform()).collect(),
        labels: (0..len).map(|_| random.below(classes) as u8).collect(),
        len,
        pixels,
        classes,
    }
}

fn config(precision: Precision) -> TrainConfig {
    TrainConfig {
        hidden: vec![9, 7],
        batch: 8,
        epochs: 2,
        lr: 1e-3,
        optimizer: Optimizer::Adam,
        seed: 5,
        precision,
        fused: false,
        profile: false,
    }
}

fn assert_close(found: &[f32], expected: &[f32], tolerance: f32, what: &str) {
    let scale = expected
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()))
        .max(1e-6);
    for (i, (f, e)) in found.iter().zip(expected).enumerate() {
        assert!(
            (f - e).abs() <= tolerance * scale,
            "{what}[{i}]: {f} vs {e} (scale {scale})"
        );
    }
}

/// One device step (gather through the permutation, forward, loss, backward) against the
/// host reference's gradients for the same batch.
fn one_step_matches_the_host_reference(precision: Precision, tolerance: f32) {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let data = random_data(40, 12, 3, 1);
    let config = config(precision);
    let model = init_model(&layer_sizes(&config, &data), config.seed);
    let mut trainer = Trainer::new(&stream, &config, &data, &model).unwrap();
    let perm: Vec<u32> = (0..40).rev().collect();
    trainer.perm.copy_from_host(&stream, &perm).unwrap();
    trainer.state.set(&stream, 1, 0).unwrap();
    trainer.step(&stream).unwrap();

    let batch: Vec<usize> = perm[8..16].iter().map(|&i| i as usize).collect();
    let (loss, correct, grads) = reference::forward_backward(&model, &data, &batch);
    let losses = trainer.losses.to_host(&stream).unwrap();
    assert!(
        (losses[1] - loss).abs() <= tolerance * loss,
        "{} vs {loss}",
        losses[1]
    );
    assert_eq!(
        trainer.correct.to_host(&stream).unwrap()[1] as usize,
        correct
    );
    for (l, (device, host)) in trainer.layers.iter().zip(&grads).enumerate() {
        let found = device.grad_weights.to_host(&stream).unwrap();
        assert_close(&found, &host.weights, tolerance, &format!("layer {l} dW"));
        let found = device.grad_bias.to_host(&stream).unwrap();
        assert_close(&found, &host.bias, tolerance, &format!("layer {l} db"));
    }
    // Adam's first step moves every parameter by about lr against its gradient's sign.
    for (device, (start, grad)) in trainer.layers.iter().zip(model.layers.iter().zip(&grads)) {
        let weights = device.weights.to_host(&stream).unwrap();
        for ((w, w0), g) in weights.iter().zip(&start.weights).zip(&grad.weights) {
            if g.abs() > 1e-4 {
                let moved = (w0 - w) / config.lr;
                assert!(
                    (moved - g.signum()).abs() < 0.05,
                    "{w0} -> {w} for gradient {g}"
                );
            }
        }
    }
    assert_eq!(trainer.state.get(&stream).unwrap(), (2, 1));
}

#[test]
fn an_f32_step_matches_the_host_reference() {
    one_step_matches_the_host_reference(Precision::F32, 1e-4);
}

#[test]
fn a_bf16_step_is_close_to_the_host_reference() {
    // bf16 keeps 8 significant bits: products of rounded inputs land within about 1%.
    one_step_matches_the_host_reference(Precision::Bf16, 3e-2);
}

/// The fused step trains to the same model as the launch-per-kernel step, up to the
/// rounding of sums taken in another order.
#[test]
fn the_fused_step_trains_like_the_unfused_one() {
    let gpu = test_device();
    let data = random_data(48, 12, 3, 4);
    for precision in [Precision::F32, Precision::Bf16] {
        let mut config = config(precision);
        config.epochs = 2;
        let mut run = |fused: bool| {
            config.fused = fused;
            train(&gpu, &config, &data, &data, &mut |_| {}, &mut |_| {}).unwrap()
        };
        let (unfused, fused) = (run(false), run(true));
        let tolerance = if precision == Precision::F32 {
            1e-4
        } else {
            2e-2
        };
        for (l, (a, b)) in fused.layers.iter().zip(&unfused.layers).enumerate() {
            assert_close(
                &a.weights,
                &b.weights,
                tolerance,
                &format!("layer {l} weights"),
            );
            assert_close(&a.bias, &b.bias, tolerance, &format!("layer {l} bias"));
        }
    }
}

/// Profiled steps run without the graph and train the same model; only the first
/// epoch's window is profiled.
#[test]
fn profiled_training_records_the_window_and_trains_the_same() {
    let gpu = test_device();
    let data = random_data(48, 12, 3, 4);
    let mut config = config(Precision::F32);
    config.epochs = 2;
    config.fused = true;
    let mut run = |profile: bool| {
        config.profile = profile;
        let mut stats = Vec::new();
        let model = train(&gpu, &config, &data, &data, &mut |_| {}, &mut |e| {
            stats.push(e.clone())
        })
        .unwrap();
        (model, stats)
    };
    let (plain, _) = run(false);
    let (profiled, stats) = run(true);
    assert_eq!(plain, profiled, "profiling changed the training");
    let window = profiled_steps(data.len / config.batch);
    assert_eq!(window, 0..6);
    let report = stats[0].profile.as_ref().expect("epoch 1 is profiled");
    // Other tests of this binary may launch meanwhile: at least the window's steps.
    let launches = report
        .records()
        .iter()
        .filter(|r| matches!(r.activity, gpu_dsl::runtime::Activity::Launch { .. }))
        .count();
    assert!(launches >= window.len(), "{}", report.table());
    assert!(stats[1].profile.is_none());
}

#[test]
fn training_is_deterministic_and_learns() {
    let gpu = test_device();
    let data = random_data(64, 12, 3, 2);
    // Learnable labels: the class of a sample is where its brightest third lies.
    let mut data = data;
    for n in 0..data.len {
        let row = &data.images[n * 12..][..12];
        let third = |t: usize| row[t * 4..][..4].iter().sum::<f32>();
        data.labels[n] = (0..3)
            .max_by(|&a, &b| third(a).total_cmp(&third(b)))
            .unwrap() as u8;
    }
    let mut config = config(Precision::F32);
    config.epochs = 30;
    config.lr = 1e-2;
    config.fused = true;
    let run = || {
        let mut stats = Vec::new();
        let model = train(&gpu, &config, &data, &data, &mut |_| {}, &mut |e| {
            stats.push(e.clone())
        })
        .unwrap();
        (model, stats)
    };
    let (first, first_stats) = run();
    let (second, _) = run();
    assert_eq!(first, second, "same seed, same backend: same weights");
    let (start, end) = (&first_stats[0], &first_stats[first_stats.len() - 1]);
    assert!(
        end.train_loss < start.train_loss * 0.7,
        "{} -> {}",
        start.train_loss,
        end.train_loss
    );
    assert!(end.test_accuracy > 0.8, "accuracy {}", end.test_accuracy);
    let evaluation = evaluate(&gpu, &first, &data).unwrap();
    assert_eq!(evaluation.accuracy, end.test_accuracy);
    let total: u32 = evaluation.confusion.iter().flatten().sum();
    assert_eq!(total as usize, data.len);
}
