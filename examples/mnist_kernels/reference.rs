//! The MLP on the host, in plain f32: forward, backward, Adam and SGD with momentum as PyTorch
//! defines them. It trains and evaluates when no GPU trainer is plugged in, and it is the
//! reference a GPU trainer's results can be compared with.

use std::time::Instant;

use crate::train::{
    Dataset, EpochStats, Evaluation, Layer, Model, Optimizer, Progress, TrainConfig,
};

/// Trains a model on `train`, evaluating on `test` after each epoch, in f32 whatever
/// `config.precision` says.
pub fn train(
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> Model {
    let mut rng = SplitMix64(config.seed);
    let mut model = init_model(train.pixels, &config.hidden, train.classes, &mut rng);
    let mut optimizer = HostOptimizer::new(&model, config.optimizer, config.lr);
    let steps = train.len.div_ceil(config.batch.max(1));
    let mut order: Vec<usize> = (0..train.len).collect();
    for epoch in 1..=config.epochs {
        shuffle(&mut order, &mut rng);
        let start = Instant::now();
        let (mut loss_sum, mut correct) = (0.0f64, 0usize);
        for (step, batch) in order.chunks(config.batch.max(1)).enumerate() {
            let (loss, right, grads) = forward_backward(&model, train, batch);
            optimizer.step(&mut model, &grads);
            loss_sum += f64::from(loss);
            correct += right;
            let done = (step * config.batch + batch.len()) as f64;
            on_progress(&Progress {
                epoch,
                step: step + 1,
                steps,
                loss,
                samples_per_second: done / start.elapsed().as_secs_f64().max(1e-9),
            });
        }
        let seconds = start.elapsed().as_secs_f64();
        let eval = evaluate(&model, test);
        on_epoch(&EpochStats {
            epoch,
            train_loss: (loss_sum / steps.max(1) as f64) as f32,
            train_accuracy: correct as f32 / train.len.max(1) as f32,
            test_loss: eval.loss,
            test_accuracy: eval.accuracy,
            seconds,
            samples_per_second: train.len as f64 / seconds.max(1e-9),
            step_ms: seconds * 1e3 / steps.max(1) as f64,
            profile: None,
            first_step_seconds: None,
        });
    }
    model
}

/// Evaluates `model` on `data`.
pub fn evaluate(model: &Model, data: &Dataset) -> Evaluation {
    let mut confusion = vec![vec![0u32; data.classes]; data.classes];
    let mut loss_sum = 0.0f64;
    let mut correct = 0usize;
    for n in 0..data.len {
        let input = &data.images[n * data.pixels..(n + 1) * data.pixels];
        let logits = forward(model, input).pop().unwrap_or_default();
        let label = usize::from(data.labels[n]);
        let (loss, predicted) = cross_entropy(&logits, label);
        loss_sum += f64::from(loss);
        correct += usize::from(predicted == label);
        if let Some(row) = confusion.get_mut(label) {
            if let Some(cell) = row.get_mut(predicted) {
                *cell += 1;
            }
        }
    }
    Evaluation {
        loss: (loss_sum / data.len.max(1) as f64) as f32,
        accuracy: correct as f32 / data.len.max(1) as f32,
        confusion,
    }
}

/// SplitMix64: a tiny seeded generator, enough for the host reference's initialisation and
/// shuffling without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn symmetric(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// Fisher–Yates shuffle.
fn shuffle(order: &mut [usize], rng: &mut SplitMix64) {
    for i in (1..order.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
}

/// PyTorch's `nn.Linear` initialisation: weights and biases uniform in ±1/√inputs.
fn init_model(pixels: usize, hidden: &[usize], classes: usize, rng: &mut SplitMix64) -> Model {
    let sizes: Vec<usize> = std::iter::once(pixels)
        .chain(hidden.iter().copied())
        .chain(std::iter::once(classes))
        .collect();
    let layers = sizes
        .windows(2)
        .map(|io| {
            let bound = 1.0 / (io[0] as f32).sqrt();
            Layer {
                inputs: io[0],
                outputs: io[1],
                weights: (0..io[0] * io[1])
                    .map(|_| bound * rng.symmetric())
                    .collect(),
                bias: (0..io[1]).map(|_| bound * rng.symmetric()).collect(),
            }
        })
        .collect();
    Model { layers }
}

/// Every layer's output for one input (ReLU applied to all but the last).
pub fn forward(model: &Model, input: &[f32]) -> Vec<Vec<f32>> {
    let mut outputs: Vec<Vec<f32>> = Vec::with_capacity(model.layers.len());
    for (l, layer) in model.layers.iter().enumerate() {
        let x = outputs.last().map_or(input, Vec::as_slice);
        let mut y = layer.bias.clone();
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                let row = &layer.weights[i * layer.outputs..(i + 1) * layer.outputs];
                y.iter_mut().zip(row).for_each(|(y, w)| *y += xi * w);
            }
        }
        if l + 1 < model.layers.len() {
            y.iter_mut().for_each(|v| *v = v.max(0.0));
        }
        outputs.push(y);
    }
    outputs
}

