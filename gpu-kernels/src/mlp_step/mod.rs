//! A multilayer perceptron's whole training step as one cooperative launch: gather, forward,
//! softmax cross-entropy, backward and the optimizer update, phases separated by
//! `grid_sync()`, for the small batches where a step of separate launches costs more in
//! launch gaps than in work (see [`crate::mlp`] for those kernels).
//!
//! The model is packed: every layer's weights (inputs × outputs, row-major) then its bias, one
//! layer after another, in one buffer, and gradients and optimizer moments alike
//! ([`PackedModel`]). Activations and the gradients at hidden layers' pre-activations are packed
//! per layer too, batch rows each. What changes from step to step lives in the
//! [`crate::mlp::StepState`], so the launch can be replayed from a CUDA graph.
//!
//! The products run on the CUDA cores: at a batch of 64 the largest (64 × 784 × 128) is 6.4
//! million multiply-adds, which the tensor cores would not shorten below the barriers' cost. In
//! mixed precision (`ROUND` = 1) every operand of a product is rounded to bf16 first, as the
//! tensor cores' inputs are, and products accumulate in f32.
//!
//! The phases: the large layers' forward products spread over the grid (a barrier after
//! each), then a block per batch row carries its row through the small layers (at most 16,384
//! weights), the softmax cross-entropy (by one warp) and back down to the small layers' input
//! gradients, since no row needs another's (a barrier); the large layers' input gradients over
//! the grid (a barrier after each but the first layer's); then the gradients by warps, each
//! 64 parameters of one weight row (two a lane, 32 apart, so dz loads stay coalesced and a
//! batch row's input is loaded once and shuffled to the lanes), each parameter's optimizer
//! update applied by the lane that summed its gradient. Two barriers for 784-128-10. `acts`
//! holds the batch's gathered inputs ahead of each layer's outputs, so every layer's gradients
//! read their inputs alike. In mixed precision the products read a bf16 copy of the weights
//! (refreshed by the optimizer) and a rounded copy of dz (in `deltas`' second half).
//!
//! On an H100, training 784-128-10 at a batch of 64 (`mnist_kernels`), f32: 0.049 ms a step as
//! first written (five barriers: one per layer forward, the softmax, one per layer backward,
//! the optimizer after the gradients) against 0.059 ms for the launch-per-kernel step; unrolled
//! product loops, so that many loads are in flight at once, 0.035 ms; two barriers, 0.028 ms;
//! the gradient loops without a branch inside (one would keep the unrolled loop from issuing
//! its loads together) and unrolled by 16, 0.0235 ms; their indices in u32, 0.0205 ms (64-bit
//! index arithmetic had taken more instructions than the sums); the softmax by a warp and the
//! gradients by warps of 64 parameters, 0.0197 ms; 0.0194-0.0198 ms with the cheaper grid
//! barrier. bf16 operands: 0.0218 ms before the copies of the weights and dz, 0.0202-0.0206
//! after. Stopping the kernel after each phase: 0.0026 ms for an empty step, 0.0125 ms (bf16
//! 0.0129) to the end of the rows' phase and its barrier, the gradients and optimizer the rest.
//!
//! The step's `step_by` loops run a few trips a thread, so they are kept from unrolling
//! (`#[unroll(1)]`): once the compiler could count their trips it unrolled them, and the f32 step
//! took 0.0204-0.0205 ms against 0.0200 with the pragma (0.0198 before loops were counted).
//!
//! On the CPU backend (`mnist_kernels --cpu --limit 2000 --epochs 1`, 2 cores) a step takes
//! 48 ms, against 75 ms for the five-barrier kernel; with the GPU's shuffles it took 361 ms,
//! so there each lane loads its gradients' inputs itself.
//!
//! Tried and dropped: instead of the barrier after the first layer, the block that completes a
//! row's last forward task (every thread's `thread_fence()`, then a per-row count) carrying the
//! row on at once: 0.028 ms, the fences and the rows' phase as a device function costing more
//! than the barrier; gradient tiles (a block per few weight rows, the batch's inputs and dz
//! staged in shared memory, 4 parameters a thread): 0.030-0.033 ms, its instructions spent on
//! index arithmetic and only 102 blocks busy; a thread per 2, 4 or 8 adjacent outputs (0.033-
//! 0.064 ms: strided dz loads, and branches in the loop); `launch_bounds(256, 3)` for 3 blocks
//! a multiprocessor (0.0215 ms, registers capped); the bf16 copy of the weights with its rows in
//! pairs, so that one 4-byte load gives a lane two k: 0.0248 ms in bf16 against 0.0204, and with
//! the pairs' loop merely present in the function the f32 instantiation slowed too (0.0237 ms),
//! though that loop is dead there; the softmax's sum by a shuffle tree (0.0200
//! ms, but adding in another order than the host moved the accuracy by 0.3 points); the last
//! layer's block computing its row's softmax as soon as it has the row's logits, one barrier
//! fewer of the five (0.047 ms); the batch's sample indices kept in shared memory (no change,
//! 0.0346 ms); a grid of one block per multiprocessor (1.5 µs barriers) with five barriers:
//! 0.064 ms.

