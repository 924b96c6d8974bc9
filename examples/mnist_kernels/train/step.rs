//! The launch-per-kernel step in its parts: forward with the loss, each layer's weight
//! gradient and the gradient it passes down, and the update. One rank runs them in a row;
//! data-parallel training (`parallel.rs`) reduces each layer's gradients across the ranks as
//! soon as they are complete, while the rest of the backward pass runs.

use gpu_dsl::kernels::gemm::{gemm_with_scratch as gemm, Gemm};
use gpu_dsl::kernels::mlp;
use gpu_dsl::prelude::*;

use super::{forward, forward_bf16, rounded_weights, DeviceLayer, Optimizer, Trainer};

impl Trainer {
    /// Gathers the batch, runs the forward pass and the loss, leaving the loss's gradient in
    /// the last layer's output.
    pub(super) fn forward_loss(&mut self, stream: &Stream) -> Result<(), gpu_dsl::Error> {
        let batch = self.batch;
        mlp::gather(
            stream,
            &self.images,
            &self.labels,
            &self.perm,
            &self.state,
            &mut self.batch_x,
            &mut self.batch_y,
        )?;
        let layer_count = self.layers.len();
        let forward_scratch = &mut self.scratch[..layer_count];
        let (layers, x, acts) = (&self.layers, &self.batch_x, &mut self.acts);
        match &mut self.mixed {
            None => forward(stream, layers, x, batch, acts, forward_scratch)?,
            Some(mixed) => forward_bf16(stream, layers, x, mixed, acts, forward_scratch)?,
        }
        let last = layer_count - 1;
        mlp::softmax_cross_entropy(
            stream,
            &mut self.acts.outputs[last],
            &self.layers[last].bias,
            &self.batch_y,
            &self.state,
            &mut self.losses,
            &mut self.correct,
        )
    }

    /// Layer `l`'s weight gradient, and for the last layer its bias gradient. Called from the
    /// last layer down, after which layer `l`'s gradients are complete (a hidden layer's bias
    /// gradient came with the gradient passed down from the layer above it).
    pub(super) fn weight_gradient(
        &mut self,
        stream: &Stream,
        l: usize,
    ) -> Result<(), gpu_dsl::Error> {
        let (batch, last) = (self.batch, self.layers.len() - 1);
        let grad_scratch = &mut self.scratch[self.layers.len() + l];
        let layer = &mut self.layers[l];
        let dz = if l == last {
            &self.acts.outputs[last]
        } else {
            &self.grad_pre[l]
        };
        let grad_spec = Gemm::new(layer.inputs, layer.outputs, batch).trans_a();
        match &mut self.mixed {
            None => {
                let input = if l == 0 {
                    &self.batch_x
                } else {
                    &self.acts.outputs[l - 1]
                };
                gemm(
                    stream,
                    &grad_spec,
                    input,
                    dz,
                    &mut layer.grad_weights,
                    grad_scratch,
                )?;
            }
            Some(mixed) => {
                let (hidden, grads) = (&mixed.hidden, &mut mixed.grads);
                mlp::to_bf16(stream, dz, &mut grads[l])?;
                let input = if l == 0 {
                    &mixed.batch_x
                } else {
                    &hidden[l - 1]
                };
                let out = &mut layer.grad_weights;
                gemm(stream, &grad_spec, input, &grads[l], out, grad_scratch)?;
            }
        }
        if l == last {
            mlp::bias_gradient(stream, dz, &mut layer.grad_bias)?;
        }
        Ok(())
    }

    /// The gradient layer `l > 0` passes down: through its weights, then through the ReLU of
    /// layer `l - 1`, with that layer's bias gradient. Nothing for layer 0.
    pub(super) fn input_gradient(
        &mut self,
        stream: &Stream,
        l: usize,
    ) -> Result<(), gpu_dsl::Error> {
        if l == 0 {
            return Ok(());
        }
        let (batch, last) = (self.batch, self.layers.len() - 1);
        let back_scratch = &mut self.scratch[2 * self.layers.len() + l];
        let (below, rest) = self.layers.split_at_mut(l);
        let (layer, below) = (&rest[0], &mut below[l - 1]);
        let dz = if l == last {
            &self.acts.outputs[last]
        } else {
            &self.grad_pre[l]
        };
        let back_spec = Gemm::new(batch, layer.inputs, layer.outputs).trans_b();
        let out = &mut self.grad_out[l - 1];
        match &self.mixed {
            None => gemm(stream, &back_spec, dz, &layer.weights, out, back_scratch)?,
            Some(mixed) => {
                let weights = rounded_weights(layer)?;
                gemm(
                    stream,
                    &back_spec,
                    &mixed.grads[l],
                    weights,
                    out,
                    back_scratch,
                )?;
            }
        }
        mlp::relu_bias_backward(
            stream,
            &self.grad_out[l - 1],
            &self.acts.outputs[l - 1],
            &mut self.grad_pre[l - 1],
            &mut below.grad_bias,
        )
    }

    /// The optimizer's step on every layer from its gradients, then the step state moves on.
    pub(super) fn update(&mut self, stream: &Stream) -> Result<(), gpu_dsl::Error> {
        for layer in &mut self.layers {
            let DeviceLayer {
                weights,
                bias,
                grad_weights,
                grad_bias,
                moment1,
                moment2,
                weights_bf16,
                ..
            } = layer;
            match self.optimizer {
                Optimizer::Adam => {
                    let state = &self.state;
                    let hyper = &self.adam;
                    mlp::adam(
                        stream,
                        hyper,
                        weights,
                        grad_weights,
                        &mut moment1.0,
                        &mut moment2.0,
                        state,
                    )?;
                    mlp::adam(
                        stream,
                        hyper,
                        bias,
                        grad_bias,
                        &mut moment1.1,
                        &mut moment2.1,
                        state,
                    )?;
                }
                Optimizer::Sgd { momentum } => {
                    let lr = self.adam.lr;
                    mlp::sgd(stream, lr, momentum, weights, grad_weights, &mut moment1.0)?;
                    mlp::sgd(stream, lr, momentum, bias, grad_bias, &mut moment1.1)?;
                }
            }
            if let Some(rounded) = weights_bf16 {
                mlp::to_bf16(stream, weights, rounded)?;
            }
        }
        mlp::advance(stream, &mut self.state)
    }
}
