//! Training and evaluation on the project's own kernels: GEMMs from `gpu_dsl::kernels::gemm`, the
//! rest of the step from `gpu_dsl::kernels::mlp`.
//!
//! The whole training set and the parameters live on the device. Each epoch uploads a shuffled
//! permutation of the sample indices, and each step gathers its batch through it on the device.
//! On a CUDA device the step (gather, forward, loss, backward, update: one launch list) is
//! captured once as a CUDA graph and replayed, so a step costs one launch from the host.

use std::cell::RefCell;
use std::time::Instant;

use gpu_dsl::kernels::gemm::{gemm_with_scratch as gemm, Gemm, GemmScratch};
use gpu_dsl::kernels::mlp::{self, StepState};
use gpu_dsl::kernels::mlp_step;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::random::philox4x32_10;
use gpu_dsl::runtime::{Backend, Graph, ProfileReport, Profiler};

mod fused;
pub mod parallel;
mod step;

/// The optimizer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Optimizer {
    /// Adam with PyTorch's default betas and epsilon.
    Adam,
    /// SGD with momentum.
    Sgd {
        /// The momentum factor.
        momentum: f32,
    },
}

/// Precision of the matrix products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 everywhere.
    F32,
    /// bf16 matrix products on tensor cores, f32 master weights and everything else.
    Bf16,
}

/// What to train and how.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Hidden layer widths, input side first.
    pub hidden: Vec<usize>,
    /// Samples per step.
    pub batch: usize,
    /// Passes over the training set.
    pub epochs: usize,
    /// Learning rate.
    pub lr: f32,
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Seeds initialization and shuffling.
    pub seed: u64,
    /// Precision of the matrix products.
    pub precision: Precision,
    /// The step as one cooperative launch (`gpu_dsl::kernels::mlp_step`) rather than a launch per
    /// kernel of `gpu_dsl::kernels::mlp` and `gemm`, where the model is small enough for that to
    /// win (see [`runs_fused`]).
    pub fused: bool,
    /// Profile some steps of the first epoch ([`profiled_steps`]), run without the graph so
    /// each launch is seen, into [`EpochStats::profile`].
    pub profile: bool,
}

/// Images as f32 in [0,1] (row-major n × pixels) and labels 0..classes.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// `len × pixels` values.
    pub images: Vec<f32>,
    /// `len` labels.
    pub labels: Vec<u8>,
    /// Samples.
    pub len: usize,
    /// Values per sample.
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
    /// `inputs × outputs`, row-major.
    pub weights: Vec<f32>,
    /// `outputs`.
    pub bias: Vec<f32>,
}

/// A trained multilayer perceptron: ReLU after every layer but the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Input side first.
    pub layers: Vec<Layer>,
}

/// What one epoch did.
#[derive(Clone, Debug)]
pub struct EpochStats {
    /// 1-based.
    pub epoch: usize,
    /// Mean loss over the epoch's steps.
    pub train_loss: f32,
    /// Fraction of the epoch's samples predicted right while training.
    pub train_accuracy: f32,
    /// Mean loss on the test set after the epoch.
    pub test_loss: f32,
    /// Fraction of the test set predicted right after the epoch.
    pub test_accuracy: f32,
    /// Training time of the epoch (evaluation excluded).
    pub seconds: f64,
    /// Training samples per second.
    pub samples_per_second: f64,
    /// Mean time of one training step.
    pub step_ms: f64,
    /// The profile of the epoch's profiled steps, if it had any.
    pub profile: Option<ProfileReport>,
    /// Epoch 1 only: seconds from the start of training to the end of its first step, which
    /// compiles (or loads ahead-of-time images of) every kernel of a step: the first-launch
    /// cost that `--features aot` removes.
    pub first_step_seconds: Option<f64>,
}

/// Loss, accuracy and confusion matrix on a data set.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Mean cross-entropy.
    pub loss: f32,
    /// Fraction predicted right.
    pub accuracy: f32,
    /// `classes × classes`, `[true][predicted]`.
    pub confusion: Vec<Vec<u32>>,
}

/// Progress within an epoch, for the progress bar.
#[derive(Clone, Debug)]
pub struct Progress {
    /// 1-based epoch.
    pub epoch: usize,
    /// Steps done in this epoch.
    pub step: usize,
    /// Steps in an epoch.
    pub steps: usize,
    /// Mean loss of this epoch's steps so far.
    pub loss: f32,
    /// Training samples per second so far in this epoch.
    pub samples_per_second: f64,
}

