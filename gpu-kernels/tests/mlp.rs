//! The MLP step kernels on whichever backend exists, against straightforward Rust: gathering a
//! batch through a permutation, bias + ReLU, softmax cross-entropy and its gradient, the bias
//! gradients, and the Adam and SGD updates.

use gpu_dsl_kernels::mlp::{self, Adam, StepState};
use gpu_dsl_runtime::half::bf16;
use gpu_dsl_runtime::{test_device, DeviceBuffer, Error, Stream};

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

fn assert_close(found: &[f32], expected: &[f32], tolerance: f32, what: &str) {
    assert_eq!(found.len(), expected.len(), "{what}: length");
    for (i, (f, e)) in found.iter().zip(expected).enumerate() {
        assert!(
            (f - e).abs() <= tolerance * e.abs().max(1.0),
            "{what}[{i}]: found {f}, expected {e}"
        );
    }
}

fn upload<T: gpu_dsl_runtime::Scalar>(stream: &Stream, data: &[T]) -> DeviceBuffer<T> {
    DeviceBuffer::from_host(stream, data).unwrap()
}

#[test]
fn gather_follows_the_permutation_and_the_batch_counter() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for pixels in [4usize, 7] {
        let samples = 10;
        let images: Vec<f32> = (0..samples * pixels).map(|i| i as f32).collect();
        let labels: Vec<u32> = (0..samples as u32).map(|i| i % 3).collect();
        let perm: Vec<u32> = vec![9, 2, 5, 0, 7, 1, 3, 8, 6, 4];
        let batch = 3;
        let mut state = StepState::new(&stream).unwrap();
        state.set(&stream, 2, 0).unwrap();
        let mut bx = DeviceBuffer::zeroed(&stream, batch * pixels).unwrap();
        let mut by = DeviceBuffer::zeroed(&stream, batch).unwrap();
        let (images_d, labels_d, perm_d) = (
            upload(&stream, &images),
            upload(&stream, &labels),
            upload(&stream, &perm),
        );
        mlp::gather(
            &stream, &images_d, &labels_d, &perm_d, &state, &mut bx, &mut by,
        )
        .unwrap();
        let rows = &perm[6..9];
        let expected_x: Vec<f32> = rows
            .iter()
            .flat_map(|&r| images[r as usize * pixels..][..pixels].to_vec())
            .collect();
        let expected_y: Vec<u32> = rows.iter().map(|&r| labels[r as usize]).collect();
        assert_eq!(bx.to_host(&stream).unwrap(), expected_x, "pixels {pixels}");
        assert_eq!(by.to_host(&stream).unwrap(), expected_y, "pixels {pixels}");
        // Batch 3 would need perm[9..12]: past the end in checked mode is a reported panic on
        // either backend, so the wrapper only guards the static shapes.
        mlp::advance(&stream, &mut state).unwrap();
        assert_eq!(state.get(&stream).unwrap(), (3, 1));
    }
}