/// Softmax cross-entropy of `logits` against `label`, and the predicted class.
pub fn cross_entropy(logits: &[f32], label: usize) -> (f32, usize) {
    let (predicted, max) =
        logits
            .iter()
            .copied()
            .enumerate()
            .fold((0, f32::NEG_INFINITY), |best, (i, v)| {
                if v > best.1 {
                    (i, v)
                } else {
                    best
                }
            });
    let log_sum = logits.iter().map(|v| (v - max).exp()).sum::<f32>().ln() + max;
    let loss = log_sum - logits.get(label).copied().unwrap_or(0.0);
    (loss, predicted)
}

/// Mean loss, number correct and parameter gradients (same shapes as the layers) of a batch.
pub fn forward_backward(
    model: &Model,
    data: &Dataset,
    batch: &[usize],
) -> (f32, usize, Vec<Layer>) {
    let mut grads: Vec<Layer> = model
        .layers
        .iter()
        .map(|l| Layer {
            inputs: l.inputs,
            outputs: l.outputs,
            weights: vec![0.0; l.weights.len()],
            bias: vec![0.0; l.bias.len()],
        })
        .collect();
    let (mut loss_sum, mut correct) = (0.0f32, 0usize);
    let scale = 1.0 / batch.len() as f32;
    for &n in batch {
        let input = &data.images[n * data.pixels..(n + 1) * data.pixels];
        let outputs = forward(model, input);
        let label = usize::from(data.labels[n]);
        let logits = &outputs[outputs.len() - 1];
        let (loss, predicted) = cross_entropy(logits, label);
        loss_sum += loss;
        correct += usize::from(predicted == label);
        // d(loss)/d(logits) = softmax - one_hot, averaged over the batch.
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = logits.iter().map(|v| (v - max).exp()).sum();
        let mut delta: Vec<f32> = logits
            .iter()
            .enumerate()
            .map(|(o, v)| ((v - max).exp() / sum - f32::from(u8::from(o == label))) * scale)
            .collect();
        for l in (0..model.layers.len()).rev() {
            let layer = &model.layers[l];
            let x = if l == 0 { input } else { &outputs[l - 1] };
            let grad = &mut grads[l];
            grad.bias.iter_mut().zip(&delta).for_each(|(g, d)| *g += d);
            let mut back = vec![0.0f32; layer.inputs];
            for (i, &xi) in x.iter().enumerate() {
                let row = i * layer.outputs..(i + 1) * layer.outputs;
                if xi != 0.0 {
                    grad.weights[row.clone()]
                        .iter_mut()
                        .zip(&delta)
                        .for_each(|(g, d)| *g += xi * d);
                }
                // ReLU's derivative: zero where the layer below's output was clamped.
                if l > 0 && xi > 0.0 {
                    back[i] = layer.weights[row]
                        .iter()
                        .zip(&delta)
                        .map(|(w, d)| w * d)
                        .sum();
                }
            }
            delta = back;
        }
    }
    (loss_sum * scale, correct, grads)
}

/// Adam or SGD-with-momentum state for every parameter.
struct HostOptimizer {
    kind: Optimizer,
    lr: f32,
    step: i32,
    /// First moments (Adam) or velocities (SGD), flattened in layer order.
    m: Vec<f32>,
    /// Second moments (Adam only).
    v: Vec<f32>,
}

impl HostOptimizer {
    fn new(model: &Model, kind: Optimizer, lr: f32) -> Self {
        let count = model
            .layers
            .iter()
            .map(|l| l.weights.len() + l.bias.len())
            .sum();
        HostOptimizer {
            kind,
            lr,
            step: 0,
            m: vec![0.0; count],
            v: vec![0.0; count],
        }
    }