/// The steps of the first epoch `--profile` records: steps 10..20, or the first ten of a
/// shorter epoch, past the first steps' page faults and cold caches where the epoch allows.
pub fn profiled_steps(steps: usize) -> std::ops::Range<usize> {
    if steps >= 20 {
        10..20
    } else {
        0..steps.min(10)
    }
}

/// Steps between two progress reports (each one reads the losses back, a synchronization).
const PROGRESS_EVERY: usize = 100;

/// A deterministic stream of uniform numbers: Philox4x32-10 keyed by the seed.
struct Random {
    key: [u32; 2],
    counter: u64,
    words: [u32; 4],
    used: usize,
}

impl Random {
    fn new(seed: u64, stream: u32) -> Self {
        Random {
            key: [
                seed as u32,
                (seed >> 32) as u32 ^ stream.wrapping_mul(0x9E37_79B9),
            ],
            counter: 0,
            words: [0; 4],
            used: 4,
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            let c = self.counter;
            self.words = philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], self.key);
            self.counter += 1;
            self.used = 0;
        }
        self.used += 1;
        self.words[self.used - 1]
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in 0..n, without modulo bias worth worrying about for n ≪ 2^32.
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u32() as u64 * n as u64) >> 32) as usize
    }
}

/// PyTorch's `nn.Linear` initialization: weights and biases uniform in ±1/√inputs.
fn init_model(sizes: &[usize], seed: u64) -> Model {
    let mut random = Random::new(seed, 1);
    let layers = sizes
        .windows(2)
        .map(|pair| {
            let (inputs, outputs) = (pair[0], pair[1]);
            let bound = 1.0 / (inputs as f32).sqrt();
            let mut draw = |n: usize| -> Vec<f32> {
                (0..n)
                    .map(|_| (random.uniform() * 2.0 - 1.0) * bound)
                    .collect()
            };
            let weights = draw(inputs * outputs);
            let bias = draw(outputs);
            Layer {
                inputs,
                outputs,
                weights,
                bias,
            }
        })
        .collect();
    Model { layers }
}

/// A layer's parameters, gradients and optimizer state on the device.
struct DeviceLayer {
    inputs: usize,
    outputs: usize,
    weights: DeviceBuffer<f32>,
    bias: DeviceBuffer<f32>,
    grad_weights: DeviceBuffer<f32>,
    grad_bias: DeviceBuffer<f32>,
    /// Adam's first moments or SGD's velocities, for weights and bias.
    moment1: (DeviceBuffer<f32>, DeviceBuffer<f32>),
    /// Adam's second moments (unused by SGD).
    moment2: (DeviceBuffer<f32>, DeviceBuffer<f32>),
    /// The weights rounded to bf16 for the tensor cores, in mixed precision.
    weights_bf16: Option<DeviceBuffer<bf16>>,
}

impl DeviceLayer {
    fn upload(
        stream: &Stream,
        layer: &Layer,
        precision: Precision,
    ) -> Result<Self, gpu_dsl::Error> {
        let zeros = |n| DeviceBuffer::<f32>::zeroed(stream, n);
        let (w, b) = (layer.weights.len(), layer.bias.len());
        let weights_bf16 = match precision {
            Precision::F32 => None,
            Precision::Bf16 => {
                let rounded: Vec<bf16> = layer.weights.iter().map(|&v| bf16::from_f32(v)).collect();
                Some(DeviceBuffer::from_host(stream, &rounded)?)
            }
        };
        Ok(DeviceLayer {
            weights_bf16,
            inputs: layer.inputs,
            outputs: layer.outputs,
            weights: DeviceBuffer::from_host(stream, &layer.weights)?,
            bias: DeviceBuffer::from_host(stream, &layer.bias)?,
            grad_weights: zeros(w)?,
            grad_bias: zeros(b)?,
            moment1: (zeros(w)?, zeros(b)?),
            moment2: (zeros(w)?, zeros(b)?),
        })
    }

    /// Back to `layer`'s parameters with a fresh optimizer state.
    fn reset(&mut self, stream: &Stream, layer: &Layer) -> Result<(), gpu_dsl::Error> {
        self.weights.copy_from_host(stream, &layer.weights)?;
        self.bias.copy_from_host(stream, &layer.bias)?;
        let (w, b) = (vec![0.0; layer.weights.len()], vec![0.0; layer.bias.len()]);
        for (weights, bias) in [&mut self.moment1, &mut self.moment2] {
            weights.copy_from_host(stream, &w)?;
            bias.copy_from_host(stream, &b)?;
        }
        if let Some(rounded) = &mut self.weights_bf16 {
            let host: Vec<bf16> = layer.weights.iter().map(|&v| bf16::from_f32(v)).collect();
            rounded.copy_from_host(stream, &host)?;
        }
        Ok(())
    }