use gpu_dsl_macros::{device, kernel};

use crate::block::block_combine;

mod model;

pub use model::{
    __train_step_shuffled, packed_len, train_step, PackedModel, StepData, StepOptimizer,
};

/// Threads per block.
const THREADS: u32 = 256;
/// Columns of a forward task: one per lane.
const COLUMNS: usize = 32;
/// Slices of k a forward task splits the sum into: one per warp.
const SLICES: usize = 8;
/// Weights of a layer small enough for one block to carry a row through it: read from L2 by
/// each of the batch's blocks, a larger layer would take longer than a grid barrier.
const SMALL: usize = 16384;
/// Every lane of a warp.
const FULL: u32 = 0xffff_ffff;

/// `x` as the product's operand: rounded to bf16 in mixed precision.
#[device]
fn operand<const ROUND: usize>(x: f32) -> f32 {
    if ROUND == 1 {
        bf16::from_f32(x).to_f32()
    } else {
        x
    }
}

/// One forward cell of a block: row `row`'s outputs `group * 32..` of a layer, each lane a
/// column and each warp one eighth of the inputs, the warps' sums added in `partial`. The first
/// layer reads its row (sample `sample`) from `images`, the others from `acts` at `input`.
#[device]
fn forward_cell<const ROUND: usize>(
    images: &[f32],
    params: &[f32],
    params16: &[bf16],
    acts: &mut [f32],
    partial: &mut [f32],
    xrow: &mut [f32],
    inputs: usize,
    outputs: usize,
    hidden: bool,
    param_offset: usize,
    input_offset: usize,
    act_offset: usize,
    from_images: bool,
    sample: usize,
    row: usize,
    group: usize,
) {
    let tid = thread_idx().x as usize;
    let c = tid % COLUMNS;
    let s = tid / COLUMNS;
    let slice = (inputs + SLICES - 1) / SLICES;
    let j = group * COLUMNS + c;
    // The row's inputs, loaded at once into shared memory where they fit: the products then
    // wait on one round of loads for them instead of one per unrolled step.
    let staged = inputs <= xrow.len();
    if staged {
        if from_images {
            stage::<ROUND>(xrow, images, sample * inputs, inputs, true);
        } else {
            stage::<ROUND>(xrow, acts, input_offset + row * inputs, inputs, true);
        }
        sync_threads();
    }
    // The first layer's row also goes to the front of `acts`, where the gradients read every
    // layer's inputs alike.
    if from_images && group == 0 {
        #[unroll(1)]
        for k in (tid..inputs).step_by(THREADS as usize) {
            acts[row * inputs + k] = if staged {
                xrow[k]
            } else {
                images[sample * inputs + k]
            };
        }
    }
    let mut sum = 0.0f32;
    if j < outputs {
        let k_end = ((s + 1) * slice).min(inputs);
        if staged && ROUND == 1 {
            // The weights' bf16 copy: half the bytes, and no rounding on the way.
            #[unroll(16)]
            for k in s * slice..k_end {
                sum += xrow[k] * params16[param_offset + k * outputs + j].to_f32();
            }
        } else if staged {
            #[unroll(16)]
            for k in s * slice..k_end {
                sum += xrow[k] * params[param_offset + k * outputs + j];
            }
        } else if from_images {
            let base = sample * inputs;
            #[unroll(16)]
            for k in s * slice..k_end {
                let x = operand::<ROUND>(images[base + k]);
                sum += x * operand::<ROUND>(params[param_offset + k * outputs + j]);
            }
        } else {
            let base = input_offset + row * inputs;
            #[unroll(16)]
            for k in s * slice..k_end {
                let x = operand::<ROUND>(acts[base + k]);
                sum += x * operand::<ROUND>(params[param_offset + k * outputs + j]);
            }
        }
    }
    partial[tid] = sum;
    sync_threads();
    if s == 0 && j < outputs {
        let mut total = params[param_offset + inputs * outputs + j];
        for q in 0..SLICES {
            total += partial[q * COLUMNS + c];
        }
        acts[act_offset + row * outputs + j] = if hidden { total.max(0.0) } else { total };
    }
    sync_threads();
}

