//! The fused training step (one cooperative launch) against the same step in plain Rust:
//! forward, softmax cross-entropy, backward and the Adam or SGD update, over several steps and
//! batches, with one and two hidden layers, in f32 and with bf16 operands; on the CPU backend
//! (also under the race checker) and, where there is one, the GPU.

use gpu_dsl_kernels::mlp::{Adam, StepState};
use gpu_dsl_kernels::mlp_step::{
    __train_step_shuffled, packed_len, train_step, PackedModel, StepData, StepOptimizer,
};
use gpu_dsl_runtime::half::bf16;
use gpu_dsl_runtime::{test_device, Backend, DeviceBuffer, Gpu};

/// Deterministic values in [-1, 1).
fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// The step in plain Rust on packed parameters: what the kernel must compute.
struct Host {
    sizes: Vec<usize>,
    params: Vec<f32>,
    m1: Vec<f32>,
    m2: Vec<f32>,
    steps: u32,
}

impl Host {
    fn round(x: f32, mixed: bool) -> f32 {
        if mixed {
            bf16::from_f32(x).to_f32()
        } else {
            x
        }
    }

    /// One step on `rows` (sample indices) of `images`/`labels`; returns (mean loss, hits).
    fn step(
        &mut self,
        images: &[f32],
        labels: &[u32],
        rows: &[u32],
        optimizer: StepOptimizer,
        mixed: bool,
    ) -> (f32, u32) {
        let r = |x: f32| Host::round(x, mixed);
        let batch = rows.len();
        let sizes = self.sizes.clone();
        let layers = sizes.len() - 1;
        let mut offsets = Vec::new();
        let mut offset = 0;
        for l in 0..layers {
            offsets.push(offset);
            offset += sizes[l] * sizes[l + 1] + sizes[l + 1];
        }
        let x: Vec<f32> = rows
            .iter()
            .flat_map(|&s| images[s as usize * sizes[0]..][..sizes[0]].to_vec())
            .collect();
        let mut acts = vec![x];
        for l in 0..layers {
            let (inputs, outputs, w) = (sizes[l], sizes[l + 1], offsets[l]);
            let input = &acts[l];
            let mut out = vec![0.0f32; batch * outputs];
            for b in 0..batch {
                for j in 0..outputs {
                    let mut sum = 0.0f32;
                    for k in 0..inputs {
                        sum += r(input[b * inputs + k]) * r(self.params[w + k * outputs + j]);
                    }
                    let z = sum + self.params[w + inputs * outputs + j];
                    out[b * outputs + j] = if l + 1 < layers { z.max(0.0) } else { z };
                }
            }
            acts.push(out);
        }
        let classes = sizes[layers];
        let mut dz = acts[layers].clone();
        let (mut loss, mut hits) = (0.0f32, 0u32);
        for b in 0..batch {
            let row = &mut dz[b * classes..][..classes];
            let (best_class, best) =
                row.iter()
                    .enumerate()
                    .fold(
                        (0, f32::NEG_INFINITY),
                        |m, (c, &v)| if v > m.1 { (c, v) } else { m },
                    );
            let sum: f32 = row.iter().map(|v| (v - best).exp()).sum();
            let label = labels[rows[b] as usize] as usize;
            loss += sum.ln() - (row[label] - best);
            hits += u32::from(best_class == label);
            for (c, v) in row.iter_mut().enumerate() {
                let p = (*v - best).exp() / sum;
                *v = (p - if c == label { 1.0 } else { 0.0 }) / batch as f32;
            }
        }
        let mut grads = vec![0.0f32; self.params.len()];
        for l in (0..layers).rev() {
            let (inputs, outputs, w) = (sizes[l], sizes[l + 1], offsets[l]);
            for i in 0..inputs {
                for j in 0..outputs {
                    grads[w + i * outputs + j] = (0..batch)
                        .map(|b| r(acts[l][b * inputs + i]) * r(dz[b * outputs + j]))
                        .sum();
                }
            }
            for j in 0..outputs {
                grads[w + inputs * outputs + j] = (0..batch).map(|b| dz[b * outputs + j]).sum();
            }
            if l > 0 {
                let mut below = vec![0.0f32; batch * inputs];
                for b in 0..batch {
                    for i in 0..inputs {
                        if acts[l][b * inputs + i] > 0.0 {
                            below[b * inputs + i] = (0..outputs)
                                .map(|j| {
                                    r(dz[b * outputs + j]) * r(self.params[w + i * outputs + j])
                                })
                                .sum();
                        }
                    }
                }
                dz = below;
            }
        }
        let t = (self.steps + 1) as f32;
        for (i, &g) in grads.iter().enumerate() {
            match optimizer {
                StepOptimizer::Adam(a) => {
                    self.m1[i] = a.beta1 * self.m1[i] + (1.0 - a.beta1) * g;
                    self.m2[i] = a.beta2 * self.m2[i] + (1.0 - a.beta2) * g * g;
                    let step = a.lr / (1.0 - a.beta1.powf(t));
                    let root2 = (1.0 - a.beta2.powf(t)).sqrt();
                    self.params[i] -= step * self.m1[i] / (self.m2[i].sqrt() / root2 + a.eps);
                }
                StepOptimizer::Sgd { lr, momentum } => {
                    self.m1[i] = momentum * self.m1[i] + g;
                    self.params[i] -= lr * self.m1[i];
                }
            }
        }
        self.steps += 1;
        (loss / batch as f32, hits)
    }
}

