//! The core of the `mixed_precision` example: a data set (synthetic, or Fashion-MNIST's IDX
//! files), an MLP trained for a number of fused steps (`gpu_dsl::kernels::mlp_step`) in f32 or
//! with bf16 operands, timed and with its peak memory, and the trained weights evaluated.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gpu_dsl::kernels::mlp::{Adam, StepState};
use gpu_dsl::kernels::mlp_step::{packed_len, train_step, PackedModel, StepData, StepOptimizer};
use gpu_dsl::prelude::*;

/// What can go wrong: the device's errors, and unreadable or malformed data files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A device, allocation or launch error.
    #[error(transparent)]
    Gpu(#[from] gpu_dsl::Error),
    /// A data file that could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A data file that is not what an IDX file of its kind holds.
    #[error("{path}: {why}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Settings training cannot use.
    #[error("{0}")]
    Usage(String),
}

/// The example's results.
pub type Result<T> = std::result::Result<T, Error>;

/// Samples of `pixels` values in [0, 1] with a class each.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// `len × pixels` values, sample after sample.
    pub images: Vec<f32>,
    /// One class per sample, below `classes`.
    pub labels: Vec<u32>,
    /// Values per sample.
    pub pixels: usize,
    /// Number of classes.
    pub classes: usize,
}

impl Dataset {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// The first `len - test` samples and the last `test` (all of them if fewer), as a
    /// training and a test set.
    pub fn split(mut self, test: usize) -> (Dataset, Dataset) {
        let keep = self.len().saturating_sub(test);
        let test = Dataset {
            images: self.images.split_off(keep * self.pixels),
            labels: self.labels.split_off(keep),
            pixels: self.pixels,
            classes: self.classes,
        };
        (self, test)
    }
}

/// SplitMix64: a few lines of deterministic randomness for data, initialization and shuffling,
/// where the quality of a cryptographic or counter-based generator buys nothing.
pub struct Random(u64);

impl Random {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Random(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// How much of a synthetic sample is its class's prototype; the rest is noise.
const SIGNAL: f32 = 0.15;

/// `len` samples of `pixels` values from `classes` classes: each class a random prototype
/// image, each sample mostly noise with a little of its class's prototype ([`SIGNAL`]), so a
/// model has something to learn and does not learn it all in a hundred steps.
pub fn synthetic(len: usize, pixels: usize, classes: usize, seed: u64) -> Dataset {
    let mut random = Random::new(seed);
    let prototypes: Vec<f32> = (0..classes * pixels).map(|_| random.uniform()).collect();
    let mut images = Vec::with_capacity(len * pixels);
    let mut labels = Vec::with_capacity(len);
    for _ in 0..len {
        let class = random.below(classes);
        labels.push(class as u32);
        let prototype = &prototypes[class * pixels..][..pixels];
        images.extend(
            prototype
                .iter()
                .map(|&p| SIGNAL * p + (1.0 - SIGNAL) * random.uniform()),
        );
    }
    Dataset {
        images,
        labels,
        pixels,
        classes,
    }
}

/// The training and test sets of Fashion-MNIST (or MNIST) in `dir`: the four IDX files under
/// their usual names, raw or gzipped (`.gz`).
pub fn load_idx_dir(dir: &Path) -> Result<(Dataset, Dataset)> {
    let split = |images: &str, labels: &str| -> Result<Dataset> {
        let (pixels, images) = read_idx(dir, images, 3)?;
        let (_, labels) = read_idx(dir, labels, 1)?;
        let images: Vec<f32> = images.iter().map(|&b| f32::from(b) / 255.0).collect();
        let labels: Vec<u32> = labels.iter().map(|&b| u32::from(b)).collect();
        if images.len() != labels.len() * pixels {
            return Err(Error::Format {
                path: dir.to_path_buf(),
                why: format!(
                    "{} images of {pixels} pixels but {} labels",
                    images.len() / pixels.max(1),
                    labels.len()
                ),
            });
        }
        let classes = labels.iter().max().map_or(0, |&l| l as usize + 1);
        Ok(Dataset {
            images,
            labels,
            pixels,
            classes,
        })
    };
    let train = split("train-images-idx3-ubyte", "train-labels-idx1-ubyte")?;
    let mut test = split("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")?;
    if test.classes > train.classes {
        return Err(Error::Format {
            path: dir.to_path_buf(),
            why: format!(
                "the test labels go up to {} but the training labels only to {}",
                test.classes - 1,
                train.classes.saturating_sub(1)
            ),
        });
    }
    test.classes = train.classes;
    Ok((train, test))
}

/// The bytes of IDX file `name` (or `name.gz`) in `dir` with `dims` dimensions, and the
/// product of every dimension after the first.
fn read_idx(dir: &Path, name: &str, dims: u8) -> Result<(usize, Vec<u8>)> {
    let plain = dir.join(name);
    let path = match plain.exists() {
        true => plain,
        false => dir.join(format!("{name}.gz")),
    };
    let io = |source| Error::Io {
        path: path.clone(),
        source,
    };
    let raw = std::fs::read(&path).map_err(io)?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(io)?;
        out
    } else {
        raw
    };
    let bad = |why: String| Error::Format {
        path: path.clone(),
        why,
    };
    let header = 4 + 4 * usize::from(dims);
    if bytes.len() < header || bytes[..3] != [0, 0, 8] || bytes[3] != dims {
        return Err(bad(format!(
            "not an IDX file of unsigned bytes with {dims} dimension(s)"
        )));
    }
    let sizes: Vec<usize> = bytes[4..header]
        .chunks(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let per_item: usize = sizes[1..].iter().product();
    let expected = sizes[0] * per_item;
    if bytes.len() - header != expected {
        return Err(bad(format!(
            "the header promises {expected} bytes of data, the file has {}",
            bytes.len() - header
        )));
    }
    Ok((per_item, bytes[header..].to_vec()))
}

/// Precision of the step's products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 operands.
    F32,
    /// Operands rounded to bf16, f32 accumulation and f32 master weights.
    Bf16,
}

impl Precision {
    /// The name printed in the table.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
        }
    }
}