/// The gradient at input `i` of a layer's row `row` (at `in_offset` in `acts`), through the
/// ReLU that made it: the row's gradients `dz` (at `out_offset` in `deltas`, where the softmax
/// leaves the last layer's too) times the weights' row `i` (at `param_offset`).
#[device]
fn input_gradient<const ROUND: usize>(
    params: &[f32],
    acts: &[f32],
    deltas: &[f32],
    inputs: usize,
    outputs: usize,
    param_offset: usize,
    in_offset: usize,
    out_offset: usize,
    row: usize,
    i: usize,
) -> f32 {
    let rounded = if ROUND == 1 { deltas.len() / 2 } else { 0 };
    let mut g = 0.0f32;
    if acts[in_offset + row * inputs + i] > 0.0 {
        let base = out_offset + row * outputs;
        #[unroll(8)]
        for j in 0..outputs {
            let dz = deltas[rounded + base + j];
            let w = params[param_offset + i * outputs + j];
            g += dz * operand::<ROUND>(w);
        }
    }
    g
}

/// `dst[..n]` = `src[from..][..n]` (rounded as operands if `round`), by the whole block: each thread
/// loads 8 elements before it stores any, so its loads are in flight together.
#[device]
fn stage<const ROUND: usize>(dst: &mut [f32], src: &[f32], from: usize, n: usize, round: bool) {
    let tid = thread_idx().x as usize;
    #[unroll(1)]
    for base in (0..n).step_by(8 * THREADS as usize) {
        let mut v = [0.0f32; 8];
        #[unroll]
        for q in 0..8 {
            let u = base + tid + q * THREADS as usize;
            if u < n {
                v[q] = src[from + u];
            }
        }
        #[unroll]
        for q in 0..8 {
            let u = base + tid + q * THREADS as usize;
            if u < n {
                dst[u] = if round { operand::<ROUND>(v[q]) } else { v[q] };
            }
        }
    }
}

/// The softmax cross-entropy of the logits `acts[base..][..classes]`, by one warp: each lane
/// takes every 32nd class, and the warp combines the maximum (the first class on a tie, as
/// `argmax` takes) through shuffles and adds the exponentials in class order. Leaves `(p - target) * scale`
/// in `deltas` at the same place and gives every lane the row's loss and 1 for a hit, else 0.
#[device]
fn row_softmax<const ROUND: usize>(
    acts: &[f32],
    deltas: &mut [f32],
    base: usize,
    classes: usize,
    label: usize,
    scale: f32,
) -> (f32, f32) {
    let lane = lane_id() as usize;
    // A lane without a class of its own starts from class 0, which a tie leaves in front.
    let mut best = acts[base];
    let mut best_class = 0usize;
    #[unroll(1)]
    for c in (lane..classes).step_by(32) {
        let v = acts[base + c];
        if v > best {
            best = v;
            best_class = c;
        }
    }
    let mut offset = 16u32;
    while offset > 0 {
        let other = shfl_xor_sync(FULL, best, offset);
        let other_class = shfl_xor_sync(FULL, best_class as u32, offset) as usize;
        if other > best || (other == best && other_class < best_class) {
            best = other;
            best_class = other_class;
        }
        offset /= 2;
    }
    // The sum in class order on every lane, as a loop over the classes would add: each lane
    // takes the exponential of one class of each 32 and hands it round.
    let mut sum = 0.0f32;
    #[unroll(1)]
    for c0 in (0..classes).step_by(32) {
        let mut e = 0.0f32;
        if c0 + lane < classes {
            e = (acts[base + c0 + lane] - best).exp();
        }
        for q in 0..(classes - c0).min(32) {
            sum += shfl_sync(FULL, e, q as u32);
        }
    }
    let inv = 1.0f32 / sum;
    #[unroll(1)]
    for c in (lane..classes).step_by(32) {
        let p = (acts[base + c] - best).exp() * inv;
        let target = if c == label { 1.0f32 } else { 0.0f32 };
        put_dz::<ROUND>(deltas, base + c, (p - target) * scale);
    }
    let loss = sum.ln() - (acts[base + label] - best);
    (loss, if best_class == label { 1.0 } else { 0.0 })
}

