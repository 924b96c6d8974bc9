//! Training and evaluation of the MLP. For now [`train`] and [`evaluate`] call the host
//! reference in `reference.rs`, so the rest of the example runs end to end; the GPU trainer
//! replaces their bodies behind the same interface.

use gpu::prelude::Gpu;

use crate::reference;

/// The optimizer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Optimizer {
    /// Adam with β1 = 0.9, β2 = 0.999, ε = 1e-8 (PyTorch's defaults).
    Adam,
    /// SGD with (PyTorch-style) momentum.
    Sgd {
        /// Momentum factor.
        momentum: f32,
    },
}

/// The arithmetic precision of training.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout.
    F32,
    /// bf16 matrix products with f32 accumulation and f32 master weights.
    Bf16,
}

/// What to train and how.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Hidden layer sizes, input to output (`[128]` is 784 → 128 → 10).
    pub hidden: Vec<usize>,
    /// Samples per step.
    pub batch: usize,
    /// Passes over the training set.
    pub epochs: usize,
    /// Learning rate.
    pub lr: f32,
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Seed of the initial weights and the shuffling.
    pub seed: u64,
    /// The arithmetic precision.
    pub precision: Precision,
}

/// Images as f32 in [0,1] (row-major n × pixels) and labels 0..classes.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// `len × pixels` values in [0, 1].
    pub images: Vec<f32>,
    /// `len` labels in `0..classes`.
    pub labels: Vec<u8>,
    /// Number of samples.
    pub len: usize,
    /// Values per image.
    pub pixels: usize,
    /// Number of classes.
    pub classes: usize,
}

/// One dense layer's parameters, row-major `inputs × outputs` weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// `inputs × outputs` weights, row-major (`weights[i * outputs + o]`).
    pub weights: Vec<f32>,
    /// `outputs` biases.
    pub bias: Vec<f32>,
}

/// An MLP: dense layers with ReLU between them and none after the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The layers, input first.
    pub layers: Vec<Layer>,
}

/// What one epoch measured.
#[derive(Clone, Debug)]
pub struct EpochStats {
    /// The epoch, from 1.
    pub epoch: usize,
    /// Mean training loss over the epoch's steps.
    pub train_loss: f32,
    /// Training accuracy over the epoch, in [0, 1].
    pub train_accuracy: f32,
    /// Test loss after the epoch.
    pub test_loss: f32,
    /// Test accuracy after the epoch, in [0, 1].
    pub test_accuracy: f32,
    /// Seconds of training in the epoch (evaluation excluded).
    pub seconds: f64,
    /// Training samples per second.
    pub samples_per_second: f64,
    /// Mean time of one training step, in milliseconds.
    pub step_ms: f64,
}

/// A model's loss, accuracy and confusion matrix on a dataset.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Mean cross-entropy loss.
    pub loss: f32,
    /// Accuracy in [0, 1].
    pub accuracy: f32,
    /// classes × classes, [true][predicted].
    pub confusion: Vec<Vec<u32>>,
}

/// Progress within an epoch, for the progress bar.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The epoch, from 1.
    pub epoch: usize,
    /// Steps done in this epoch, 1..=steps.
    pub step: usize,
    /// Steps in the epoch.
    pub steps: usize,
    /// Loss of the last step.
    pub loss: f32,
    /// Training samples per second so far in this epoch.
    pub samples_per_second: f64,
}

/// Trains a model on `train`, evaluating on `test` after each epoch.
pub fn train(
    _gpu: &Gpu,
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> gpu::Result<Model> {
    Ok(reference::train(config, train, test, on_progress, on_epoch))
}

/// Evaluates `model` on `data`.
pub fn evaluate(_gpu: &Gpu, model: &Model, data: &Dataset) -> gpu::Result<Evaluation> {
    Ok(reference::evaluate(model, data))
}