/// What to train.
#[derive(Clone, Debug)]
pub struct Config {
    /// Hidden layer widths, input side first.
    pub hidden: Vec<usize>,
    /// Samples per step.
    pub batch: usize,
    /// Training steps.
    pub steps: usize,
    /// Adam's learning rate.
    pub lr: f32,
    /// Seeds the initialization and the order of samples.
    pub seed: u64,
}

/// What one training run measured.
#[derive(Clone, Debug)]
pub struct Run {
    /// The precision of its products.
    pub precision: Precision,
    /// Steps trained.
    pub steps: usize,
    /// Wall time of the steps, compilation left out.
    pub seconds: f64,
    /// The most device memory the run held at once beyond what was allocated before it (the
    /// model, its gradients, optimizer moments and step buffers; the data set was uploaded
    /// before).
    pub peak_bytes: usize,
    /// Every step's mean loss, in order.
    pub losses: Vec<f32>,
    /// Fraction of the last steps' samples predicted right while training (see
    /// [`Run::window`]).
    pub train_accuracy: f32,
    /// Mean loss of the trained weights on the test set, evaluated in f32.
    pub test_loss: f32,
    /// Fraction of the test set the trained weights predict right.
    pub test_accuracy: f32,
}

impl Run {
    /// Steps the first and final losses average over: a tenth of the run, at least one.
    pub fn window(&self) -> usize {
        (self.losses.len() / 10).max(1)
    }

    /// Mean loss of the first steps.
    pub fn first_loss(&self) -> f32 {
        mean(&self.losses[..self.window().min(self.losses.len())])
    }

    /// Mean loss of the last steps.
    pub fn final_loss(&self) -> f32 {
        mean(&self.losses[self.losses.len().saturating_sub(self.window())..])
    }

    /// Mean time of a step in milliseconds.
    pub fn step_ms(&self) -> f64 {
        self.seconds * 1e3 / self.steps.max(1) as f64
    }
}

fn mean(values: &[f32]) -> f32 {
    values.iter().sum::<f32>() / values.len().max(1) as f32
}

/// Layer sizes: the data's inputs, the hidden widths, the classes.
pub fn layer_sizes(config: &Config, data: &Dataset) -> Vec<usize> {
    let mut sizes = vec![data.pixels];
    sizes.extend(&config.hidden);
    sizes.push(data.classes);
    sizes
}

/// PyTorch's `nn.Linear` initialization, packed as `mlp_step` wants it: each layer's weights
/// (inputs × outputs) then its bias, uniform in ±1/√inputs.
pub fn init_params(sizes: &[usize], seed: u64) -> Vec<f32> {
    let mut random = Random::new(seed);
    let mut params = Vec::with_capacity(packed_len(sizes));
    for pair in sizes.windows(2) {
        let bound = 1.0 / (pair[0] as f32).sqrt();
        let count = pair[0] * pair[1] + pair[1];
        params.extend((0..count).map(|_| (random.uniform() * 2.0 - 1.0) * bound));
    }
    params
}

/// The order of samples for `steps` batches of `batch`: shuffled passes over `len` samples,
/// one after another, so every step has a whole batch and no sample repeats within a pass.
fn sample_order(len: usize, batch: usize, steps: usize, seed: u64) -> Vec<u32> {
    let mut random = Random::new(seed ^ 0x5EED);
    let mut order = Vec::with_capacity(steps * batch);
    let mut pass: Vec<u32> = (0..len as u32).collect();
    while order.len() < steps * batch {
        for i in (1..pass.len()).rev() {
            pass.swap(i, random.below(i + 1));
        }
        order.extend_from_slice(&pass);
    }
    order.truncate(steps * batch);
    order
}

