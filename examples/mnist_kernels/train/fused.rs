//! The step as one cooperative launch (`gpu_dsl::kernels::mlp_step`): the model packed in one
//! buffer, its layers copied out to the per-layer buffers whenever the rest of the example (the
//! evaluation, the returned model) reads them.

use gpu_dsl::kernels::mlp::{Adam, StepState};
use gpu_dsl::kernels::mlp_step::{train_step, PackedModel, StepData, StepOptimizer};
use gpu_dsl::prelude::*;

use super::{DeviceLayer, Model, Optimizer, Precision, TrainConfig};

/// The packed model and how to step it.
pub(super) struct Fused {
    model: PackedModel,
    optimizer: StepOptimizer,
    mixed: bool,
}

/// `model`'s parameters packed layer by layer: weights, then bias.
fn pack(model: &Model) -> Vec<f32> {
    model
        .layers
        .iter()
        .flat_map(|layer| layer.weights.iter().chain(&layer.bias).copied())
        .collect()
}

impl Fused {
    /// The packed copy of `model` for `config`'s batch, optimizer and precision.
    pub(super) fn new(
        stream: &Stream,
        config: &TrainConfig,
        model: &Model,
    ) -> gpu_dsl::Result<Self> {
        let mut sizes = vec![model.layers[0].inputs];
        sizes.extend(model.layers.iter().map(|layer| layer.outputs));
        let optimizer = match config.optimizer {
            Optimizer::Adam => StepOptimizer::Adam(Adam::new(config.lr)),
            Optimizer::Sgd { momentum } => StepOptimizer::Sgd {
                lr: config.lr,
                momentum,
            },
        };
        Ok(Fused {
            model: PackedModel::new(stream, &sizes, config.batch, &pack(model))?,
            optimizer,
            mixed: config.precision == Precision::Bf16,
        })
    }

    /// Back to `model`'s parameters with a fresh optimizer state.
    pub(super) fn reset(&mut self, stream: &Stream, model: &Model) -> gpu_dsl::Result<()> {
        self.model.reset(stream, &pack(model))
    }

    /// One training step of the batch `state` names.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step(
        &mut self,
        stream: &Stream,
        images: &DeviceBuffer<f32>,
        labels: &DeviceBuffer<u32>,
        perm: &DeviceBuffer<u32>,
        state: &mut StepState,
        losses: &mut DeviceBuffer<f32>,
        correct: &mut DeviceBuffer<u32>,
    ) -> gpu_dsl::Result<()> {
        let data = StepData {
            images,
            labels,
            perm,
            losses,
            correct,
        };
        train_step(
            stream,
            &mut self.model,
            data,
            state,
            self.optimizer,
            self.mixed,
        )
    }

    /// Copies the packed parameters into `layers`' own buffers.
    pub(super) fn copy_to(
        &self,
        stream: &Stream,
        layers: &mut [DeviceLayer],
    ) -> gpu_dsl::Result<()> {
        let packed = self.model.params().to_host(stream)?;
        let mut rest = packed.as_slice();
        for layer in layers {
            let (weights, after) = rest.split_at(layer.inputs * layer.outputs);
            let (bias, after) = after.split_at(layer.outputs);
            rest = after;
            layer.weights.copy_from_host(stream, weights)?;
            layer.bias.copy_from_host(stream, bias)?;
        }
        Ok(())
    }
}
