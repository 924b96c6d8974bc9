//! Benchmarks of the library kernels against a reference measured in the same run: a device-copy
//! kernel (16-byte loads and stores) for the bandwidth-bound ones, cuBLAS for GEMM, and for the
//! host time of a launch, the same kernel launched through cudarc directly; for classic CUDA
//! programs ported to `#[kernel]` (`ports.rs` to `ports21.rs`), the same algorithm written in
//! CUDA C. Times are CUDA-event medians after a warm-up; bandwidth counts bytes read plus bytes
//! written, as the copy does; GEMM throughput counts 2·m·n·k floating-point operations.
//!
//! `cargo run --release --example bench [OUT.json] [--only WORD]...` — prints a table and writes
//! it as JSON (default `bench.json`); with `--only`, just the workloads whose names contain one
//! of the words (the copy reference is always measured).

mod port_kernels;
mod port_kernels10;
mod port_kernels11;
mod port_kernels12;
mod port_kernels13;
mod port_kernels14;
mod port_kernels15;
mod port_kernels16;
mod port_kernels17;
mod port_kernels18;
mod port_kernels19;
mod port_kernels2;
mod port_kernels20;
mod port_kernels21;
mod port_kernels3;
mod port_kernels4;
mod port_kernels5;
mod port_kernels6;
mod port_kernels7;
mod port_kernels8;
mod port_kernels9;
mod ports;
mod ports10;
mod ports11;
mod ports12;
mod ports13;
mod ports14;
mod ports15;
mod ports16;
mod ports17;
mod ports18;
mod ports19;
mod ports2;
mod ports20;
mod ports21;
mod ports3;
mod ports4;
mod ports5;
mod ports6;
mod ports7;
mod ports8;
mod ports9;
mod shapes;

use gpu_dsl::kernels::gemm::{self, Gemm, GemmInput};
use gpu_dsl::kernels::{map, reduce, scan, stencil};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::blas::{Blas, GemmShape};
use gpu_dsl::runtime::Scalar;

#[kernel]
fn copy_f32(x: &[f32], y: &mut [f32]) {
    let vectors = y.len() / 4;
    for v in (global_idx().x..vectors).step_by(grid_size().x) {
        let values = x.load4(v * 4);
        y.store4(v * 4, values);
    }
    for i in (vectors * 4 + global_idx().x..y.len()).step_by(grid_size().x) {
        y[i] = x[i];
    }
}

/// The smallest useful launch: one scalar and one slice, one block.
#[kernel]
fn launch_probe(a: f32, y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] *= a;
    }
}

/// Host microseconds per launch of `launch_probe` (unchecked) through `Stream::launch`, and
/// through cudarc directly. Launches are timed in batches of 256, with the GPU drained between
/// batches and not timed: more launches in flight than the driver queues would make the host
/// wait for the GPU and time the kernels instead. The two alternate batch by batch, and each
/// keeps its median of 60 batches.
fn launch_row(stream: &Stream) -> gpu_dsl::Result<Row> {
    const BATCH: u32 = 256;
    let mut y = DeviceBuffer::<f32>::zeroed(stream, 32)?;
    let config = LaunchConfig::new(Grid::x(1), Block::x(32)).checked(false);
    let mut ours = Vec::new();
    let mut raw = Vec::new();
    for round in 0..64 {
        let start = std::time::Instant::now();
        for _ in 0..BATCH {
            launch_probe::launch(stream, config, 1.0, &mut y)?;
        }
        let ours_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(BATCH);
        stream.synchronize()?;
        let raw_time = gpu_dsl::runtime::__bench::raw_cudarc_launches(
            stream,
            &launch_probe::KERNEL,
            config,
            1.0,
            &mut y,
            BATCH,
        )?;
        stream.synchronize()?;
        // The first rounds warm both paths up.
        if round >= 4 {
            ours.push(ours_us);
            raw.push(raw_time.as_secs_f64() * 1e6 / f64::from(BATCH));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (ours, raw) = (median(&mut ours), median(&mut raw));
    println!(
        "launch host time: {ours:.2} µs per launch, raw cudarc {raw:.2} µs: {:.3} x raw",
        ours / raw
    );
    Ok(Row {
        workload: "launch (host)".into(),
        size: "1 scalar, 1 slice".into(),
        ms: ours * 1e-3,
        rate: 1.0 / ours,
        unit: "M/s",
        reference: "raw cudarc launch",
        reference_rate: Some(1.0 / raw),
    })
}

/// Which workloads to measure: all, or those whose name contains one of the `--only` words.
struct Only(Vec<String>);

impl Only {
    /// Whether `workload` is to be measured.
    fn wants(&self, workload: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|word| workload.contains(word.as_str()))
    }
}

/// Median milliseconds of `runs` launches after `warmup` more.
fn median_ms(
    stream: &Stream,
    mut launch: impl FnMut() -> gpu_dsl::Result<()>,
) -> gpu_dsl::Result<f64> {
    Ok(interleaved_ms(stream, &[()], |()| launch())?[0])
}

/// Median milliseconds of each of `configs` (run by `run`), 25 timed rounds after 5 untimed
/// ones, every round running each configuration once, so that clock and cache warm-up treat
/// every configuration alike.
fn interleaved_ms<C: Copy>(
    stream: &Stream,
    configs: &[C],
    mut run: impl FnMut(C) -> gpu_dsl::Result<()>,
) -> gpu_dsl::Result<Vec<f64>> {
    let (warmup, runs) = (5, 25);
    for _ in 0..warmup {
        for &config in configs {
            run(config)?;
        }
    }
    stream.synchronize()?;
    let mut times = vec![Vec::with_capacity(runs); configs.len()];
    for _ in 0..runs {
        for (i, &config) in configs.iter().enumerate() {
            let start = stream.record_event()?;
            run(config)?;
            let end = stream.record_event()?;
            times[i].push(start.elapsed_ms(&end)? as f64);
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[runs / 2]
        })
        .collect())
}