#[test]
fn bad_shapes_are_errors() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut z = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    let bias = DeviceBuffer::<f32>::zeroed(&stream, 3).unwrap();
    assert!(matches!(
        mlp::bias_relu(&stream, &mut z, &bias),
        Err(Error::InvalidLaunch(_))
    ));
    let grad = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let mut m = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    let mut v = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    let state = StepState::new(&stream).unwrap();
    assert!(matches!(
        mlp::adam(
            &stream,
            &Adam::new(1e-3),
            &mut z,
            &grad,
            &mut m,
            &mut v,
            &state
        ),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
fn bias_relu_bias_add_and_bf16_rounding() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (rows, cols) = (37, 13);
    let z = random_f32(rows * cols, 1);
    let bias = random_f32(cols, 2);
    let mut zd = upload(&stream, &z);
    let bd = upload(&stream, &bias);
    mlp::bias_relu(&stream, &mut zd, &bd).unwrap();
    let expected: Vec<f32> = z
        .iter()
        .enumerate()
        .map(|(i, v)| (v + bias[i % cols]).max(0.0))
        .collect();
    assert_eq!(zd.to_host(&stream).unwrap(), expected);
    let mut zd = upload(&stream, &z);
    let mut rounded = DeviceBuffer::zeroed(&stream, z.len()).unwrap();
    mlp::bias_relu_bf16(&stream, &mut zd, &bd, &mut rounded).unwrap();
    assert_eq!(zd.to_host(&stream).unwrap(), expected);
    let expected_bf16: Vec<bf16> = expected.iter().map(|&v| bf16::from_f32(v)).collect();
    assert_eq!(rounded.to_host(&stream).unwrap(), expected_bf16);
    let mut rounded_z = DeviceBuffer::zeroed(&stream, z.len()).unwrap();
    mlp::to_bf16(&stream, &upload(&stream, &z), &mut rounded_z).unwrap();
    let z_bf16: Vec<bf16> = z.iter().map(|&v| bf16::from_f32(v)).collect();
    assert_eq!(rounded_z.to_host(&stream).unwrap(), z_bf16);
    let mut zd = upload(&stream, &z);
    mlp::bias_add(&stream, &mut zd, &bd).unwrap();
    let expected: Vec<f32> = z
        .iter()
        .enumerate()
        .map(|(i, v)| v + bias[i % cols])
        .collect();
    assert_eq!(zd.to_host(&stream).unwrap(), expected);
}

/// Softmax cross-entropy of one row in f64: (loss, gradient of the loss, predicted class).
fn reference_row(logits: &[f32], bias: &[f32], label: usize) -> (f64, Vec<f64>, usize) {
    let z: Vec<f64> = logits
        .iter()
        .zip(bias)
        .map(|(a, b)| (a + b) as f64)
        .collect();
    let best = z.iter().cloned().fold(f64::MIN, f64::max);
    let predicted = z.iter().position(|&v| v == best).unwrap();
    let sum: f64 = z.iter().map(|v| (v - best).exp()).sum();
    let loss = sum.ln() - (z[label] - best);
    let grad = z
        .iter()
        .enumerate()
        .map(|(c, v)| (v - best).exp() / sum - if c == label { 1.0 } else { 0.0 })
        .collect();
    (loss, grad, predicted)
}

#[test]
fn softmax_cross_entropy_loss_gradient_and_accuracy() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    // 300 rows: more than the kernel's 256 threads, so some threads take two rows.
    for (rows, classes) in [(1usize, 10usize), (64, 10), (300, 7)] {
        let logits: Vec<f32> = random_f32(rows * classes, 3)
            .iter()
            .map(|v| v * 8.0)
            .collect();
        let bias = random_f32(classes, 4);
        let labels: Vec<u32> = (0..rows).map(|r| ((r * 7) % classes) as u32).collect();
        let mut state = StepState::new(&stream).unwrap();
        state.set(&stream, 1, 0).unwrap();
        let mut ld = upload(&stream, &logits);
        let mut losses = DeviceBuffer::<f32>::zeroed(&stream, 3).unwrap();
        let mut correct = DeviceBuffer::<u32>::zeroed(&stream, 3).unwrap();
        mlp::softmax_cross_entropy(
            &stream,
            &mut ld,
            &upload(&stream, &bias),
            &upload(&stream, &labels),
            &state,
            &mut losses,
            &mut correct,
        )
        .unwrap();
        let mut loss = 0.0;
        let mut right = 0;
        let mut grad = Vec::new();
        for r in 0..rows {
            let row = &logits[r * classes..][..classes];
            let (l, g, p) = reference_row(row, &bias, labels[r] as usize);
            loss += l;
            right += u32::from(p == labels[r] as usize);
            grad.extend(g.iter().map(|v| (v / rows as f64) as f32));
        }
        let losses = losses.to_host(&stream).unwrap();
        let correct = correct.to_host(&stream).unwrap();
        assert!(
            (losses[1] as f64 - loss / rows as f64).abs() < 1e-5 * (loss / rows as f64).max(1.0),
            "{rows}x{classes}: loss {} vs {}",
            losses[1],
            loss / rows as f64
        );
        assert_eq!(correct[1], right, "{rows}x{classes}");
        assert_eq!((losses[0], losses[2], correct[0]), (0.0, 0.0, 0));
        assert_close(&ld.to_host(&stream).unwrap(), &grad, 1e-5, "gradient");

        let mut row_losses = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let mut predicted = DeviceBuffer::<u32>::zeroed(&stream, rows).unwrap();
        mlp::classify_rows(
            &stream,
            &upload(&stream, &logits),
            &upload(&stream, &bias),
            &upload(&stream, &labels),
            &mut row_losses,
            &mut predicted,
        )
        .unwrap();
        let (row_losses, predicted) = (
            row_losses.to_host(&stream).unwrap(),
            predicted.to_host(&stream).unwrap(),
        );
        for r in 0..rows {
            let (l, _, p) =
                reference_row(&logits[r * classes..][..classes], &bias, labels[r] as usize);
            assert!(
                (row_losses[r] as f64 - l).abs() < 1e-4 * l.max(1.0),
                "row {r}"
            );
            assert_eq!(predicted[r] as usize, p, "row {r}");
        }
    }
}

