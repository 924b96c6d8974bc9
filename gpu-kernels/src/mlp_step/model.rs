//! The host side of the fused step: the packed model and its buffers, and the launch.

use gpu_dsl_runtime::half::bf16;
use gpu_dsl_runtime::{Block, DeviceBuffer, Error, Grid, LaunchConfig, Result, Stream};

use super::{mlp_train_step, THREADS};
use crate::mlp::{Adam, StepState};

/// The optimizer a fused step applies.
#[derive(Clone, Copy, Debug)]
pub enum StepOptimizer {
    /// Adam (PyTorch's formulation, no weight decay).
    Adam(Adam),
    /// SGD with momentum: learning rate and momentum.
    Sgd {
        /// The learning rate.
        lr: f32,
        /// The momentum factor.
        momentum: f32,
    },
}

/// A model's parameters, gradients and optimizer moments, each packed in one buffer (layer by
/// layer: weights, then bias), with the step's activation buffers.
pub struct PackedModel {
    /// `[inputs, outputs of each layer...]`.
    sizes: Vec<usize>,
    dims: DeviceBuffer<u32>,
    params: DeviceBuffer<f32>,
    /// The parameters rounded to bf16, which mixed-precision steps multiply by; every writer
    /// of `params` refreshes it, so `params` is not public.
    params16: DeviceBuffer<bf16>,
    grads: DeviceBuffer<f32>,
    moment1: DeviceBuffer<f32>,
    moment2: DeviceBuffer<f32>,
    acts: DeviceBuffer<f32>,
    deltas: DeviceBuffer<f32>,
    rows: DeviceBuffer<f32>,
    batch: usize,
    /// Blocks of the cooperative launch.
    blocks: u32,
}

impl PackedModel {
    /// Room for a model of `sizes` (`[inputs, hidden..., classes]`) trained on batches of
    /// `batch`, its parameters `params` (packed as the module describes) and zero moments.
    pub fn new(stream: &Stream, sizes: &[usize], batch: usize, params: &[f32]) -> Result<Self> {
        if sizes.len() < 2 || sizes.contains(&0) || batch == 0 {
            return Err(Error::InvalidLaunch(format!(
                "mlp_step: a model needs an input size and at least one layer, none empty, and \
                 a batch of at least one sample; got sizes {sizes:?} and batch {batch}"
            )));
        }
        let expected = packed_len(sizes);
        crate::map::same_len("mlp_step: packed parameters", expected, params.len())?;
        let dims: Vec<u32> = sizes
            .iter()
            .map(|&s| u32::try_from(s))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::InvalidLaunch("mlp_step: a layer wider than u32".into()))?;
        // The step's inputs, then every layer's outputs.
        let activations = batch * sizes.iter().sum::<usize>();
        // The kernel indexes the gradients' operands in u32.
        if 2 * activations > u32::MAX as usize || expected > u32::MAX as usize {
            return Err(Error::InvalidLaunch(format!(
                "mlp_step: a model of sizes {sizes:?} at a batch of {batch} needs buffers of \
                 more than 2^32 elements; use a smaller batch or the separate kernels of `mlp`"
            )));
        }
        let zeros = |n| DeviceBuffer::<f32>::zeroed(stream, n);
        let config = LaunchConfig::new(Grid::x(1), Block::x(THREADS));
        let kernel = &mlp_train_step::KERNEL;
        let fit = |args: &[gpu_dsl_runtime::TemplateArg]| {
            stream.max_cooperative_blocks_generic(kernel, args, config)
        };
        let most = fit(&[gpu_dsl_runtime::TemplateArg::Const(0)])?
            .min(fit(&[gpu_dsl_runtime::TemplateArg::Const(1)])?);
        // The CPU backend runs a cooperative grid's threads on one core, each a coroutine with
        // a stack of its own: more blocks only cost memory there.
        let blocks = match stream.gpu().backend() {
            gpu_dsl_runtime::Backend::Cpu => most.min(2),
            gpu_dsl_runtime::Backend::Cuda => most,
        }
        .max(1);
        Ok(PackedModel {
            sizes: sizes.to_vec(),
            dims: DeviceBuffer::from_host(stream, &dims)?,
            params: DeviceBuffer::from_host(stream, params)?,
            params16: DeviceBuffer::from_host(stream, &rounded(params))?,
            grads: zeros(expected)?,
            moment1: zeros(expected)?,
            moment2: zeros(expected)?,
            acts: zeros(activations)?,
            // In mixed precision the second half holds the gradients rounded to bf16.
            deltas: zeros(2 * activations)?,
            rows: zeros(2 * batch)?,
            batch,
            blocks,
        })
    }

    /// Back to `params` with zero moments.
    pub fn reset(&mut self, stream: &Stream, params: &[f32]) -> Result<()> {
        self.params.copy_from_host(stream, params)?;
        self.params16.copy_from_host(stream, &rounded(params))?;
        let zeros = vec![0.0f32; params.len()];
        self.moment1.copy_from_host(stream, &zeros)?;
        self.moment2.copy_from_host(stream, &zeros)
    }

    /// The layer sizes, inputs first.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The parameters, packed as the module describes.
    pub fn params(&self) -> &DeviceBuffer<f32> {
        &self.params
    }
}