/// The CPU backend, plain and under the race checker (which must find nothing to report),
/// and the GPU where there is one.
fn devices() -> Vec<Gpu> {
    let mut all = vec![Gpu::cpu(), Gpu::cpu_racecheck()];
    let best = test_device();
    if best.backend() == Backend::Cuda {
        all.push(best);
    }
    all
}

/// Three steps (three batches of one epoch) of the fused kernel and the host, compared.
fn check(sizes: &[usize], batch: usize, optimizer: StepOptimizer, mixed: bool) {
    check_with(sizes, batch, optimizer, mixed, false);
}

/// [`check`], with `shuffled` running the warp-shuffle path of the gradients on every backend.
fn check_with(
    sizes: &[usize],
    batch: usize,
    optimizer: StepOptimizer,
    mixed: bool,
    shuffled: bool,
) {
    let run = if shuffled {
        __train_step_shuffled
    } else {
        train_step
    };
    let samples = 3 * batch + 1;
    let images: Vec<f32> = random_f32(samples * sizes[0], 1)
        .iter()
        .map(|v| v.abs())
        .collect();
    let classes = *sizes.last().unwrap() as u32;
    let labels: Vec<u32> = (0..samples as u32).map(|i| (i * 7 + 3) % classes).collect();
    let perm: Vec<u32> = (0..samples as u32).rev().collect();
    let params: Vec<f32> = random_f32(packed_len(sizes), 2)
        .iter()
        .map(|v| v * 0.5)
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let mut host = Host {
            sizes: sizes.to_vec(),
            params: params.clone(),
            m1: vec![0.0; params.len()],
            m2: vec![0.0; params.len()],
            steps: 0,
        };
        let mut model = PackedModel::new(&stream, sizes, batch, &params).unwrap();
        let images_d = DeviceBuffer::from_host(&stream, &images).unwrap();
        let labels_d = DeviceBuffer::from_host(&stream, &labels).unwrap();
        let perm_d = DeviceBuffer::from_host(&stream, &perm).unwrap();
        let mut losses = DeviceBuffer::<f32>::zeroed(&stream, 3).unwrap();
        let mut correct = DeviceBuffer::<u32>::zeroed(&stream, 3).unwrap();
        let mut state = StepState::new(&stream).unwrap();
        let mut expected = Vec::new();
        for step in 0..3 {
            let data = StepData {
                images: &images_d,
                labels: &labels_d,
                perm: &perm_d,
                losses: &mut losses,
                correct: &mut correct,
            };
            run(&stream, &mut model, data, &mut state, optimizer, mixed).unwrap();
            expected.push(host.step(
                &images,
                &labels,
                &perm[step * batch..][..batch],
                optimizer,
                mixed,
            ));
        }
        let what = format!(
            "{:?} {sizes:?} batch {batch} {optimizer:?} mixed {mixed}",
            gpu.backend()
        );
        let found = model.params().to_host(&stream).unwrap();
        for (i, (f, e)) in found.iter().zip(&host.params).enumerate() {
            assert!(
                (f - e).abs() <= 1e-4 * e.abs().max(1.0),
                "{what}: parameter {i}: {f} against {e}"
            );
        }
        let (losses, correct) = (
            losses.to_host(&stream).unwrap(),
            correct.to_host(&stream).unwrap(),
        );
        for (step, &(loss, hits)) in expected.iter().enumerate() {
            assert!(
                (losses[step] - loss).abs() <= 1e-4 * loss.abs().max(1.0),
                "{what}: loss {step}"
            );
            assert_eq!(correct[step], hits, "{what}: hits {step}");
        }
        assert_eq!(
            state.get(&stream).unwrap(),
            (3, 3),
            "{what}: the step state moved on"
        );
    }
}