#[test]
fn bias_gradients_sum_columns() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (rows, cols) = (300, 130);
    let dz = random_f32(rows * cols, 5);
    let a = random_f32(rows * cols, 6);
    // Each column in its lanes (every COLUMN_LANES-th row), then the lanes in order.
    let lanes = mlp::COLUMN_LANES;
    let column_sum = |m: &[f32]| -> Vec<f32> {
        (0..cols)
            .map(|c| {
                let lane = |l: usize| {
                    let rows = (l..rows).step_by(lanes);
                    rows.fold(0.0f32, |sum, r| sum + m[r * cols + c])
                };
                (0..lanes)
                    .map(lane)
                    .fold(0.0f32, |total, part| total + part)
            })
            .collect()
    };
    let mut grad = DeviceBuffer::<f32>::zeroed(&stream, cols).unwrap();
    mlp::bias_gradient(&stream, &upload(&stream, &dz), &mut grad).unwrap();
    assert_eq!(grad.to_host(&stream).unwrap(), column_sum(&dz));

    let masked: Vec<f32> = dz
        .iter()
        .zip(&a)
        .map(|(g, a)| if *a > 0.0 { *g } else { 0.0 })
        .collect();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, rows * cols).unwrap();
    mlp::relu_bias_backward(
        &stream,
        &upload(&stream, &dz),
        &upload(&stream, &a),
        &mut out,
        &mut grad,
    )
    .unwrap();
    assert_eq!(out.to_host(&stream).unwrap(), masked);
    assert_eq!(grad.to_host(&stream).unwrap(), column_sum(&masked));
}

#[test]
fn adam_and_sgd_match_the_reference_updates() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1001;
    let p0 = random_f32(n, 7);
    let hyper = Adam::new(1e-2);
    let (mut p, mut m, mut v) = (p0.clone(), vec![0.0f32; n], vec![0.0f32; n]);
    let mut pd = upload(&stream, &p0);
    let mut md = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut vd = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut state = StepState::new(&stream).unwrap();
    for t in 1..=3 {
        let g = random_f32(n, 10 + t);
        mlp::adam(
            &stream,
            &hyper,
            &mut pd,
            &upload(&stream, &g),
            &mut md,
            &mut vd,
            &state,
        )
        .unwrap();
        mlp::advance(&stream, &mut state).unwrap();
        let (b1, b2) = (hyper.beta1 as f64, hyper.beta2 as f64);
        for i in 0..n {
            let gi = g[i] as f64;
            let mi = b1 * m[i] as f64 + (1.0 - b1) * gi;
            let vi = b2 * v[i] as f64 + (1.0 - b2) * gi * gi;
            let mhat = mi / (1.0 - b1.powi(t as i32));
            let vhat = vi / (1.0 - b2.powi(t as i32));
            p[i] = (p[i] as f64 - hyper.lr as f64 * mhat / (vhat.sqrt() + hyper.eps as f64)) as f32;
            m[i] = mi as f32;
            v[i] = vi as f32;
        }
    }
    assert_close(&pd.to_host(&stream).unwrap(), &p, 1e-5, "adam param");
    assert_close(&md.to_host(&stream).unwrap(), &m, 1e-5, "adam m");

    let (mut p, mut vel) = (p0.clone(), vec![0.0f32; n]);
    let mut pd = upload(&stream, &p0);
    let mut veld = DeviceBuffer::zeroed(&stream, n).unwrap();
    for t in 0..3 {
        let g = random_f32(n, 20 + t);
        mlp::sgd(&stream, 0.1, 0.9, &mut pd, &upload(&stream, &g), &mut veld).unwrap();
        for i in 0..n {
            vel[i] = 0.9 * vel[i] + g[i];
            p[i] -= 0.1 * vel[i];
        }
    }
    assert_close(&pd.to_host(&stream).unwrap(), &p, 1e-6, "sgd param");
}

#[test]
fn the_mlp_kernels_are_listed_for_the_nvrtc_checks() {
    // tests/kernels.rs compiles everything `all_kernels` lists with NVRTC.
    let listed: Vec<&str> = gpu_dsl_kernels::all_kernels()
        .iter()
        .map(|k| k.name())
        .collect();
    for name in [
        "gather_batch",
        "softmax_xent",
        "adam_step",
        "relu_backward",
        "classify",
    ] {
        assert!(listed.contains(&name), "{name} missing from all_kernels()");
    }
}