/// Median milliseconds of an inclusive or exclusive sum scan of `x`.
fn scan_ms<T: scan::ScanIdentity>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    kind: scan::ScanKind,
) -> gpu_dsl::Result<f64> {
    let mut y = DeviceBuffer::zeroed(stream, x.len())?;
    let mut scratch = scan::ScanScratch::new(stream, x.len())?;
    median_ms(stream, || {
        scan::scan(stream, x, &mut y, scan::ScanOp::Sum, kind, &mut scratch)
    })
}

/// One line of the table: a workload's rate and the rate of its reference in the same run.
struct Row {
    workload: String,
    size: String,
    ms: f64,
    /// Throughput in `unit`.
    rate: f64,
    unit: &'static str,
    /// What the row is compared with.
    reference: &'static str,
    /// The reference's throughput in `unit`, when it could be measured.
    reference_rate: Option<f64>,
}

/// A row for a bandwidth-bound kernel, against the device copy.
fn bandwidth_row(workload: &str, size: &str, ms: f64, gbps: f64, copy_gbps: f64) -> Row {
    Row {
        workload: workload.into(),
        size: size.into(),
        ms,
        rate: gbps,
        unit: "GB/s",
        reference: "device copy",
        reference_rate: Some(copy_gbps),
    }
}

/// Deterministic inputs in [-1, 1), converted to the input type.
fn gemm_input<T: Scalar>(n: usize, seed: usize, convert: fn(f32) -> T) -> Vec<T> {
    (0..n)
        .map(|i| convert((((i + seed) * 7919) % 2001) as f32 * 1e-3 - 1.0))
        .collect()
}

/// The cuBLAS call a GEMM row is compared with: [`Blas::sgemm_row_major`] for f32,
/// [`Blas::gemm_tf32_row_major`] for f32 with TF32 allowed, [`Blas::gemm_ex_row_major`] (f32
/// accumulation) for the 16-bit types.
type BlasGemm<T> = fn(
    &Blas,
    &GemmShape,
    &DeviceBuffer<T>,
    &DeviceBuffer<T>,
    &mut DeviceBuffer<f32>,
) -> gpu_dsl::Result<()>;