/// Stores the gradient `v` at `at` in `deltas`; in mixed precision also its operand (rounded
/// to bf16) in the buffer's second half, so the products read it without rounding it again.
#[device]
fn put_dz<const ROUND: usize>(deltas: &mut [f32], at: usize, v: f32) {
    deltas[at] = v;
    if ROUND == 1 {
        deltas[deltas.len() / 2 + at] = operand::<ROUND>(v);
    }
}

/// Records parameter `t`'s gradient `g` and applies the optimizer to it (in mixed precision
/// refreshing its bf16 copy too): 0 Adam, 1 SGD with
/// momentum; `hyper` = [lr, beta1, beta2, eps, momentum, Adam's bias-corrected step size, the
/// square root of its second moment's correction].
#[device]
fn apply<const ROUND: usize>(
    params: &mut [f32],
    params16: &mut [bf16],
    grads: &mut [f32],
    moment1: &mut [f32],
    moment2: &mut [f32],
    t: usize,
    g: f32,
    optimizer: u32,
    hyper: [f32; 7],
) {
    grads[t] = g;
    if optimizer == 0 {
        let mi = hyper[1] * moment1[t] + (1.0 - hyper[1]) * g;
        let vi = hyper[2] * moment2[t] + (1.0 - hyper[2]) * g * g;
        moment1[t] = mi;
        moment2[t] = vi;
        params[t] -= hyper[5] * mi / (vi.sqrt() / hyper[6] + hyper[3]);
    } else {
        let vi = hyper[4] * moment1[t] + g;
        moment1[t] = vi;
        params[t] -= hyper[0] * vi;
    }
    if ROUND == 1 {
        params16[t] = bf16::from_f32(params[t]);
    }
}

