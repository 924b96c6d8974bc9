//! The kernels of a multilayer perceptron's training step, besides its matrix products (see
//! [`crate::gemm`]): batch gathering, bias + ReLU, softmax cross-entropy with its gradient,
//! bias gradients, and the Adam and SGD updates.
//!
//! Matrices are row-major with one sample per row. A step that is replayed as a CUDA graph has
//! the same launch arguments every time, so what changes from step to step lives in a small
//! device buffer, the [`StepState`]: the batch's index within the epoch and the optimizer's step
//! count, both advanced on the device by [`advance`] at the end of each step.
//!
//! Every reduction (a batch's loss, a bias gradient) sums in a fixed order, so a step gives the
//! same bits each time it runs on a given backend.

use gpu_dsl_macros::{device, kernel};
use gpu_dsl_runtime::half::bf16;
use gpu_dsl_runtime::{Block, DeviceBuffer, Error, Grid, LaunchConfig, Result, Stream};

use crate::block::block_combine;
use crate::map::{grid_stride_config, same_len};

/// Threads of the one-block reductions (a batch's loss).
const LOSS_THREADS: usize = 256;
/// Columns a block of the column-wise kernels (bias gradients) covers: a warp's width, so
/// that a warp reads each row's 128 bytes at once.
const COLUMN_TILE: usize = 32;
/// Threads per column, each summing every `COLUMN_LANES`-th row: 1024-thread blocks give
/// enough loads in flight when the columns are few (4096 columns, 128 blocks, read at 2.8 TB/s
/// where one thread per column read 0.1 TB/s).
pub const COLUMN_LANES: usize = 32;

/// Slots of the step state: the batch index within the epoch, and the optimizer steps taken.
pub const STEP_STATE_LEN: usize = 2;

/// Copies batch `state[0]` (rows `perm[state[0]·batch ..][..batch]` of the data set) into
/// `batch_x` and its labels into `batch_y`.
#[kernel]
fn gather_batch(
    images: &[f32],
    labels: &[u32],
    perm: &[u32],
    state: &[u32],
    batch_x: &mut [f32],
    batch_y: &mut [u32],
) {
    let batch = batch_y.len();
    let pixels = batch_x.len() / batch;
    let base = state[0] as usize * batch;
    if pixels % 4 == 0 {
        let vectors = pixels / 4;
        for v in (global_idx().x..batch * vectors).step_by(grid_size().x) {
            let row = v / vectors;
            let source = perm[base + row] as usize;
            let values = images.load4(source * pixels + (v % vectors) * 4);
            batch_x.store4(v * 4, values);
        }
    } else {
        for i in (global_idx().x..batch * pixels).step_by(grid_size().x) {
            let source = perm[base + i / pixels] as usize;
            batch_x[i] = images[source * pixels + i % pixels];
        }
    }
    for row in (global_idx().x..batch).step_by(grid_size().x) {
        batch_y[row] = labels[perm[base + row] as usize];
    }
}

/// `z = max(z + bias, 0)` over rows of `bias.len()` columns, in place.
#[kernel]
fn bias_relu_f32(z: &mut [f32], bias: &[f32]) {
    let columns = bias.len();
    for i in (global_idx().x..z.len()).step_by(grid_size().x) {
        z[i] = (z[i] + bias[i % columns]).max(0.0);
    }
}

/// `z = max(z + bias, 0)` in place, and its bf16 rounding in `out` (the next layer's input on
/// the tensor cores).
#[kernel]
fn bias_relu_to_bf16(z: &mut [f32], bias: &[f32], out: &mut [bf16]) {
    let columns = bias.len();
    for i in (global_idx().x..z.len()).step_by(grid_size().x) {
        let a = (z[i] + bias[i % columns]).max(0.0);
        z[i] = a;
        out[i] = bf16::from_f32(a);
    }
}

/// `out = x` rounded to bf16.
#[kernel]
fn round_to_bf16(x: &[f32], out: &mut [bf16]) {
    for i in (global_idx().x..x.len()).step_by(grid_size().x) {
        out[i] = bf16::from_f32(x[i]);
    }
}

/// `z = z + bias` over rows of `bias.len()` columns, in place.
#[kernel]
fn bias_add_f32(z: &mut [f32], bias: &[f32]) {
    let columns = bias.len();
    for i in (global_idx().x..z.len()).step_by(grid_size().x) {
        z[i] += bias[i % columns];
    }
}