/// Times `gemm` for `spec` on inputs converted by `convert` and, when `blas` is there, the
/// cuBLAS `reference` on the same buffers, and checks that the two agree.
fn gemm_row<T: GemmInput>(
    stream: &Stream,
    only: &Only,
    blas: Option<&Blas>,
    spec: &Gemm,
    convert: fn(f32) -> T,
    reference_gemm: BlasGemm<T>,
) -> Result<Option<Row>, Box<dyn std::error::Error>> {
    let transposes = match (spec.trans_a, spec.trans_b) {
        (gemm::Transpose::No, gemm::Transpose::No) => "",
        (gemm::Transpose::Yes, gemm::Transpose::No) => " (Aᵀ)",
        (gemm::Transpose::No, gemm::Transpose::Yes) => " (Bᵀ)",
        (gemm::Transpose::Yes, gemm::Transpose::Yes) => " (AᵀBᵀ)",
    };
    let input = if spec.tf32 {
        "tf32".to_string()
    } else {
        T::TYPE.to_string()
    };
    let workload = format!("gemm {input}{transposes}");
    if !only.wants(&workload) {
        return Ok(None);
    }
    let a = DeviceBuffer::from_host(stream, &gemm_input(spec.m * spec.k, 1, convert))?;
    let b = DeviceBuffer::from_host(stream, &gemm_input(spec.k * spec.n, 2, convert))?;
    let mut c = DeviceBuffer::zeroed(stream, spec.m * spec.n)?;
    let ms = median_ms(stream, || gemm::gemm(stream, spec, &a, &b, &mut c))?;
    let tflops = |ms: f64| spec.flops() / (ms * 1e-3) / 1e12;
    let mut reference_rate = None;
    if let Some(blas) = blas {
        let shape = spec.into();
        let mut reference = DeviceBuffer::zeroed(stream, spec.m * spec.n)?;
        let reference_ms = median_ms(stream, || {
            reference_gemm(blas, &shape, &a, &b, &mut reference)
        })?;
        reference_rate = Some(tflops(reference_ms));
        let (ours, theirs) = (c.to_host(stream)?, reference.to_host(stream)?);
        let scale = theirs.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-30);
        let diff = ours
            .iter()
            .zip(&theirs)
            .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
        // TF32 truncates (ours) or rounds (cuBLAS may) each input to 10 mantissa bits: the
        // two differ by about 2^-11 of C, where f32 results differ far less.
        let tolerance = if spec.tf32 { 4e-3 } else { 1e-3 };
        if diff > tolerance * scale {
            eprintln!(
                "warning: gemm {}x{}x{} differs from cuBLAS by {diff:e} (largest |C| {scale:e})",
                spec.m, spec.n, spec.k
            );
        }
    }
    let size = if spec.m == spec.n && spec.n == spec.k {
        format!("{}^3", spec.m)
    } else {
        format!("{}x{}x{}", spec.m, spec.n, spec.k)
    };
    Ok(Some(Row {
        workload,
        size,
        ms,
        rate: tflops(ms),
        unit: "TFLOP/s",
        reference: "cuBLAS",
        reference_rate,
    }))
}