/// One training step; `dims` = [inputs, outputs of layer 0, ..., classes]; `optimizer` 0 is
/// Adam (`lr`, `beta1`, `beta2`, `eps`), 1 SGD (`lr`, `momentum`); `shuffle` 1 shares the
/// gradients' inputs across a warp by shuffles, 0 has each lane load them (same sums).
#[kernel]
fn mlp_train_step<const ROUND: usize>(
    dims: &[u32],
    images: &[f32],
    labels: &[u32],
    perm: &[u32],
    state: &mut [u32],
    params: &mut [f32],
    params16: &mut [bf16],
    grads: &mut [f32],
    moment1: &mut [f32],
    moment2: &mut [f32],
    acts: &mut [f32],
    deltas: &mut [f32],
    rows: &mut [f32],
    losses: &mut [f32],
    correct: &mut [u32],
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    momentum: f32,
    optimizer: u32,
    shuffle: u32,
) {
    let layers = dims.len() - 1;
    let batch = rows.len() / 2;
    // Read before the first grid_sync(); thread 0 advances the counters after the last one.
    let slot = state[0] as usize;
    let first_row = slot * batch;
    let optimizer_step = state[1];
    let tid = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    let gid = global_idx().x;
    let threads = grid_size().x;
    let partial = shared_array::<f32, 256>();
    let xrow = shared_array::<f32, 1024>();
    // Layers `split..` are small enough for a block to carry a row through them alone.
    let mut split = layers;
    while split > 0 && dims[split - 1] as usize * dims[split] as usize <= SMALL {
        split -= 1;
    }

    // The large layers' forward products, spread over the grid: task (row, 32 columns) per
    // block, a barrier after each layer.
    // `acts` holds the batch's inputs, then each layer's outputs.
    let mut param_offset = 0usize;
    let mut act_offset = batch * dims[0] as usize;
    let mut input_offset = 0usize;
    for l in 0..split {
        let inputs = dims[l] as usize;
        let outputs = dims[l + 1] as usize;
        let groups = (outputs + COLUMNS - 1) / COLUMNS;
        let mut task = block;
        while task < batch * groups {
            let row = task / groups;
            let sample = if l == 0 {
                perm[first_row + row] as usize
            } else {
                0
            };
            forward_cell::<ROUND>(
                images,
                params,
                params16,
                acts,
                partial,
                xrow,
                inputs,
                outputs,
                l + 1 < layers,
                param_offset,
                input_offset,
                act_offset,
                l == 0,
                sample,
                row,
                task % groups,
            );
            task += blocks;
        }
        grid_sync();
        input_offset = act_offset;
        act_offset += batch * outputs;
        param_offset += inputs * outputs + outputs;
    }

    // A block per row through the small layers, the softmax cross-entropy (the logits become
    // the gradient of the batch's mean loss; the row's loss and hit go to `rows`) and back down
    // to the gradients at the small layers' inputs: no row waits on another.
    let classes = dims[layers] as usize;
    let scale = 1.0f32 / batch as f32;
    let (split_param, split_act, split_input) = (param_offset, act_offset, input_offset);
    #[unroll(1)]
    for row in (block..batch).step_by(blocks) {
        let mut param_offset = split_param;
        let mut act_offset = split_act;
        let mut input_offset = split_input;
        let sample = perm[first_row + row] as usize;
        for l in split..layers {
            let inputs = dims[l] as usize;
            let outputs = dims[l + 1] as usize;
            for group in 0..(outputs + COLUMNS - 1) / COLUMNS {
                forward_cell::<ROUND>(
                    images,
                    params,
                    params16,
                    acts,
                    partial,
                    xrow,
                    inputs,
                    outputs,
                    l + 1 < layers,
                    param_offset,
                    input_offset,
                    act_offset,
                    l == 0,
                    sample,
                    row,
                    group,
                );
            }
            input_offset = act_offset;
            act_offset += batch * outputs;
            param_offset += inputs * outputs + outputs;
        }
        if tid < 32 {
            let label = labels[sample] as usize;
            let base = input_offset + row * classes;
            let (loss, hit) = row_softmax::<ROUND>(acts, deltas, base, classes, label, scale);
            if tid == 0 {
                rows[row] = loss;
                rows[batch + row] = hit;
            }
        }
        sync_threads();
        let mut l = layers;
        let mut out_offset = act_offset;
        while l > split.max(1) {
            l -= 1;
            let inputs = dims[l] as usize;
            let outputs = dims[l + 1] as usize;
            out_offset -= batch * outputs;
            param_offset -= inputs * outputs + outputs;
            let in_offset = out_offset - batch * inputs;
            #[unroll(1)]
            for i in (tid..inputs).step_by(THREADS as usize) {
                let g = input_gradient::<ROUND>(
                    params,
                    acts,
                    deltas,
                    inputs,
                    outputs,
                    param_offset,
                    in_offset,
                    out_offset,
                    row,
                    i,
                );
                put_dz::<ROUND>(deltas, in_offset + row * inputs + i, g);
            }
            sync_threads();
        }
    }
    grid_sync();

    // The large layers' input gradients, spread over the grid, a barrier after each layer.
    let mut out_offset = split_act;
    let mut param_offset = split_param;
    let mut l = split;
    while l > 1 {
        l -= 1;
        let inputs = dims[l] as usize;
        let outputs = dims[l + 1] as usize;
        out_offset -= batch * outputs;
        param_offset -= inputs * outputs + outputs;
        let in_offset = out_offset - batch * inputs;
        #[unroll(1)]
        for u in (gid..batch * inputs).step_by(threads) {
            let g = input_gradient::<ROUND>(
                params,
                acts,
                deltas,
                inputs,
                outputs,
                param_offset,
                in_offset,
                out_offset,
                u / inputs,
                u % inputs,
            );
            put_dz::<ROUND>(deltas, in_offset + u, g);
        }
        grid_sync();
    }

    // The batch's mean loss and hits, summed in a fixed order by block 0.
    if block == 0 {
        let mut loss = 0.0f32;
        let mut hits = 0.0f32;
        #[unroll(1)]
        for row in (tid..batch).step_by(THREADS as usize) {
            loss += rows[row];
            hits += rows[batch + row];
        }
        let loss = block_combine(loss, 0.0, |a: f32, b: f32| a + b);
        sync_threads();
        let hits = block_combine(hits, 0.0, |a: f32, b: f32| a + b);
        if tid == 0 {
            losses[slot] = loss * scale;
            correct[slot] = hits as u32;
        }
    }

    // Every parameter's gradient, a sum over the batch, and at once its optimizer update: no
    // thread reads a parameter another one writes after the last barrier.
    let t_adam = (optimizer_step + 1) as f32;
    let hyper = [
        lr,
        beta1,
        beta2,
        eps,
        momentum,
        lr / (1.0f32 - beta1.powf(t_adam)),
        (1.0f32 - beta2.powf(t_adam)).sqrt(),
    ];
    // The gradients by warps: a warp takes 64 neighbouring parameters of one weight row (or
    // of the bias), each lane two of them 32 apart, so a warp's loads of dz stay coalesced and
    // each lane loads (and rounds) one batch row's input and shuffles it to the others. Indices
    // in u32 (`PackedModel` keeps every buffer below 2^32 elements): 64-bit index arithmetic
    // took more instructions than the sums themselves.
    let batch32 = batch as u32;
    // Where the products read dz: in mixed precision, the rounded copy.
    let rounded = if ROUND == 1 {
        (deltas.len() / 2) as u32
    } else {
        0
    };
    let lane = (gid % 32) as u32;
    let mut units = 0u32;
    for l in 0..layers {
        units += (dims[l] + 1) * ((dims[l + 1] + 63) / 64);
    }
    let mut unit = (gid / 32) as u32;
    while unit < units {
        // The unit's layer, that layer's first unit and parameter, and its inputs' and
        // outputs' places in `acts`.
        let mut l = 0usize;
        let mut first_unit = 0u32;
        let mut first = 0u32;
        let mut in_offset = 0u32;
        let mut out_offset = batch32 * dims[0];
        while unit >= first_unit + (dims[l] + 1) * ((dims[l + 1] + 63) / 64) {
            first_unit += (dims[l] + 1) * ((dims[l + 1] + 63) / 64);
            first += (dims[l] + 1) * dims[l + 1];
            in_offset = out_offset;
            out_offset += batch32 * dims[l + 1];
            l += 1;
        }
        let inputs = dims[l];
        let outputs = dims[l + 1];
        let per_row = (outputs + 63) / 64;
        let i = (unit - first_unit) / per_row;
        let j0 = (unit - first_unit) % per_row * 64 + lane;
        let j1 = j0 + 32;
        // Past the row's end a lane sums its last column again, and keeps nothing: no branch
        // inside the loops, which would keep the unrolled loop from issuing its loads together.
        let c0 = j0.min(outputs - 1);
        let c1 = j1.min(outputs - 1);
        let mut g0 = 0.0f32;
        let mut g1 = 0.0f32;
        if i < inputs && shuffle == 0 {
            // Each lane loads its inputs itself (the CPU backend's choice, see `train_step`).
            #[unroll(16)]
            for r in 0..batch32 {
                let x = operand::<ROUND>(acts[(in_offset + r * inputs + i) as usize]);
                let at = rounded + out_offset + r * outputs;
                g0 += x * deltas[(at + c0) as usize];
                g1 += x * deltas[(at + c1) as usize];
            }
        } else if i < inputs {
            #[unroll(1)]
            for r0 in (0..batch32).step_by(32) {
                let mut mine = 0.0f32;
                if r0 + lane < batch32 {
                    mine = operand::<ROUND>(acts[(in_offset + (r0 + lane) * inputs + i) as usize]);
                }
                #[unroll(16)]
                for q in 0..(batch32 - r0).min(32) {
                    let x = shfl_sync(FULL, mine, q);
                    let at = rounded + out_offset + (r0 + q) * outputs;
                    g0 += x * deltas[(at + c0) as usize];
                    g1 += x * deltas[(at + c1) as usize];
                }
            }
        } else {
            // The bias's gradients add the batch's dz as they are.
            #[unroll(16)]
            for r in 0..batch32 {
                let at = out_offset + r * outputs;
                g0 += deltas[(at + c0) as usize];
                g1 += deltas[(at + c1) as usize];
            }
        }
        let t = (first + i * outputs) as usize;
        if j0 < outputs {
            apply::<ROUND>(
                params,
                params16,
                grads,
                moment1,
                moment2,
                t + j0 as usize,
                g0,
                optimizer,
                hyper,
            );
        }
        if j1 < outputs {
            apply::<ROUND>(
                params,
                params16,
                grads,
                moment1,
                moment2,
                t + j1 as usize,
                g1,
                optimizer,
                hyper,
            );
        }
        unit += (threads / 32) as u32;
    }
    if gid == 0 {
        state[0] += 1;
        state[1] += 1;
    }
}

/// The kernel of this module, generic over `ROUND` (`TemplateArg::Const` 0, or 1 for bf16
/// operands).
pub const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[&mlp_train_step::KERNEL];

/// Both instantiations [`train_step`] launches: `ROUND` 0 (f32 operands) and 1 (bf16).
pub fn instantiations() -> Vec<(
    &'static gpu_dsl_runtime::Kernel,
    Vec<gpu_dsl_runtime::TemplateArg>,
)> {
    [0, 1]
        .map(|round| {
            (
                &mlp_train_step::KERNEL,
                vec![gpu_dsl_runtime::TemplateArg::Const(round)],
            )
        })
        .to_vec()
}