    fn download(&self, stream: &Stream) -> Result<Layer, gpu_dsl::Error> {
        Ok(Layer {
            inputs: self.inputs,
            outputs: self.outputs,
            weights: self.weights.to_host(stream)?,
            bias: self.bias.to_host(stream)?,
        })
    }
}

/// Activations of a forward pass over `rows` samples: layer l's output (logits for the last).
struct Activations {
    outputs: Vec<DeviceBuffer<f32>>,
}

impl Activations {
    fn new(stream: &Stream, layers: &[DeviceLayer], rows: usize) -> Result<Self, gpu_dsl::Error> {
        let outputs = layers
            .iter()
            .map(|layer| DeviceBuffer::zeroed(stream, rows * layer.outputs))
            .collect::<Result<_, _>>()?;
        Ok(Activations { outputs })
    }
}

/// Forward through every layer; the last layer's output is left without its bias (the loss
/// kernels add it).
fn forward(
    stream: &Stream,
    layers: &[DeviceLayer],
    input: &DeviceBuffer<f32>,
    rows: usize,
    acts: &mut Activations,
    scratch: &mut [GemmScratch],
) -> Result<(), gpu_dsl::Error> {
    for (l, layer) in layers.iter().enumerate() {
        let (before, rest) = acts.outputs.split_at_mut(l);
        let x = if l == 0 { input } else { &before[l - 1] };
        let z = &mut rest[0];
        let spec = Gemm::new(rows, layer.outputs, layer.inputs);
        gemm(stream, &spec, x, &layer.weights, z, &mut scratch[l])?;
        if l + 1 < layers.len() {
            mlp::bias_relu(stream, z, &layer.bias)?;
        }
    }
    Ok(())
}

/// The bf16 copies a mixed-precision step multiplies.
struct MixedBuffers {
    batch_x: DeviceBuffer<bf16>,
    hidden: Vec<DeviceBuffer<bf16>>,
    grads: Vec<DeviceBuffer<bf16>>,
}

/// The bf16 weights of a mixed-precision layer.
fn rounded_weights(layer: &DeviceLayer) -> Result<&DeviceBuffer<bf16>, gpu_dsl::Error> {
    layer.weights_bf16.as_ref().ok_or_else(|| {
        gpu_dsl::Error::InvalidLaunch("a mixed-precision step needs bf16 weights".into())
    })
}

/// [`forward`] with bf16 matrix products: the batch and hidden outputs are rounded to bf16
/// (kept in `mixed`) for the next product; everything else stays f32.
fn forward_bf16(
    stream: &Stream,
    layers: &[DeviceLayer],
    input: &DeviceBuffer<f32>,
    mixed: &mut MixedBuffers,
    acts: &mut Activations,
    scratch: &mut [GemmScratch],
) -> Result<(), gpu_dsl::Error> {
    mlp::to_bf16(stream, input, &mut mixed.batch_x)?;
    let rows = mixed.batch_x.len() / layers[0].inputs;
    for (l, layer) in layers.iter().enumerate() {
        let hidden_count = mixed.hidden.len();
        let (before, rest) = mixed.hidden.split_at_mut(l.min(hidden_count));
        let x = if l == 0 {
            &mixed.batch_x
        } else {
            &before[l - 1]
        };
        let z = &mut acts.outputs[l];
        let spec = Gemm::new(rows, layer.outputs, layer.inputs);
        gemm(
            stream,
            &spec,
            x,
            rounded_weights(layer)?,
            z,
            &mut scratch[l],
        )?;
        if l + 1 < layers.len() {
            mlp::bias_relu_bf16(stream, z, &layer.bias, &mut rest[0])?;
        }
    }
    Ok(())
}