#[test]
fn one_hidden_layer_with_adam() {
    check(&[37, 40, 5], 6, StepOptimizer::Adam(Adam::new(1e-2)), false);
}

#[test]
fn two_hidden_layers_with_sgd() {
    let sgd = StepOptimizer::Sgd {
        lr: 0.05,
        momentum: 0.9,
    };
    check(&[20, 33, 9, 4], 5, sgd, false);
}

#[test]
fn bf16_operands() {
    check(&[24, 16, 3], 4, StepOptimizer::Adam(Adam::new(1e-2)), true);
}

/// More classes than a forward task's 32 columns: the softmax takes a phase of its own.
#[test]
fn wide_logits() {
    check(
        &[12, 10, 40],
        3,
        StepOptimizer::Adam(Adam::new(1e-2)),
        false,
    );
}

/// A first layer too large for one block per row (over 16,384 weights): its products spread
/// over the grid, the rest per row.
#[test]
fn a_large_first_layer() {
    check(
        &[300, 60, 5],
        4,
        StepOptimizer::Adam(Adam::new(1e-2)),
        false,
    );
}

/// Two large layers: the second's input gradients spread over the grid too.
#[test]
fn two_large_layers_with_sgd() {
    let sgd = StepOptimizer::Sgd {
        lr: 0.05,
        momentum: 0.9,
    };
    check(&[130, 130, 130, 4], 3, sgd, false);
}

/// A single large layer: no layer runs per row, the softmax does.
#[test]
fn one_large_layer() {
    check(&[1100, 16], 3, StepOptimizer::Adam(Adam::new(1e-2)), false);
}

/// A batch of more rows than a warp has lanes, and layers whose weight rows hold whole warps,
/// in both precisions, with each lane loading its inputs and with a warp sharing them by
/// shuffles (the GPU's path).
#[test]
fn a_batch_wider_than_a_warp() {
    // SGD with a large rate, so a gradient off by a little moves the parameters visibly
    // (Adam's step would not show a gradient scaled by a constant).
    let sgd = StepOptimizer::Sgd {
        lr: 2.0,
        momentum: 0.5,
    };
    for mixed in [false, true] {
        for shuffled in [false, true] {
            check_with(&[20, 64, 4], 40, sgd, mixed, shuffled);
        }
    }
}

#[test]
fn a_wide_hidden_layer() {
    let sgd = StepOptimizer::Sgd {
        lr: 0.05,
        momentum: 0.9,
    };
    check(&[6, 300, 3], 3, sgd, false);
}

#[test]
fn a_bad_model_is_an_error() {
    let stream = Gpu::cpu().default_stream();
    assert!(PackedModel::new(&stream, &[4], 2, &[]).is_err());
    assert!(PackedModel::new(&stream, &[4, 0, 2], 2, &[]).is_err());
    assert!(PackedModel::new(&stream, &[4, 3], 2, &[0.0; 3]).is_err());
}

#[test]
fn both_instantiations_compile_with_nvrtc() {
    if !gpu_dsl_runtime::test_nvrtc() {
        return;
    }
    for round in [0, 1] {
        let args = [gpu_dsl_runtime::TemplateArg::Const(round)];
        for arch in [(8, 0), (9, 0)] {
            gpu_dsl_runtime::check_with_nvrtc(
                gpu_dsl_kernels::mlp_step::KERNELS[0],
                &args,
                arch,
                false,
            )
            .unwrap();
        }
    }
}