/// Softmax cross-entropy of `logits + bias` against `labels`, one block for the whole batch.
/// Replaces `logits` with the gradient of the batch's mean loss, and writes the mean loss and
/// the number of correct predictions to `losses[state[0]]` and `correct[state[0]]`.
#[kernel]
fn softmax_xent(
    logits: &mut [f32],
    bias: &[f32],
    labels: &[u32],
    state: &[u32],
    losses: &mut [f32],
    correct: &mut [u32],
) {
    // LOSS_THREADS: kernels cannot name items outside them yet.
    const THREADS: usize = 256;
    let classes = bias.len();
    let rows = labels.len();
    let tid = thread_idx().x as usize;
    let scale = 1.0f32 / rows as f32;
    let mut loss = 0.0f32;
    let mut right = 0u32;
    for row in (tid..rows).step_by(THREADS) {
        let base = row * classes;
        let best_class = row_argmax(logits, bias, base);
        let best = logits[base + best_class] + bias[best_class];
        let sum = row_sum_exp(logits, bias, base, best);
        let label = labels[row] as usize;
        loss += sum.ln() - (logits[base + label] + bias[label] - best);
        if best_class == label {
            right += 1;
        }
        let inv = 1.0f32 / sum;
        for c in 0..classes {
            let p = (logits[base + c] + bias[c] - best).exp() * inv;
            let target = if c == label { 1.0f32 } else { 0.0f32 };
            logits[base + c] = (p - target) * scale;
        }
    }
    // Sums (op 0) over the block; the two types use separate shared arrays.
    let loss = block_combine(loss, 0.0, |a: f32, b: f32| a + b);
    let right = block_combine(right, 0, |a: u32, b: u32| a + b);
    if tid == 0 {
        let slot = state[0] as usize;
        losses[slot] = loss * scale;
        correct[slot] = right;
    }
}

/// The first column of the largest `logits[base + c] + bias[c]`, as `argmax` picks.
#[device]
fn row_argmax(logits: &[f32], bias: &[f32], base: usize) -> usize {
    let mut best = logits[base] + bias[0];
    let mut best_class = 0usize;
    for c in 1..bias.len() {
        let v = logits[base + c] + bias[c];
        if v > best {
            best = v;
            best_class = c;
        }
    }
    best_class
}

/// `Σ_c exp(logits[base + c] + bias[c] - max)`: the softmax denominator, shifted by the row's
/// maximum so no term overflows.
#[device]
fn row_sum_exp(logits: &[f32], bias: &[f32], base: usize, max: f32) -> f32 {
    let mut sum = 0.0f32;
    for c in 0..bias.len() {
        sum += (logits[base + c] + bias[c] - max).exp();
    }
    sum
}

/// Per row of `logits + bias`: the cross-entropy against `labels` and the predicted class
/// (the first largest logit, as `argmax` picks).
#[kernel]
fn classify(
    logits: &[f32],
    bias: &[f32],
    labels: &[u32],
    losses: &mut [f32],
    predicted: &mut [u32],
) {
    let classes = bias.len();
    for row in (global_idx().x..labels.len()).step_by(grid_size().x) {
        let base = row * classes;
        let best_class = row_argmax(logits, bias, base);
        let best = logits[base + best_class] + bias[best_class];
        let sum = row_sum_exp(logits, bias, base, best);
        let label = labels[row] as usize;
        losses[row] = sum.ln() - (logits[base + label] + bias[label] - best);
        predicted[row] = best_class as u32;
    }
}

/// `grad[c] = Σ_rows dz[row][c]`, in [`column_total`]'s order.
#[kernel]
fn column_sums(dz: &[f32], grad: &mut [f32]) {
    let columns = grad.len();
    let c = block_idx().x as usize * COLUMN_TILE + thread_idx().x as usize;
    let mut sum = 0.0f32;
    if c < columns {
        let rows = dz.len() / columns;
        for row in (thread_idx().y as usize..rows).step_by(COLUMN_LANES) {
            sum += dz[row * columns + c];
        }
    }
    let total = column_total(sum);
    if c < columns && thread_idx().y == 0 {
        grad[c] = total;
    }
}