/// The training set, uploaded once and shared by the runs.
pub struct DeviceData {
    images: DeviceBuffer<f32>,
    labels: DeviceBuffer<u32>,
    len: usize,
}

impl DeviceData {
    /// `data` on `stream`'s device.
    pub fn upload(stream: &Stream, data: &Dataset) -> Result<Self> {
        Ok(DeviceData {
            images: DeviceBuffer::from_host(stream, &data.images)?,
            labels: DeviceBuffer::from_host(stream, &data.labels)?,
            len: data.len(),
        })
    }
}

/// Trains a model of `sizes` from `init` for `config.steps` fused steps on `train` in
/// `precision`, and evaluates the result on `test`. One step first compiles the kernel (its
/// effect undone), so the timing leaves compilation out.
pub fn train(
    stream: &Stream,
    config: &Config,
    sizes: &[usize],
    init: &[f32],
    train: &DeviceData,
    test: &Dataset,
    precision: Precision,
) -> Result<Run> {
    if config.batch == 0 || config.steps == 0 || config.batch > train.len {
        return Err(Error::Usage(format!(
            "{} steps of {} samples from {} training samples: need at least one step and a \
             batch no larger than the training set",
            config.steps, config.batch, train.len
        )));
    }
    let gpu = stream.gpu();
    let tracker = gpu.track_memory();
    let order = sample_order(train.len, config.batch, config.steps, config.seed);
    let perm = DeviceBuffer::from_host(stream, &order)?;
    let mut losses = DeviceBuffer::<f32>::zeroed(stream, config.steps)?;
    let mut correct = DeviceBuffer::<u32>::zeroed(stream, config.steps)?;
    let mut state = StepState::new(stream)?;
    let mut model = PackedModel::new(stream, sizes, config.batch, init)?;
    let optimizer = StepOptimizer::Adam(Adam::new(config.lr));
    let mixed = precision == Precision::Bf16;
    let mut step = |model: &mut PackedModel, state: &mut StepState| {
        let data = StepData {
            images: &train.images,
            labels: &train.labels,
            perm: &perm,
            losses: &mut losses,
            correct: &mut correct,
        };
        train_step(stream, model, data, state, optimizer, mixed)
    };
    step(&mut model, &mut state)?;
    model.reset(stream, init)?;
    state.set(stream, 0, 0)?;
    stream.synchronize()?;
    let start = Instant::now();
    for _ in 0..config.steps {
        step(&mut model, &mut state)?;
    }
    stream.synchronize()?;
    let seconds = start.elapsed().as_secs_f64();
    let peak_bytes = tracker.peak_increase_bytes();
    let losses = losses.to_host(stream)?;
    let correct = correct.to_host(stream)?;
    let params = model.params().to_host(stream)?;
    let window = (config.steps / 10).max(1);
    let hits: u32 = correct[config.steps - window..].iter().sum();
    let (test_loss, test_accuracy) = evaluate(sizes, &params, test);
    Ok(Run {
        precision,
        steps: config.steps,
        seconds,
        peak_bytes,
        losses,
        train_accuracy: hits as f32 / (window * config.batch) as f32,
        test_loss,
        test_accuracy,
    })
}

/// Mean cross-entropy and accuracy of the packed parameters `params` (layers of `sizes`) on
/// `data`, in f32 on the host: both precisions' weights judged by the same arithmetic.
pub fn evaluate(sizes: &[usize], params: &[f32], data: &Dataset) -> (f32, f32) {
    let mut loss = 0.0f64;
    let mut right = 0usize;
    for (sample, &label) in data.images.chunks(data.pixels).zip(&data.labels) {
        let mut x = sample.to_vec();
        let mut offset = 0;
        for (l, pair) in sizes.windows(2).enumerate() {
            let (inputs, outputs) = (pair[0], pair[1]);
            let weights = &params[offset..][..inputs * outputs];
            let bias = &params[offset + inputs * outputs..][..outputs];
            offset += inputs * outputs + outputs;
            let mut z = bias.to_vec();
            for (k, &xk) in x.iter().enumerate() {
                for (zj, &w) in z.iter_mut().zip(&weights[k * outputs..][..outputs]) {
                    *zj += xk * w;
                }
            }
            if l + 2 < sizes.len() {
                z.iter_mut().for_each(|v| *v = v.max(0.0));
            }
            x = z;
        }
        let top = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = x.iter().map(|&v| (v - top).exp()).sum();
        loss += f64::from(sum.ln() + top - x[label as usize]);
        let guess = (0..x.len()).fold(0, |best, j| if x[j] > x[best] { j } else { best });
        right += usize::from(guess == label as usize);
    }
    let n = data.len().max(1);
    ((loss / n as f64) as f32, right as f32 / n as f32)
}