/// Everything one training step touches on the device.
struct Trainer {
    layers: Vec<DeviceLayer>,
    images: DeviceBuffer<f32>,
    labels: DeviceBuffer<u32>,
    perm: DeviceBuffer<u32>,
    state: StepState,
    batch_x: DeviceBuffer<f32>,
    batch_y: DeviceBuffer<u32>,
    acts: Activations,
    /// Per hidden layer: the gradient reaching its output, and through its ReLU.
    grad_out: Vec<DeviceBuffer<f32>>,
    grad_pre: Vec<DeviceBuffer<f32>>,
    losses: DeviceBuffer<f32>,
    correct: DeviceBuffer<u32>,
    /// Split-k memory of each product in the step (forward, weight gradient, input gradient,
    /// per layer), sized by the warm-up step so that the captured graph's pointers stay valid.
    scratch: Vec<GemmScratch>,
    /// Mixed precision only: the batch, each hidden layer's output and each layer's output
    /// gradient, rounded to bf16 as the tensor cores' inputs.
    mixed: Option<MixedBuffers>,
    batch: usize,
    optimizer: Optimizer,
    adam: mlp::Adam,
    /// The packed model, when the step is one cooperative launch.
    fused: Option<fused::Fused>,
}

impl Trainer {
    /// One step: gather, forward, loss, backward, update, advance the step state.
    fn step(&mut self, stream: &Stream) -> Result<(), gpu_dsl::Error> {
        if let Some(fused) = &mut self.fused {
            let (images, labels, perm) = (&self.images, &self.labels, &self.perm);
            let (losses, correct) = (&mut self.losses, &mut self.correct);
            return fused.step(
                stream,
                images,
                labels,
                perm,
                &mut self.state,
                losses,
                correct,
            );
        }
        self.forward_loss(stream)?;
        for l in (0..self.layers.len()).rev() {
            self.weight_gradient(stream, l)?;
            self.input_gradient(stream, l)?;
        }
        self.update(stream)
    }
}

impl Trainer {
    /// Device buffers for training `model` on `train` with `config`'s batch and optimizer.
    fn new(
        stream: &Stream,
        config: &TrainConfig,
        train: &Dataset,
        model: &Model,
    ) -> gpu_dsl::Result<Trainer> {
        let batch = config.batch;
        let steps = train.len / batch.max(1);
        let layers = model
            .layers
            .iter()
            .map(|layer| DeviceLayer::upload(stream, layer, config.precision))
            .collect::<Result<Vec<_>, _>>()?;
        let (images, labels) = upload_dataset(stream, train)?;
        let mixed = match config.precision {
            Precision::F32 => None,
            Precision::Bf16 => {
                let zeros = |n| DeviceBuffer::<bf16>::zeroed(stream, n);
                Some(MixedBuffers {
                    batch_x: zeros(batch * train.pixels)?,
                    hidden: layers[..layers.len() - 1]
                        .iter()
                        .map(|layer| zeros(batch * layer.outputs))
                        .collect::<Result<_, _>>()?,
                    grads: layers
                        .iter()
                        .map(|layer| zeros(batch * layer.outputs))
                        .collect::<Result<_, _>>()?,
                })
            }
        };
        let hidden_grads = |stream: &Stream| -> gpu_dsl::Result<Vec<DeviceBuffer<f32>>> {
            layers[..layers.len() - 1]
                .iter()
                .map(|layer| DeviceBuffer::zeroed(stream, batch * layer.outputs))
                .collect()
        };
        Ok(Trainer {
            acts: Activations::new(stream, &layers, batch)?,
            grad_out: hidden_grads(stream)?,
            grad_pre: hidden_grads(stream)?,
            layers,
            images,
            labels,
            perm: DeviceBuffer::zeroed(stream, train.len)?,
            state: StepState::new(stream)?,
            batch_x: DeviceBuffer::zeroed(stream, batch * train.pixels)?,
            batch_y: DeviceBuffer::zeroed(stream, batch)?,
            losses: DeviceBuffer::zeroed(stream, steps)?,
            correct: DeviceBuffer::zeroed(stream, steps)?,
            scratch: (0..3 * model.layers.len())
                .map(|_| GemmScratch::new())
                .collect(),
            mixed,
            batch,
            optimizer: config.optimizer,
            adam: mlp::Adam::new(config.lr),
            fused: if runs_fused(config, train) {
                Some(fused::Fused::new(stream, config, model)?)
            } else {
                None
            },
        })
    }
}

impl Trainer {
    /// Brings the per-layer parameter buffers up to date with the packed model, when the step
    /// is fused (the evaluation and the returned model read them).
    fn sync_layers(&mut self, stream: &Stream) -> gpu_dsl::Result<()> {
        match &self.fused {
            Some(fused) => fused.copy_to(stream, &mut self.layers),
            None => Ok(()),
        }
    }
}