/// Back through a ReLU: `dz = da` where the layer's output `a` is positive, else 0; and the
/// bias gradient `grad[c] = Σ_rows dz[row][c]`, in [`column_total`]'s order.
#[kernel]
fn relu_backward(da: &[f32], a: &[f32], dz: &mut [f32], grad: &mut [f32]) {
    let columns = grad.len();
    let c = block_idx().x as usize * COLUMN_TILE + thread_idx().x as usize;
    let mut sum = 0.0f32;
    if c < columns {
        let rows = dz.len() / columns;
        for row in (thread_idx().y as usize..rows).step_by(COLUMN_LANES) {
            let i = row * columns + c;
            let g = if a[i] > 0.0 { da[i] } else { 0.0 };
            dz[i] = g;
            sum += g;
        }
    }
    let total = column_total(sum);
    if c < columns && thread_idx().y == 0 {
        grad[c] = total;
    }
}

/// A column's sum from its lanes' partial sums (lane `y` summed rows `y`, `y + COLUMN_LANES`,
/// ... in order), added in lane order; valid in the lane-0 thread of each column. Every
/// thread of the block calls it.
#[device]
fn column_total(sum: f32) -> f32 {
    let partial = shared_array::<f32, { COLUMN_TILE * COLUMN_LANES }>();
    let (x, y) = (thread_idx().x as usize, thread_idx().y as usize);
    partial[y * COLUMN_TILE + x] = sum;
    sync_threads();
    let mut total = 0.0f32;
    if y == 0 {
        for lane in 0..COLUMN_LANES {
            total += partial[lane * COLUMN_TILE + x];
        }
    }
    total
}