/// `params` rounded to bf16.
fn rounded(params: &[f32]) -> Vec<bf16> {
    params.iter().map(|&p| bf16::from_f32(p)).collect()
}

/// Elements of a packed model of `sizes`: every layer's weights and bias.
pub fn packed_len(sizes: &[usize]) -> usize {
    sizes.windows(2).map(|p| p[0] * p[1] + p[1]).sum()
}

/// The data a step reads and the per-step results it writes.
pub struct StepData<'a> {
    /// Every sample's pixels, row after row.
    pub images: &'a DeviceBuffer<f32>,
    /// Every sample's class.
    pub labels: &'a DeviceBuffer<u32>,
    /// The epoch's order of samples: batch `b` is `perm[b·batch..][..batch]`.
    pub perm: &'a DeviceBuffer<u32>,
    /// Each step's mean loss, at the step's slot.
    pub losses: &'a mut DeviceBuffer<f32>,
    /// Each step's correct predictions, at the step's slot.
    pub correct: &'a mut DeviceBuffer<u32>,
}

/// One training step of `model` on batch `state[0]` of `data`, as one cooperative launch;
/// `mixed` rounds the products' operands to bf16. On a GPU a warp shares the gradients' inputs
/// by shuffles; on the CPU backend each lane loads them (a shuffle there switches all 32
/// lanes' coroutines, which made the step five times slower).
pub fn train_step(
    stream: &Stream,
    model: &mut PackedModel,
    data: StepData<'_>,
    state: &mut StepState,
    optimizer: StepOptimizer,
    mixed: bool,
) -> Result<()> {
    let shuffle = stream.gpu().backend() == gpu_dsl_runtime::Backend::Cuda;
    step(stream, model, data, state, optimizer, mixed, shuffle)
}

/// [`train_step`] sharing the gradients' inputs by warp shuffles on any backend, so tests
/// cover the GPU's path on the CPU backend too (where it is slower); not part of the API.
#[doc(hidden)]
pub fn __train_step_shuffled(
    stream: &Stream,
    model: &mut PackedModel,
    data: StepData<'_>,
    state: &mut StepState,
    optimizer: StepOptimizer,
    mixed: bool,
) -> Result<()> {
    step(stream, model, data, state, optimizer, mixed, true)
}

/// [`train_step`] with the choice of sharing the gradients' inputs by shuffles.
fn step(
    stream: &Stream,
    model: &mut PackedModel,
    data: StepData<'_>,
    state: &mut StepState,
    optimizer: StepOptimizer,
    mixed: bool,
    shuffle: bool,
) -> Result<()> {
    let pixels = model.sizes[0];
    if data.perm.len() < model.batch {
        return Err(Error::LengthMismatch {
            what: "mlp_step: perm (at least one batch)",
            expected: model.batch,
            found: data.perm.len(),
        });
    }
    if data.images.len() != data.labels.len() * pixels {
        return Err(Error::LengthMismatch {
            what: "mlp_step: images (labels × inputs)",
            expected: data.labels.len() * pixels,
            found: data.images.len(),
        });
    }
    let (hyper, kind) = match optimizer {
        StepOptimizer::Adam(a) => ([a.lr, a.beta1, a.beta2, a.eps, 0.0], 0),
        StepOptimizer::Sgd { lr, momentum } => ([lr, 0.0, 0.0, 0.0, momentum], 1),
    };
    let [lr, beta1, beta2, eps, momentum] = hyper;
    let config = LaunchConfig::new(Grid::x(model.blocks), Block::x(THREADS));
    let m = model;
    let launch = if mixed {
        mlp_train_step::launch::<1>
    } else {
        mlp_train_step::launch::<0>
    };
    launch(
        stream,
        config,
        &m.dims,
        data.images,
        data.labels,
        data.perm,
        &mut state.counters,
        &mut m.params,
        &mut m.params16,
        &mut m.grads,
        &mut m.moment1,
        &mut m.moment2,
        &mut m.acts,
        &mut m.deltas,
        &mut m.rows,
        data.losses,
        data.correct,
        lr,
        beta1,
        beta2,
        eps,
        momentum,
        kind,
        u32::from(shuffle),
    )
}