/// Parameters up to which the fused step is the faster one. It multiplies on the CUDA cores, a
/// dot product per output: on an H100 it took 0.035 ms a step for 784-128-10 (101,770
/// parameters) against 0.059 ms for the launch-per-kernel step, but a variant of it took
/// 0.166 ms against 0.112 ms for 784-512-256-10 (535,818), where the GEMM kernels' tiles pay
/// off.
const FUSED_MAX_PARAMS: usize = 1 << 18;

/// Whether training with `config` on `data` steps as one cooperative launch.
pub fn runs_fused(config: &TrainConfig, data: &Dataset) -> bool {
    config.fused && mlp_step::packed_len(&layer_sizes(config, data)) <= FUSED_MAX_PARAMS
}

/// Layer sizes from the data and the hidden widths.
fn layer_sizes(config: &TrainConfig, data: &Dataset) -> Vec<usize> {
    let mut sizes = vec![data.pixels];
    sizes.extend(&config.hidden);
    sizes.push(data.classes);
    sizes
}

fn upload_dataset(
    stream: &Stream,
    data: &Dataset,
) -> Result<(DeviceBuffer<f32>, DeviceBuffer<u32>), gpu_dsl::Error> {
    let labels: Vec<u32> = data.labels.iter().map(|&l| l as u32).collect();
    Ok((
        DeviceBuffer::from_host(stream, &data.images)?,
        DeviceBuffer::from_host(stream, &labels)?,
    ))
}