/// One Adam step (PyTorch's formulation, no weight decay) for optimizer step `state[1] + 1`.
#[kernel]
fn adam_step(
    param: &mut [f32],
    grad: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    state: &[u32],
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
) {
    let t = (state[1] + 1) as f32;
    let correction1 = 1.0f32 - beta1.powf(t);
    let correction2 = 1.0f32 - beta2.powf(t);
    let step = lr / correction1;
    let root2 = correction2.sqrt();
    for i in (global_idx().x..param.len()).step_by(grid_size().x) {
        let g = grad[i];
        let mi = beta1 * m[i] + (1.0 - beta1) * g;
        let vi = beta2 * v[i] + (1.0 - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= step * mi / (vi.sqrt() / root2 + eps);
    }
}

/// One SGD step with momentum (PyTorch's formulation: `v = μ·v + g`, `p -= lr·v`).
#[kernel]
fn sgd_step(param: &mut [f32], grad: &[f32], velocity: &mut [f32], lr: f32, momentum: f32) {
    for i in (global_idx().x..param.len()).step_by(grid_size().x) {
        let vi = momentum * velocity[i] + grad[i];
        velocity[i] = vi;
        param[i] -= lr * vi;
    }
}

/// Moves the step state on by one batch and one optimizer step.
#[kernel]
fn advance_state(state: &mut [u32]) {
    if global_idx().x == 0 {
        state[0] += 1;
        state[1] += 1;
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[
    &gather_batch::KERNEL,
    &bias_relu_f32::KERNEL,
    &bias_add_f32::KERNEL,
    &bias_relu_to_bf16::KERNEL,
    &round_to_bf16::KERNEL,
    &softmax_xent::KERNEL,
    &classify::KERNEL,
    &column_sums::KERNEL,
    &relu_backward::KERNEL,
    &adam_step::KERNEL,
    &sgd_step::KERNEL,
    &advance_state::KERNEL,
];

/// The device-side step counters a replayed step reads: `[batch in epoch, optimizer steps]`.
pub struct StepState {
    /// The two counters, in device memory.
    pub counters: DeviceBuffer<u32>,
}

impl StepState {
    /// Counters at batch 0 and optimizer step 0.
    pub fn new(stream: &Stream) -> Result<Self> {
        Ok(StepState {
            counters: DeviceBuffer::zeroed(stream, STEP_STATE_LEN)?,
        })
    }

    /// Sets both counters (a new epoch starts at batch 0 and keeps the optimizer's count).
    pub fn set(&mut self, stream: &Stream, batch: u32, optimizer_steps: u32) -> Result<()> {
        self.counters
            .copy_from_host(stream, &[batch, optimizer_steps])
    }

    /// The counters, read back (synchronizes).
    pub fn get(&self, stream: &Stream) -> Result<(u32, u32)> {
        let host = self.counters.to_host(stream)?;
        Ok((host[0], host[1]))
    }
}

fn check_state(state: &StepState) -> Result<()> {
    same_len("step state", STEP_STATE_LEN, state.counters.len())
}

/// Rows of `columns` elements in `len` elements, or an error naming `what`.
fn rows_of(what: &'static str, len: usize, columns: usize) -> Result<usize> {
    if columns == 0 || !len.is_multiple_of(columns) {
        return Err(Error::InvalidLaunch(format!(
            "{what}: {len} elements are not whole rows of {columns}"
        )));
    }
    Ok(len / columns)
}

/// Copies the current batch (see [`StepState`]) of `batch_y.len()` samples, picked through
/// `perm`, from `images` (one sample of `batch_x.len() / batch_y.len()` values per row) and
/// `labels`. Fails if the batch would run past the permutation.
pub fn gather(
    stream: &Stream,
    images: &DeviceBuffer<f32>,
    labels: &DeviceBuffer<u32>,
    perm: &DeviceBuffer<u32>,
    state: &StepState,
    batch_x: &mut DeviceBuffer<f32>,
    batch_y: &mut DeviceBuffer<u32>,
) -> Result<()> {
    check_state(state)?;
    let batch = batch_y.len();
    let pixels = rows_of("gather: batch_x per sample", batch_x.len(), batch.max(1))?;
    same_len("gather: images", labels.len() * pixels, images.len())?;
    if batch == 0 || perm.len() < batch {
        return Err(Error::InvalidLaunch(format!(
            "gather: a batch of {batch} needs a permutation of at least as many samples, found {}",
            perm.len()
        )));
    }
    let work = if pixels % 4 == 0 {
        batch * pixels / 4
    } else {
        batch * pixels
    };
    gather_batch::launch(
        stream,
        grid_stride_config(stream, work.max(batch)),
        images,
        labels,
        perm,
        &state.counters,
        batch_x,
        batch_y,
    )
}

/// `z = max(z + bias, 0)` row by row, in place.
pub fn bias_relu(
    stream: &Stream,
    z: &mut DeviceBuffer<f32>,
    bias: &DeviceBuffer<f32>,
) -> Result<()> {
    rows_of("bias_relu", z.len(), bias.len())?;
    bias_relu_f32::launch(stream, grid_stride_config(stream, z.len()), z, bias)
}

/// `z = max(z + bias, 0)` row by row, in place, and `out` = that rounded to bf16.
pub fn bias_relu_bf16(
    stream: &Stream,
    z: &mut DeviceBuffer<f32>,
    bias: &DeviceBuffer<f32>,
    out: &mut DeviceBuffer<bf16>,
) -> Result<()> {
    rows_of("bias_relu_bf16", z.len(), bias.len())?;
    same_len("bias_relu_bf16: out", z.len(), out.len())?;
    bias_relu_to_bf16::launch(stream, grid_stride_config(stream, z.len()), z, bias, out)
}

/// `out = x` rounded to bf16 (to the nearest, ties to even).
pub fn to_bf16(stream: &Stream, x: &DeviceBuffer<f32>, out: &mut DeviceBuffer<bf16>) -> Result<()> {
    same_len("to_bf16: out", x.len(), out.len())?;
    round_to_bf16::launch(stream, grid_stride_config(stream, x.len()), x, out)
}

/// `z = z + bias` row by row, in place.
pub fn bias_add(
    stream: &Stream,
    z: &mut DeviceBuffer<f32>,
    bias: &DeviceBuffer<f32>,
) -> Result<()> {
    rows_of("bias_add", z.len(), bias.len())?;
    bias_add_f32::launch(stream, grid_stride_config(stream, z.len()), z, bias)
}

/// Softmax cross-entropy of `logits + bias` (one row per label): replaces `logits` with the
/// gradient of the mean loss over the batch, and records the mean loss and the count of correct
/// predictions at index `state`'s batch of `losses` and `correct`.
pub fn softmax_cross_entropy(
    stream: &Stream,
    logits: &mut DeviceBuffer<f32>,
    bias: &DeviceBuffer<f32>,
    labels: &DeviceBuffer<u32>,
    state: &StepState,
    losses: &mut DeviceBuffer<f32>,
    correct: &mut DeviceBuffer<u32>,
) -> Result<()> {
    check_state(state)?;
    let rows = rows_of("softmax_cross_entropy: logits", logits.len(), bias.len())?;
    same_len("softmax_cross_entropy: labels", rows, labels.len())?;
    same_len(
        "softmax_cross_entropy: correct",
        losses.len(),
        correct.len(),
    )?;
    softmax_xent::launch(
        stream,
        LaunchConfig::for_len(LOSS_THREADS, LOSS_THREADS as u32),
        logits,
        bias,
        labels,
        &state.counters,
        losses,
        correct,
    )
}

/// Per row of `logits + bias`: the cross-entropy against `labels`, and the predicted class.
pub fn classify_rows(
    stream: &Stream,
    logits: &DeviceBuffer<f32>,
    bias: &DeviceBuffer<f32>,
    labels: &DeviceBuffer<u32>,
    losses: &mut DeviceBuffer<f32>,
    predicted: &mut DeviceBuffer<u32>,
) -> Result<()> {
    let rows = rows_of("classify_rows: logits", logits.len(), bias.len())?;
    same_len("classify_rows: labels", rows, labels.len())?;
    same_len("classify_rows: losses", rows, losses.len())?;
    same_len("classify_rows: predicted", rows, predicted.len())?;
    classify::launch(
        stream,
        grid_stride_config(stream, rows),
        logits,
        bias,
        labels,
        losses,
        predicted,
    )
}

/// A block per `COLUMN_TILE` columns; too many columns for a grid is an error, not a wrap.
fn column_config(columns: usize) -> Result<LaunchConfig> {
    let grid = Grid::try_x(columns.div_ceil(COLUMN_TILE).max(1))?;
    Ok(LaunchConfig::new(
        grid,
        Block::xy(COLUMN_TILE as u32, COLUMN_LANES as u32),
    ))
}

/// The bias gradient: `grad[c] = Σ_rows dz[row][c]`.
pub fn bias_gradient(
    stream: &Stream,
    dz: &DeviceBuffer<f32>,
    grad: &mut DeviceBuffer<f32>,
) -> Result<()> {
    rows_of("bias_gradient", dz.len(), grad.len())?;
    column_sums::launch(stream, column_config(grad.len())?, dz, grad)
}

/// Back through bias + ReLU: `dz = da · [a > 0]` and the bias gradient `grad = Σ_rows dz`,
/// where `a` is the layer's output.
pub fn relu_bias_backward(
    stream: &Stream,
    da: &DeviceBuffer<f32>,
    a: &DeviceBuffer<f32>,
    dz: &mut DeviceBuffer<f32>,
    grad: &mut DeviceBuffer<f32>,
) -> Result<()> {
    rows_of("relu_bias_backward", dz.len(), grad.len())?;
    same_len("relu_bias_backward: da", dz.len(), da.len())?;
    same_len("relu_bias_backward: a", dz.len(), a.len())?;
    relu_backward::launch(stream, column_config(grad.len())?, da, a, dz, grad)
}

/// Adam's hyper-parameters.
#[derive(Clone, Copy, Debug)]
pub struct Adam {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// Added to the root of the second moment.
    pub eps: f32,
}

impl Adam {
    /// PyTorch's defaults with learning rate `lr`.
    pub fn new(lr: f32) -> Self {
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// One Adam update of `param` from `grad`, with moments `m` and `v`, as optimizer step
/// `state`'s count + 1 (the count itself moves on in [`advance`]).
pub fn adam(
    stream: &Stream,
    hyper: &Adam,
    param: &mut DeviceBuffer<f32>,
    grad: &DeviceBuffer<f32>,
    m: &mut DeviceBuffer<f32>,
    v: &mut DeviceBuffer<f32>,
    state: &StepState,
) -> Result<()> {
    check_state(state)?;
    same_len("adam: grad", param.len(), grad.len())?;
    same_len("adam: m", param.len(), m.len())?;
    same_len("adam: v", param.len(), v.len())?;
    adam_step::launch(
        stream,
        grid_stride_config(stream, param.len()),
        param,
        grad,
        m,
        v,
        &state.counters,
        hyper.lr,
        hyper.beta1,
        hyper.beta2,
        hyper.eps,
    )
}

/// One SGD-with-momentum update of `param` from `grad` with its `velocity`.
pub fn sgd(
    stream: &Stream,
    lr: f32,
    momentum: f32,
    param: &mut DeviceBuffer<f32>,
    grad: &DeviceBuffer<f32>,
    velocity: &mut DeviceBuffer<f32>,
) -> Result<()> {
    same_len("sgd: grad", param.len(), grad.len())?;
    same_len("sgd: velocity", param.len(), velocity.len())?;
    sgd_step::launch(
        stream,
        grid_stride_config(stream, param.len()),
        param,
        grad,
        velocity,
        lr,
        momentum,
    )
}

/// Ends a step: the next batch, one more optimizer step.
pub fn advance(stream: &Stream, state: &mut StepState) -> Result<()> {
    check_state(state)?;
    advance_state::launch(stream, LaunchConfig::for_len(1, 32), &mut state.counters)
}
