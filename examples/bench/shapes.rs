//! How well the GEMM's shape-based choice of configuration does: for each shape, every
//! configuration is timed, and the row shows the chosen one's time against the best one's.
//!
//! f32 runs on one of four SIMT configurations (128×128, 64×64 or 32×32 tiles of C per block,
//! or 32×32 with k split across blocks); f16 on `wgmma` or `mma.sync`.

use gpu_dsl::kernels::gemm::tensor_core::{self, Instructions};
use gpu_dsl::kernels::gemm::{self, Gemm, Tiles};
use gpu_dsl::prelude::*;

use crate::{gemm_input, interleaved_ms, Row};

/// The f32 shapes: square powers of two and odd sizes, an MLP's batch-64 products, and skinny
/// ones (one dimension small, or k short or long).
fn f32_shapes() -> Vec<Gemm> {
    vec![
        Gemm::new(4096, 4096, 4096),
        Gemm::new(2048, 2048, 2048),
        Gemm::new(1024, 1024, 1024),
        Gemm::new(512, 512, 512),
        Gemm::new(1000, 1000, 1000),
        Gemm::new(4097, 4095, 1023),
        Gemm::new(127, 129, 4096),
        Gemm::new(64, 128, 784),
        Gemm::new(784, 128, 64).trans_a(),
        Gemm::new(64, 784, 128).trans_b(),
        Gemm::new(8192, 64, 8192),
        Gemm::new(64, 8192, 8192),
        Gemm::new(32, 32, 65536),
        Gemm::new(8192, 8192, 64),
        Gemm::new(3000, 50, 2000),
    ]
}

/// The f16 shapes.
fn f16_shapes() -> Vec<Gemm> {
    vec![
        Gemm::new(4096, 4096, 4096),
        Gemm::new(1024, 1024, 1024),
        Gemm::new(1000, 1000, 1000),
        Gemm::new(4096, 64, 4096),
        Gemm::new(256, 256, 8192),
        Gemm::new(8192, 8192, 64),
    ]
}

fn size(spec: &Gemm) -> String {
    let t = |yes: bool, s: &'static str| if yes { s } else { "" };
    format!(
        "{}x{}x{}{}{}",
        spec.m,
        spec.n,
        spec.k,
        t(spec.trans_a == gemm::Transpose::Yes, " Aᵀ"),
        t(spec.trans_b == gemm::Transpose::Yes, " Bᵀ")
    )
}

/// The row of one shape: the chosen configuration's rate against the best configuration's.
fn shape_row(workload: &str, spec: &Gemm, chosen_ms: f64, timed: &[(&str, f64)]) -> Row {
    let (best, best_ms) = timed
        .iter()
        .copied()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or(("-", chosen_ms));
    let rates: Vec<String> = timed
        .iter()
        .map(|(name, ms)| format!("{name} {:.1}", spec.flops() / (ms * 1e-3) / 1e12))
        .collect();
    println!(
        "{workload} {}: chosen {:.4} ms, best {best} {best_ms:.4} ms (TFLOP/s: {})",
        size(spec),
        chosen_ms,
        rates.join(", ")
    );
    let tflops = |ms: f64| spec.flops() / (ms * 1e-3) / 1e12;
    Row {
        workload: workload.into(),
        size: size(spec),
        ms: chosen_ms,
        rate: tflops(chosen_ms),
        unit: "TFLOP/s",
        reference: "best configuration",
        reference_rate: Some(tflops(best_ms)),
    }
}

/// One row per shape, f32 then f16.
pub fn rows(stream: &Stream) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let simt = [
        ("chosen", Tiles::Auto),
        ("128x128", Tiles::Large),
        ("64x64", Tiles::Medium),
        ("32x32", Tiles::Small),
        ("32x32 split-k", Tiles::SmallSplitK),
    ];
    for spec in f32_shapes() {
        let (a_len, b_len) = (spec.m * spec.k, spec.k * spec.n);
        let a = DeviceBuffer::from_host(stream, &gemm_input(a_len, 1, |x| x))?;
        let b = DeviceBuffer::from_host(stream, &gemm_input(b_len, 2, |x| x))?;
        let mut c = DeviceBuffer::zeroed(stream, spec.m * spec.n)?;
        let times = interleaved_ms(stream, &simt, |(_, tiles)| {
            gemm::gemm_f32_with_tiles(stream, &spec, &a, &b, &mut c, tiles)
        })?;
        let timed: Vec<(&str, f64)> = simt[1..]
            .iter()
            .map(|c| c.0)
            .zip(times[1..].iter().copied())
            .collect();
        rows.push(shape_row("gemm shape f32", &spec, times[0], &timed));
    }
    let tensor = [
        ("chosen", Instructions::Auto),
        ("wgmma", Instructions::Wgmma),
        ("mma", Instructions::MmaSync),
    ];
    for spec in f16_shapes() {
        let (a_len, b_len) = (spec.m * spec.k, spec.k * spec.n);
        let a = DeviceBuffer::from_host(stream, &gemm_input(a_len, 1, f16::from_f32))?;
        let b = DeviceBuffer::from_host(stream, &gemm_input(b_len, 2, f16::from_f32))?;
        let mut c = DeviceBuffer::zeroed(stream, spec.m * spec.n)?;
        let times = interleaved_ms(stream, &tensor, |(_, instructions)| {
            tensor_core::gemm_f16_on(stream, &spec, instructions, &a, &b, &mut c)
        })?;
        let timed: Vec<(&str, f64)> = tensor[1..]
            .iter()
            .map(|c| c.0)
            .zip(times[1..].iter().copied())
            .collect();
        rows.push(shape_row("gemm shape f16", &spec, times[0], &timed));
    }
    Ok(rows)
}
