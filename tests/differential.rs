//! Differential tests: the same kernels on the CUDA device and on the CPU backend, with inputs
//! drawn by proptest. Integers must agree exactly; floats within 2 ulp-scaled relative error
//! (`FLOAT_TOLERANCE`), since the GPU contracts `a * b + c` into one FMA and its libm differs in
//! the last bits. Needs a GPU: without one, each test says it is skipped.

mod common;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_gpu;
use proptest::prelude::*;

/// Relative tolerance for f32 results: a few ulp.
const FLOAT_TOLERANCE: f32 = 4.0 * f32::EPSILON;

#[kernel]
fn axpb(a: f32, b: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        y[i] = a * x[i] + b;
    }
}

#[kernel]
fn int_ops(x: &[i32], y: &[i32], out: &mut [i32]) {
    let i = global_idx().x;
    if i < x.len() {
        let d = if y[i] == 0 { 1 } else { y[i] };
        out[i] = x[i].wrapping_mul(y[i])
            ^ (x[i] << (y[i] as u32 % 40))
            ^ (x[i] / d)
            ^ (x[i] % d)
            ^ -x[i];
    }
}

/// Both saturating casts in one word: any difference in either shows.
#[kernel]
fn float_casts(x: &[f64], out: &mut [i64]) {
    let i = global_idx().x;
    if i < x.len() {
        out[i] = (x[i] as i64) ^ (((x[i] as f32) as u32) as i64) << 1;
    }
}

#[kernel]
fn block_sums(x: &[i64], out: &mut [i64]) {
    let partial = shared_array::<i64, 128>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    partial[t] = if i < x.len() { x[i] } else { 0 };
    sync_threads();
    let mut stride = 64usize;
    while stride > 0 {
        if t < stride {
            partial[t] = partial[t].wrapping_add(partial[t + stride]);
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = partial[0];
    }
}

#[test]
fn kernels_compile_with_nvrtc() {
    common::assert_compiles_with_nvrtc(&[
        (&axpb::KERNEL, &[]),
        (&int_ops::KERNEL, &[]),
        (&float_casts::KERNEL, &[]),
        (&block_sums::KERNEL, &[]),
    ]);
}

/// Runs `launch` on both backends with the same inputs and returns both outputs.
fn on_both<T: gpu_dsl::runtime::Scalar>(
    gpu: &Gpu,
    outputs: usize,
    launch: impl Fn(&Stream, &mut DeviceBuffer<T>) -> gpu_dsl::Result<()>,
) -> (Vec<T>, Vec<T>) {
    let run = |device: &Gpu| {
        let stream = device.default_stream();
        let mut out = DeviceBuffer::zeroed(&stream, outputs).unwrap();
        launch(&stream, &mut out).unwrap();
        out.to_host(&stream).unwrap()
    };
    (run(gpu), run(&Gpu::cpu()))
}

fn config() -> ProptestConfig {
    // Each case launches on the GPU and the CPU: a handful covers the shapes.
    ProptestConfig::with_cases(24)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn floats_agree(a in -1e3f32..1e3, b in -1e3f32..1e3, x in prop::collection::vec(-1e4f32..1e4, 1..3000)) {
        let Some(gpu) = test_gpu() else { return Ok(()) };
        let n = x.len();
        let (g, c) = on_both(&gpu, n, |stream, y| {
            let xb = DeviceBuffer::from_host(stream, &x)?;
            axpb::launch(stream, LaunchConfig::for_len(n, 128), a, b, &xb, y)
        });
        for i in 0..n {
            let scale = (a * x[i]).abs().max(b.abs()).max(1.0);
            prop_assert!((g[i] - c[i]).abs() <= FLOAT_TOLERANCE * scale, "i={i}: gpu {} cpu {}", g[i], c[i]);
        }
    }

    #[test]
    fn integers_agree_exactly(x in prop::collection::vec(any::<i32>(), 1..2000), seed in any::<i32>()) {
        let Some(gpu) = test_gpu() else { return Ok(()) };
        let n = x.len();
        let y: Vec<i32> = x.iter().map(|v| v.rotate_left(7) ^ seed).collect();
        let (g, c) = on_both(&gpu, n, |stream, out| {
            let xb = DeviceBuffer::from_host(stream, &x)?;
            let yb = DeviceBuffer::from_host(stream, &y)?;
            int_ops::launch(stream, LaunchConfig::for_len(n, 64).checked(false), &xb, &yb, out)
        });
        prop_assert_eq!(g, c);
    }

    #[test]
    fn saturating_casts_agree(x in prop::collection::vec(prop_oneof![any::<f64>(), -1e20f64..1e20], 1..1000)) {
        let Some(gpu) = test_gpu() else { return Ok(()) };
        let n = x.len();
        let (g, c) = on_both(&gpu, n, |stream, out| {
            let xb = DeviceBuffer::from_host(stream, &x)?;
            float_casts::launch(stream, LaunchConfig::for_len(n, 64), &xb, out)
        });
        prop_assert_eq!(g, c);
    }

    #[test]
    fn barrier_reductions_agree(x in prop::collection::vec(any::<i64>(), 1..5000)) {
        let Some(gpu) = test_gpu() else { return Ok(()) };
        let blocks = x.len().div_ceil(128);
        let (g, c) = on_both(&gpu, blocks, |stream, out| {
            let xb = DeviceBuffer::from_host(stream, &x)?;
            block_sums::launch(stream, LaunchConfig::for_len(x.len(), 128), &xb, out)
        });
        prop_assert_eq!(g, c);
    }
}
