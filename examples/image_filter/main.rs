//! Blur, sharpen and edge detection of a photo, per channel, on the GPU and as plain host loops.
//!
//! `cargo run --release --example image_filter -- --help` — reads a PNG or JPEG (by default the
//! generated test image shipped beside this file), filters each channel with the library's
//! `stencil::convolve2d` (edges: the Sobel gradient's magnitude, with a kernel of this example),
//! writes `NAME_blur.png`, `NAME_sharpen.png` and `NAME_edges.png` next to `--out NAME.png`,
//! and times the device against the host loops, checking that both agree. `--synthetic
//! 3840x2160` filters a generated image of that size instead of a file; `--generate PATH` writes
//! the generated test image (`test.png` here was written by `--generate
//! examples/image_filter/test.png`). The CPU backend: `--cpu` or `GPU_BACKEND=cpu`; `--quick` times one
//! run of each instead of several.

mod filters;

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Backend;

use filters::{DevicePlanes, Filter, Planes};

/// Filters an image on the GPU and on the host, and checks that both agree.
#[derive(Debug, Parser)]
#[command(name = "image_filter")]
struct Args {
    /// The image to filter (PNG or JPEG); default: the test image shipped with the example.
    input: Option<PathBuf>,

    /// Where the results go: NAME.png gives NAME_blur.png, NAME_sharpen.png, NAME_edges.png.
    #[arg(
        long,
        value_name = "PNG",
        default_value = "out/image_filter/filtered.png"
    )]
    out: PathBuf,

    /// Filter a generated image of this size (WIDTHxHEIGHT) instead of reading one.
    #[arg(long, value_name = "WxH", value_parser = parse_size, conflicts_with = "input")]
    synthetic: Option<(u32, u32)>,

    /// Write the generated test image (of --size) to this path and exit.
    #[arg(long, value_name = "PNG")]
    generate: Option<PathBuf>,

    /// The size of the image --generate writes.
    #[arg(long, value_name = "WxH", value_parser = parse_size, default_value = "256x192")]
    size: (u32, u32),

    /// Timed runs of each filter on the device (the host loops run once).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,

    /// One timed run of each filter: a run of seconds on the CPU backend.
    #[arg(long)]
    quick: bool,

    /// Run on the CPU backend even when a GPU is present.
    #[arg(long)]
    cpu: bool,
}

/// The largest difference allowed between the device's and the host's values (0..=255 scale):
/// the GPU contracts `acc + w * x` into FMAs, which changes the last bits of each sum.
const TOLERANCE: f32 = 0.01;

/// The test image shipped with the example, written by `--generate` at the default size.
const TEST_IMAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/image_filter/test.png"
);

/// "WIDTHxHEIGHT" as two positive numbers.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parse = |s: &str| s.trim().parse::<u32>().ok().filter(|&v| v > 0);
    match text.split_once(['x', 'X']) {
        Some((w, h)) => match (parse(w), parse(h)) {
            (Some(w), Some(h)) => Ok((w, h)),
            _ => Err(format!(
                "{text}: write two positive numbers, e.g. 3840x2160"
            )),
        },
        None => Err(format!("{text}: write WIDTHxHEIGHT, e.g. 3840x2160")),
    }
}

fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(path) = &args.generate {
        let (w, h) = args.size;
        create_parent(path)?;
        filters::generate(w, h).save(path)?;
        println!(
            "wrote the generated {w}x{h} test image to {}",
            path.display()
        );
        return Ok(());
    }
    let (image, name) = match (args.synthetic, &args.input) {
        (Some((w, h)), _) => (filters::generate(w, h), format!("generated {w}x{h} image")),
        (None, input) => {
            let path = input.clone().unwrap_or_else(|| PathBuf::from(TEST_IMAGE));
            let image = image::open(&path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?
                .to_rgb8();
            (image, path.display().to_string())
        }
    };
    println!(
        "image: {name}, {}x{} pixels, 3 channels",
        image.width(),
        image.height()
    );

    let gpu = if args.cpu { Gpu::cpu() } else { Gpu::best()? };
    match gpu.backend() {
        Backend::Cuda => println!("device: {} (CUDA backend)", gpu.name()),
        Backend::Cpu => println!("device: CPU backend (--cpu, GPU_BACKEND=cpu or no usable GPU)"),
    }
    let reps = if args.quick { 1 } else { args.reps };
    let stream = gpu.default_stream();
    let planes = Planes::from_image(&image);
    let upload_start = Instant::now();
    let mut device = DevicePlanes::upload(&stream, &planes)?;
    stream.synchronize()?;
    println!(
        "upload of the 3 channels as f32: {:.3} ms",
        upload_start.elapsed().as_secs_f64() * 1e3
    );

    println!(
        "{:>8}  {:>12}  {:>12}  {:>15}  {:>8}  {:>13}",
        "filter", "device (ms)", "host (ms)", "device Mpixel/s", "speedup", "max |diff|"
    );
    let pixels = planes.width * planes.height;
    let mut worst = 0.0f32;
    for filter in Filter::ALL {
        // The first run compiles the kernels (or loads them from the disk cache): untimed.
        device.apply(&stream, filter)?;
        let start = stream.record_event()?;
        for _ in 0..reps {
            device.apply(&stream, filter)?;
        }
        let end = stream.record_event()?;
        let device_ms = f64::from(start.elapsed_ms(&end)?) / f64::from(reps);
        let result = device.download(&stream)?;

        let host_start = Instant::now();
        let reference = filters::apply_host(&planes, filter);
        let host_ms = host_start.elapsed().as_secs_f64() * 1e3;

        let diff = result.max_abs_diff(&reference);
        worst = worst.max(diff);
        println!(
            "{:>8}  {device_ms:>12.3}  {host_ms:>12.3}  {:>15.1}  {:>7.1}x  {diff:>13.2e}",
            filter.name(),
            pixels as f64 / (device_ms * 1e3),
            host_ms / device_ms
        );
        let path = output_path(&args.out, filter);
        create_parent(&path)?;
        result.to_image().save(&path)?;
    }
    println!(
        "device times are the mean of {reps} run(s) of the 3 channels, by events; host times one \
         run of plain loops on one thread; speedup = host / device"
    );
    println!(
        "wrote {}, {}, {}",
        output_path(&args.out, Filter::Blur).display(),
        output_path(&args.out, Filter::Sharpen).display(),
        output_path(&args.out, Filter::Edges).display()
    );
    if worst > TOLERANCE {
        return Err(format!(
            "the device's result differs from the host's by {worst} (more than {TOLERANCE})"
        )
        .into());
    }
    println!("ok: the device and the host agree within {TOLERANCE} (values 0 to 255)");
    Ok(())
}

/// `dir/NAME.png` → `dir/NAME_FILTER.png`, in the format of the output's extension.
fn output_path(out: &Path, filter: Filter) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or("filtered".into(), |s| s.to_string_lossy());
    let extension = out
        .extension()
        .map_or("png".into(), |e| e.to_string_lossy());
    out.with_file_name(format!("{stem}_{}.{extension}", filter.name()))
}

/// Creates the folder a file goes into.
fn create_parent(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    }
}