/// Trains a model; `on_progress` hears about steps, `on_epoch` about finished epochs.
///
/// An epoch is `train.len / batch` full batches (a last partial batch is left out, so every
/// step has the same shape and can be replayed as one graph).
pub fn train(
    gpu: &Gpu,
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> gpu_dsl::Result<Model> {
    let started = Instant::now();
    let batch = config.batch;
    let steps = train.len / batch.max(1);
    if batch == 0 || steps == 0 {
        return Err(gpu_dsl::Error::InvalidLaunch(format!(
            "a batch of {batch} does not fit the {} training samples",
            train.len
        )));
    }
    // A stream of its own: CUDA cannot capture the legacy default stream into a graph.
    let stream = match gpu.backend() {
        Backend::Cuda => gpu.new_stream()?,
        Backend::Cpu => gpu.default_stream(),
    };
    let model = init_model(&layer_sizes(config, train), config.seed);
    let trainer = RefCell::new(Trainer::new(&stream, config, train, &model)?);
    let test_set = upload_dataset(&stream, test)?;
    let mut shuffle = Random::new(config.seed, 2);
    let mut order: Vec<u32> = (0..train.len as u32).collect();
    // A warm-up step compiles every kernel (and, on CUDA, the step is captured as a graph); its
    // effect is undone, so timings leave compilation out and training starts from `model`.
    {
        let mut warm = trainer.borrow_mut();
        warm.perm
            .copy_from_host(&stream, &(0..train.len as u32).collect::<Vec<_>>())?;
        warm.step(&stream)?;
    }
    stream.synchronize()?;
    let mut first_step_seconds = Some(started.elapsed().as_secs_f64());
    let graph: Option<Graph> = match gpu.backend() {
        Backend::Cuda => {
            let trainer = &trainer;
            Some(stream.capture(move |s| trainer.borrow_mut().step(s))?)
        }
        Backend::Cpu => None,
    };
    {
        let mut reset = trainer.borrow_mut();
        for (device, host) in reset.layers.iter_mut().zip(&model.layers) {
            device.reset(&stream, host)?;
        }
        if let Some(fused) = &mut reset.fused {
            fused.reset(&stream, &model)?;
        }
    }
    let mut optimizer_steps = 0u32;
    for epoch in 1..=config.epochs {
        // Fisher–Yates on the host: 60 000 indices, once per epoch.
        for i in (1..order.len()).rev() {
            order.swap(i, shuffle.below(i + 1));
        }
        {
            let mut trainer = trainer.borrow_mut();
            trainer.perm.copy_from_host(&stream, &order)?;
            trainer.state.set(&stream, 0, optimizer_steps)?;
        }
        stream.synchronize()?;
        let start = Instant::now();
        let window = match config.profile && epoch == 1 {
            true => profiled_steps(steps),
            false => 0..0,
        };
        let (mut profiler, mut profile) = (None, None);
        for step in 0..steps {
            if step == window.start && !window.is_empty() {
                stream.synchronize()?;
                profiler = Some(Profiler::start()?);
            }
            // The graph borrows the RefCell, so the losses stay readable between replays. A
            // replay is one launch to the profiler, so profiled steps launch each kernel.
            match (&graph, profiler.is_some()) {
                (Some(graph), false) => graph.launch()?,
                _ => trainer.borrow_mut().step(&stream)?,
            }
            if step + 1 == window.end {
                if let Some(profiler) = profiler.take() {
                    stream.synchronize()?;
                    profile = Some(profiler.finish()?);
                }
            }
            let done = step + 1;
            if done % PROGRESS_EVERY == 0 || done == steps {
                let losses = trainer.borrow().losses.to_host(&stream)?;
                let loss = losses[..done].iter().sum::<f32>() / done as f32;
                on_progress(&Progress {
                    epoch,
                    step: done,
                    steps,
                    loss,
                    samples_per_second: (done * batch) as f64 / start.elapsed().as_secs_f64(),
                });
            }
        }
        stream.synchronize()?;
        let seconds = start.elapsed().as_secs_f64();
        optimizer_steps += steps as u32;
        let mut trainer = trainer.borrow_mut();
        trainer.sync_layers(&stream)?;
        let losses = trainer.losses.to_host(&stream)?;
        let correct = trainer.correct.to_host(&stream)?;
        let evaluation = evaluate_on(&stream, &trainer.layers, test, &test_set)?;
        on_epoch(&EpochStats {
            epoch,
            train_loss: losses.iter().sum::<f32>() / steps as f32,
            train_accuracy: correct.iter().map(|&c| c as f64).sum::<f64>() as f32
                / (steps * batch) as f32,
            test_loss: evaluation.loss,
            test_accuracy: evaluation.accuracy,
            seconds,
            samples_per_second: (steps * batch) as f64 / seconds,
            step_ms: seconds * 1e3 / steps as f64,
            profile,
            first_step_seconds: first_step_seconds.take(),
        });
    }
    drop(graph);
    let mut trainer = trainer.into_inner();
    trainer.sync_layers(&stream)?;
    let layers = trainer
        .layers
        .iter()
        .map(|layer| layer.download(&stream))
        .collect::<Result<_, _>>()?;
    Ok(Model { layers })
}

/// Loss, accuracy and confusion matrix of the device-resident model on `data`.
fn evaluate_on(
    stream: &Stream,
    layers: &[DeviceLayer],
    data: &Dataset,
    (images, labels): &(DeviceBuffer<f32>, DeviceBuffer<u32>),
) -> gpu_dsl::Result<Evaluation> {
    let rows = data.len;
    let mut acts = Activations::new(stream, layers, rows)?;
    let mut scratch: Vec<GemmScratch> = layers.iter().map(|_| GemmScratch::new()).collect();
    forward(stream, layers, images, rows, &mut acts, &mut scratch)?;
    let mut losses = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let mut predicted = DeviceBuffer::<u32>::zeroed(stream, rows)?;
    let last = layers.len() - 1;
    mlp::classify_rows(
        stream,
        &acts.outputs[last],
        &layers[last].bias,
        labels,
        &mut losses,
        &mut predicted,
    )?;
    let losses = losses.to_host(stream)?;
    let predicted = predicted.to_host(stream)?;
    let mut confusion = vec![vec![0u32; data.classes]; data.classes];
    let mut right = 0usize;
    for (&truth, &guess) in data.labels.iter().zip(&predicted) {
        confusion[truth as usize][guess as usize] += 1;
        right += usize::from(truth as u32 == guess);
    }
    Ok(Evaluation {
        loss: losses.iter().map(|&l| l as f64).sum::<f64>() as f32 / rows.max(1) as f32,
        accuracy: right as f32 / rows.max(1) as f32,
        confusion,
    })
}

/// Loss, accuracy and confusion matrix of `model` on `data`.
pub fn evaluate(gpu: &Gpu, model: &Model, data: &Dataset) -> gpu_dsl::Result<Evaluation> {
    let stream = gpu.default_stream();
    let layers = model
        .layers
        .iter()
        .map(|layer| DeviceLayer::upload(&stream, layer, Precision::F32))
        .collect::<Result<Vec<_>, _>>()?;
    let uploaded = upload_dataset(&stream, data)?;
    evaluate_on(&stream, &layers, data, &uploaded)
}

#[cfg(test)]
mod tests;