    fn step(&mut self, model: &mut Model, grads: &[Layer]) {
        self.step += 1;
        let params = model
            .layers
            .iter_mut()
            .flat_map(|l| l.weights.iter_mut().chain(l.bias.iter_mut()));
        let grads = grads.iter().flat_map(|l| l.weights.iter().chain(&l.bias));
        let moments = self.m.iter_mut().zip(self.v.iter_mut());
        match self.kind {
            Optimizer::Adam => {
                let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
                let c1 = 1.0 - b1.powi(self.step);
                let c2 = 1.0 - b2.powi(self.step);
                for ((p, g), (m, v)) in params.zip(grads).zip(moments) {
                    *m = b1 * *m + (1.0 - b1) * g;
                    *v = b2 * *v + (1.0 - b2) * g * g;
                    *p -= self.lr * (*m / c1) / ((*v / c2).sqrt() + eps);
                }
            }
            Optimizer::Sgd { momentum } => {
                for ((p, g), (m, _)) in params.zip(grads).zip(moments) {
                    *m = momentum * *m + g;
                    *p -= self.lr * *m;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::Precision;

    /// `count` samples of 4 pixels in 3 classes: class c lights pixel c (plus noise), so a
    /// small MLP separates them.
    fn toy(count: usize, seed: u64) -> Dataset {
        let mut rng = SplitMix64(seed);
        let mut images = Vec::new();
        let mut labels = Vec::new();
        for n in 0..count {
            let label = (n % 3) as u8;
            for p in 0..4 {
                let base = if p == usize::from(label) { 0.9 } else { 0.1 };
                images.push(base + 0.05 * rng.symmetric());
            }
            labels.push(label);
        }
        Dataset {
            images,
            labels,
            len: count,
            pixels: 4,
            classes: 3,
        }
    }

    /// Central difference of the batch loss when `nudge` adds `delta` to one parameter.
    fn numeric_gradient(
        model: &Model,
        data: &Dataset,
        batch: &[usize],
        nudge: impl Fn(&mut Model, f32),
    ) -> f64 {
        let eps = 1e-2f32;
        let loss_at = |delta: f32| {
            let mut moved = model.clone();
            nudge(&mut moved, delta);
            f64::from(forward_backward(&moved, data, batch).0)
        };
        (loss_at(eps) - loss_at(-eps)) / (2.0 * f64::from(eps))
    }

    #[test]
    fn gradients_match_finite_differences() {
        let data = toy(6, 1);
        let model = init_model(4, &[5], 3, &mut SplitMix64(7));
        let batch = [0, 1, 2, 4];
        let (_, _, grads) = forward_backward(&model, &data, &batch);
        let close = |numeric: f64, analytic: f32| {
            let analytic = f64::from(analytic);
            (numeric - analytic).abs() < 2e-3 + 2e-2 * analytic.abs()
        };
        let mut checked = 0;
        for (l, grad) in grads.iter().enumerate() {
            for (i, &analytic) in grad.weights.iter().enumerate() {
                let numeric =
                    numeric_gradient(&model, &data, &batch, |m, d| m.layers[l].weights[i] += d);
                assert!(
                    close(numeric, analytic),
                    "layer {l} weight {i}: {numeric} vs {analytic}"
                );
                checked += 1;
            }
            for (o, &analytic) in grad.bias.iter().enumerate() {
                let numeric =
                    numeric_gradient(&model, &data, &batch, |m, d| m.layers[l].bias[o] += d);
                assert!(
                    close(numeric, analytic),
                    "layer {l} bias {o}: {numeric} vs {analytic}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 4 * 5 + 5 + 5 * 3 + 3);
    }

    fn learns_with(optimizer: Optimizer, lr: f32) {
        let (train_set, test_set) = (toy(90, 2), toy(30, 3));
        let config = TrainConfig {
            hidden: vec![8],
            batch: 8,
            epochs: 30,
            lr,
            optimizer,
            seed: 5,
            precision: Precision::F32,
            fused: false,
            profile: false,
        };
        let (mut progress_calls, mut epochs) = (0, Vec::new());
        let model = train(
            &config,
            &train_set,
            &test_set,
            &mut |p| {
                assert!(p.step >= 1 && p.step <= p.steps && p.steps == 12);
                progress_calls += 1;
            },
            &mut |s| epochs.push(s.clone()),
        );
        assert_eq!(progress_calls, 30 * 12);
        assert_eq!(epochs.len(), 30);
        assert!(
            epochs[29].train_loss < 0.5 * epochs[0].train_loss,
            "{epochs:?}"
        );
        let eval = evaluate(&model, &test_set);
        assert_eq!(eval.accuracy, 1.0, "{eval:?}");
        assert_eq!(
            eval.confusion,
            vec![vec![10, 0, 0], vec![0, 10, 0], vec![0, 0, 10]]
        );
    }

    #[test]
    fn adam_learns_a_separable_problem() {
        learns_with(Optimizer::Adam, 1e-2);
    }

    #[test]
    fn sgd_with_momentum_learns_a_separable_problem() {
        learns_with(Optimizer::Sgd { momentum: 0.9 }, 0.1);
    }

    #[test]
    fn cross_entropy_of_uniform_logits_is_log_classes() {
        let (loss, predicted) = cross_entropy(&[0.0; 10], 3);
        assert!((loss - 10f32.ln()).abs() < 1e-6);
        assert_eq!(predicted, 0);
    }
}