/// The GEMM rows: square f32 sizes and the MNIST MLP's shapes (batch 64) on a GPU, one small
/// size on the CPU backend. cuBLAS is the reference where it loads.
fn gemm_rows(
    stream: &Stream,
    on_gpu: bool,
    only: &Only,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let blas = if on_gpu {
        match Blas::new(stream) {
            Ok(blas) => Some(blas),
            Err(error) => {
                println!("no cuBLAS reference for GEMM: {error}");
                None
            }
        }
    } else {
        None
    };
    let blas = blas.as_ref();
    let sgemm: BlasGemm<f32> = Blas::sgemm_row_major;
    let mut rows = Vec::new();
    if !on_gpu {
        rows.extend(gemm_row(
            stream,
            only,
            blas,
            &Gemm::new(64, 64, 64),
            |x| x,
            sgemm,
        )?);
        return Ok(rows);
    }
    for n in [1024, 2048, 4096] {
        rows.extend(gemm_row(
            stream,
            only,
            blas,
            &Gemm::new(n, n, n),
            |x| x,
            sgemm,
        )?);
    }
    let n = 4096;
    for spec in [
        Gemm::new(n, n, n).trans_a(),
        Gemm::new(n, n, n).trans_b(),
        Gemm::new(n, n, n).trans_a().trans_b(),
    ] {
        rows.extend(gemm_row(stream, only, blas, &spec, |x| x, sgemm)?);
    }
    // 16-bit inputs on the tensor cores, f32 accumulation and output (cublasGemmEx alike).
    let hgemm: BlasGemm<f16> = Blas::gemm_ex_row_major;
    let bgemm: BlasGemm<bf16> = Blas::gemm_ex_row_major;
    for n in [4096, 8192] {
        let spec = Gemm::new(n, n, n);
        rows.extend(gemm_row(stream, only, blas, &spec, f16::from_f32, hgemm)?);
        rows.extend(gemm_row(stream, only, blas, &spec, bf16::from_f32, bgemm)?);
    }
    // f32 inputs read as TF32 on the tensor cores (the opt-in `allow_tf32`), against cuBLAS
    // allowed the same (CUBLAS_COMPUTE_32F_FAST_TF32). At 8192³ also B stored n×k (both
    // operands K-major, copied by cp.async) and A stored k×m (both transposed by the producer):
    // beside the plain row (B alone transposed) they show what the transposing producer costs.
    let tf32: BlasGemm<f32> = Blas::gemm_tf32_row_major;
    let n = 8192;
    for spec in [
        Gemm::new(4096, 4096, 4096),
        Gemm::new(n, n, n),
        Gemm::new(n, n, n).trans_b(),
        Gemm::new(n, n, n).trans_a(),
    ] {
        rows.extend(gemm_row(
            stream,
            only,
            blas,
            &spec.allow_tf32(),
            |x| x,
            tf32,
        )?);
    }
    // One training step of the MLP: forward, then the weight and input gradients.
    for spec in [
        Gemm::new(64, 128, 784),
        Gemm::new(64, 10, 128),
        Gemm::new(784, 128, 64).trans_a(),
        Gemm::new(64, 128, 10).trans_b(),
    ] {
        rows.extend(gemm_row(stream, only, blas, &spec, |x| x, sgemm)?);
    }
    Ok(rows)
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut out_path = "bench.json".to_string();
    let mut only = Only(Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--only" {
            only.0
                .push(args.next().ok_or("--only needs a word, e.g. --only scan")?);
        } else {
            out_path = arg;
        }
    }
    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();
    let on_gpu = gpu.backend() == gpu_dsl::runtime::Backend::Cuda;
    let sizes: &[usize] = if on_gpu {
        &[1 << 20, 1 << 24, 1 << 26, 1 << 28]
    } else {
        &[1 << 16, 1 << 20]
    };
    let mut rows = Vec::new();
    for &n in sizes {
        let host: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &host)?;
        let mut y = DeviceBuffer::from_host(&stream, &host)?;
        let config = map::grid_stride_config(&stream, n / 4 + 1);
        let copy_ms = median_ms(&stream, || copy_f32::launch(&stream, config, &x, &mut y))?;
        let bytes = |b: f64| b * n as f64;
        let gbps = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e9;
        let copy_gbps = gbps(bytes(8.0), copy_ms);
        let size = format!("2^{}", n.trailing_zeros());
        rows.push(bandwidth_row(
            "copy (reference)",
            &size,
            copy_ms,
            copy_gbps,
            copy_gbps,
        ));

        if only.wants("saxpy f32") {
            let saxpy_ms = median_ms(&stream, || map::axpy(&stream, 2.0, &x, &mut y))?;
            rows.push(bandwidth_row(
                "saxpy f32",
                &size,
                saxpy_ms,
                gbps(bytes(12.0), saxpy_ms),
                copy_gbps,
            ));
        }
        let mut total = DeviceBuffer::zeroed(&stream, 1)?;
        let mut scratch = reduce::ReduceScratch::<f32>::new(&stream)?;
        if only.wants("reduce sum f32") {
            let sum_ms = median_ms(&stream, || {
                reduce::reduce_into(&stream, &x, reduce::ReduceOp::Sum, &mut total, &mut scratch)
            })?;
            // A reduction reads each element once and writes nothing of note.
            rows.push(bandwidth_row(
                "reduce sum f32",
                &size,
                sum_ms,
                gbps(bytes(4.0), sum_ms),
                copy_gbps,
            ));
        }
        if only.wants("reduce sum f16") {
            // 16-bit inputs summed in f32: half the bytes of f32 for the same count.
            let host_h: Vec<f16> = host.iter().map(|&v| f16::from_f32(v)).collect();
            let xh = DeviceBuffer::from_host(&stream, &host_h)?;
            let sum_h_ms = median_ms(&stream, || {
                reduce::sum_f16_into(&stream, &xh, &mut total, &mut scratch)
            })?;
            rows.push(bandwidth_row(
                "reduce sum f16",
                &size,
                sum_h_ms,
                gbps(bytes(2.0), sum_h_ms),
                copy_gbps,
            ));
            drop(xh);
        }
        if only.wants("reduce sum bf16") {
            let host_b: Vec<bf16> = host.iter().map(|&v| bf16::from_f32(v)).collect();
            let xb = DeviceBuffer::from_host(&stream, &host_b)?;
            let sum_b_ms = median_ms(&stream, || {
                reduce::sum_bf16_into(&stream, &xb, &mut total, &mut scratch)
            })?;
            rows.push(bandwidth_row(
                "reduce sum bf16",
                &size,
                sum_b_ms,
                gbps(bytes(2.0), sum_b_ms),
                copy_gbps,
            ));
            drop(xb);
        }
        // A scan reads and writes each element once, as the copy does.
        let mut scan_row = |workload: &str, ms: f64, element_bytes: f64| {
            let rate = gbps(bytes(2.0 * element_bytes), ms);
            rows.push(bandwidth_row(workload, &size, ms, rate, copy_gbps));
        };
        if only.wants("scan sum f32") {
            let ms = scan_ms(&stream, &x, scan::ScanKind::Inclusive)?;
            scan_row("scan sum f32", ms, 4.0);
        }
        if only.wants("scan sum i32 (excl.)") {
            let xi: Vec<i32> = (0..n as i32).map(|i| i % 1000 - 500).collect();
            let xi = DeviceBuffer::from_host(&stream, &xi)?;
            let ms = scan_ms(&stream, &xi, scan::ScanKind::Exclusive)?;
            scan_row("scan sum i32 (excl.)", ms, 4.0);
        }
        if only.wants("scan sum f64") {
            let wide: Vec<f64> = host.iter().map(|&v| f64::from(v)).collect();
            let wide = DeviceBuffer::from_host(&stream, &wide)?;
            let ms = scan_ms(&stream, &wide, scan::ScanKind::Inclusive)?;
            scan_row("scan sum f64", ms, 8.0);
        }

        if only.wants("jacobi 5-point f32") {
            // A square image of n pixels (n is a power of 4 here, or the nearest below).
            let side = 1usize << (n.trailing_zeros() / 2);
            let image = DeviceBuffer::from_host(&stream, &host[..side * side])?;
            let mut next = DeviceBuffer::zeroed(&stream, side * side)?;
            let jacobi_ms = median_ms(&stream, || {
                stencil::jacobi5(
                    &stream,
                    &image,
                    side,
                    side,
                    stencil::Boundary::Clamp,
                    &mut next,
                )
            })?;
            rows.push(bandwidth_row(
                "jacobi 5-point f32",
                &format!("{side}^2"),
                jacobi_ms,
                gbps(8.0 * (side * side) as f64, jacobi_ms),
                copy_gbps,
            ));
        }
    }

    rows.extend(gemm_rows(&stream, on_gpu, &only)?);
    if on_gpu {
        rows.extend(ports::rows(&stream, &only)?);
        rows.extend(ports2::rows(&stream, &only)?);
        rows.extend(ports3::rows(&stream, &only)?);
        rows.extend(ports4::rows(&stream, &only)?);
        rows.extend(ports5::rows(&stream, &only)?);
        rows.extend(ports6::rows(&stream, &only)?);
        rows.extend(ports7::rows(&stream, &only)?);
        rows.extend(ports8::rows(&stream, &only)?);
        rows.extend(ports9::rows(&stream, &only)?);
        rows.extend(ports10::rows(&stream, &only)?);
        rows.extend(ports11::rows(&stream, &only)?);
        rows.extend(ports12::rows(&stream, &only)?);
        rows.extend(ports13::rows(&stream, &only)?);
        rows.extend(ports14::rows(&stream, &only)?);
        rows.extend(ports15::rows(&stream, &only)?);
        rows.extend(ports16::rows(&stream, &only)?);
        rows.extend(ports17::rows(&stream, &only)?);
        rows.extend(ports18::rows(&stream, &only)?);
        rows.extend(ports19::rows(&stream, &only)?);
        rows.extend(ports20::rows(&stream, &only)?);
        rows.extend(ports21::rows(&stream, &only)?);
        if only.wants("gemm shape") {
            rows.extend(shapes::rows(&stream)?);
        }
    }
    if on_gpu && only.wants("launch") {
        rows.push(launch_row(&stream)?);
    }

    println!(
        "{:<22} {:>12} {:>10} {:>10} {:<8} {:>10} {:>7}  reference",
        "workload", "size", "ms", "rate", "unit", "ref. rate", "ratio"
    );
    let mut json = String::from("[\n");
    for (i, row) in rows.iter().enumerate() {
        let ratio = row.reference_rate.map(|r| row.rate / r);
        let or_dash =
            |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        let or_null = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v:.4}"));
        println!(
            "{:<22} {:>12} {:>10.4} {:>10.1} {:<8} {:>10} {:>7}  {}",
            row.workload,
            row.size,
            row.ms,
            row.rate,
            row.unit,
            or_dash(row.reference_rate, 1),
            or_dash(ratio, 3),
            row.reference
        );
        json.push_str(&format!(
            "  {{\"workload\": \"{}\", \"size\": \"{}\", \"ms\": {:.6}, \"rate\": {:.4}, \"unit\": \"{}\", \"reference\": \"{}\", \"reference_rate\": {}, \"ratio\": {}}}{}\n",
            row.workload,
            row.size,
            row.ms,
            row.rate,
            row.unit,
            row.reference,
            or_null(row.reference_rate),
            or_null(ratio),
            if i + 1 < rows.len() { "," } else { "" }
        ));
    }
    json.push_str("]\n");
    std::fs::write(&out_path, json)?;
    println!("wrote {out_path}");
    Ok(())
}
