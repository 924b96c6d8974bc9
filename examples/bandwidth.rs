//! Copy bandwidth between the host and the device, and within the device, from 1 MiB to 1 GiB.
//!
//! `cargo run --release --example bandwidth -- --help` — times host-to-device and
//! device-to-host copies from pageable memory (`copy_from_host`, `copy_to_host`, and `to_host`,
//! which also allocates the `Vec` it returns) and from page-locked memory (`copy_from_pinned`,
//! `copy_to_pinned`), and device-to-device copies (`copy_from`); prints a table of GB/s and the
//! device's theoretical memory bandwidth, and writes a PNG plot of GB/s against size.
//! `--quick` (or the CPU backend, with `--cpu` or `GPU_BACKEND=cpu`) runs a few small sizes.

use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Instant;

use clap::Parser;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Backend;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// Measures copy bandwidth host↔device and device↔device, pageable and pinned.
#[derive(Debug, Parser)]
#[command(name = "bandwidth")]
struct Args {
    /// Smallest copy, MiB (rounded down to a power of 2).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    min_mib: u64,

    /// Largest copy, MiB (rounded down to a power of 2).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    max_mib: u64,

    /// Copies timed per size and direction (default: enough to move about 2 GiB, 3 to 50).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    reps: Option<u32>,

    /// A run of seconds: 1, 4 and 16 MiB, 3 copies each (the default on the CPU backend).
    #[arg(long)]
    quick: bool,

    /// Run on the CPU backend even when a GPU is present.
    #[arg(long)]
    cpu: bool,

    /// Where to write the plot of GB/s against size.
    #[arg(long, value_name = "PNG", default_value = "bandwidth.png")]
    plot: PathBuf,
}

/// One column of the table: a copy and how it is timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `copy_from_host` from a `Vec` (pageable memory).
    HostToDevice,
    /// `copy_to_host` into a `Vec`.
    DeviceToHost,
    /// `to_host`: a new `Vec` per copy, so its allocation and first touch are counted.
    ToHostNewVec,
    /// `copy_from_pinned` from page-locked memory.
    PinnedToDevice,
    /// `copy_to_pinned` into page-locked memory.
    DeviceToPinned,
    /// `copy_from` between two device buffers.
    DeviceToDevice,
}

impl Kind {
    /// Every column, in table order.
    const ALL: [Kind; 6] = [
        Kind::HostToDevice,
        Kind::DeviceToHost,
        Kind::ToHostNewVec,
        Kind::PinnedToDevice,
        Kind::DeviceToPinned,
        Kind::DeviceToDevice,
    ];

    /// The column's heading and legend entry.
    fn label(self) -> &'static str {
        match self {
            Kind::HostToDevice => "H2D pageable",
            Kind::DeviceToHost => "D2H pageable",
            Kind::ToHostNewVec => "D2H to_host",
            Kind::PinnedToDevice => "H2D pinned",
            Kind::DeviceToPinned => "D2H pinned",
            Kind::DeviceToDevice => "D2D",
        }
    }

    /// The series colour in the plot.
    fn color(self) -> RGBColor {
        match self {
            Kind::HostToDevice => RGBColor(31, 119, 180),
            Kind::DeviceToHost => RGBColor(255, 127, 14),
            Kind::ToHostNewVec => RGBColor(140, 86, 75),
            Kind::PinnedToDevice => RGBColor(44, 160, 44),
            Kind::DeviceToPinned => RGBColor(214, 39, 40),
            Kind::DeviceToDevice => RGBColor(148, 103, 189),
        }
    }
}

/// GB/s of every copy at one size, in the order of [`Kind::ALL`].
struct Row {
    bytes: usize,
    gb_s: [f64; 6],
}

/// Elements of the buffers: 4-byte words, so every size here is a whole number of them.
type Word = u32;

const MIB: usize = 1 << 20;

fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = if args.cpu { Gpu::cpu() } else { Gpu::best()? };
    let info = gpu.info();
    let quick = args.quick || gpu.backend() == Backend::Cpu;
    match gpu.backend() {
        Backend::Cuda => println!("device: {} (CUDA backend)", gpu.name()),
        Backend::Cpu => println!(
            "device: CPU backend (--cpu, GPU_BACKEND=cpu or no usable GPU): every copy is a host \
             memory copy{}",
            if args.quick { "" } else { "; running --quick" }
        ),
    }
    match info.memory_bandwidth_gb_s() {
        Some(peak) => println!(
            "theoretical memory bandwidth: {peak:.0} GB/s (2 × {} MHz memory clock × {} bits)",
            info.memory_clock_rate_khz.unwrap_or(0) / 1000,
            info.memory_bus_width_bits.unwrap_or(0)
        ),
        None => println!("theoretical memory bandwidth: not reported by this device"),
    }

    let sizes = sizes(args, quick);
    let host_available = available_host_memory();
    let stream = gpu.default_stream();
    let mut rows = Vec::new();
    print_header();
    for bytes in sizes {
        if let Some(why) = does_not_fit(bytes, gpu.backend(), info.total_memory, host_available) {
            println!("{:>9}  skipped: {why}", size_label(bytes));
            continue;
        }
        let reps = args.reps.unwrap_or(if quick {
            3
        } else {
            ((2048 * MIB) / bytes).clamp(3, 50) as u32
        });
        match measure(&gpu, &stream, bytes, reps) {
            Ok(row) => {
                print_row(&row);
                rows.push(row);
            }
            // A size the allocator refuses (memory taken by other processes) is skipped; the
            // smaller ones measured so far still make a table and a plot.
            Err(error) => println!("{:>9}  skipped: {error}", size_label(bytes)),
        }
    }
    if rows.is_empty() {
        return Err("no size could be measured".into());
    }

    let best = |kind: Kind| {
        let column = Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
        rows.iter().map(|r| r.gb_s[column]).fold(0.0, f64::max)
    };
    let (pageable, pinned) = (best(Kind::HostToDevice), best(Kind::PinnedToDevice));
    println!(
        "best host-to-device: pinned {pinned:.1} GB/s, pageable {pageable:.1} GB/s ({:.2}x)",
        pinned / pageable
    );
    // Copies that fit twice in the L2 cache run from it, faster than memory can: only larger
    // ones are held against the memory's theoretical bandwidth.
    let column = Kind::ALL
        .iter()
        .position(|&k| k == Kind::DeviceToDevice)
        .unwrap_or(0);
    let beyond_l2 = 2 * u64::from(info.l2_cache_bytes);
    let d2d_memory = rows
        .iter()
        .filter(|r| r.bytes as u64 > beyond_l2)
        .map(|r| r.gb_s[column])
        .fold(0.0, f64::max);
    let d2d = best(Kind::DeviceToDevice);
    println!("best device-to-device: {d2d:.0} GB/s (bytes read + written)");
    match info.memory_bandwidth_gb_s() {
        Some(peak) if d2d_memory > 0.0 => println!(
            "device-to-device beyond the L2 cache ({} MiB): {d2d_memory:.0} GB/s = {:.0}% of the \
             theoretical {peak:.0} GB/s",
            info.l2_cache_bytes / (1024 * 1024),
            100.0 * d2d_memory / peak
        ),
        _ => {}
    }
    plot(&args.plot, &rows, gpu.name(), info.memory_bandwidth_gb_s())?;
    println!("wrote {}", args.plot.display());
    Ok(())
}

/// The sizes to measure, in bytes: powers of 2 between the bounds, or 1, 4 and 16 MiB.
fn sizes(args: &Args, quick: bool) -> Vec<usize> {
    if quick {
        return vec![MIB, 4 * MIB, 16 * MIB];
    }
    let floor_log2 = |mib: u64| 63 - mib.leading_zeros();
    (floor_log2(args.min_mib)..=floor_log2(args.max_mib))
        .map(|k| MIB << k)
        .collect()
}

/// Why a size cannot run here, if it cannot: two device buffers must fit in 80% of the device's
/// memory, and the host buffers (a `Vec`, a pinned buffer, `to_host`'s `Vec`; on the CPU
/// backend also the two "device" buffers) in half of the available host memory.
fn does_not_fit(
    bytes: usize,
    backend: Backend,
    device_total: usize,
    host_available: Option<usize>,
) -> Option<String> {
    if backend == Backend::Cuda && 2 * bytes > device_total / 10 * 8 {
        return Some(format!(
            "two buffers of this size do not fit in 80% of the device's {} MiB",
            device_total / MIB
        ));
    }
    let host_need = if backend == Backend::Cpu { 5 } else { 3 } * bytes;
    match host_available {
        Some(available) if host_need > available / 2 => Some(format!(
            "needs {} MiB of host memory, more than half the {} MiB available",
            host_need / MIB,
            available / MIB
        )),
        _ => None,
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes; `None` where it cannot be read (not Linux).
fn available_host_memory() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Times every kind of copy of `bytes` bytes, `reps` times each after one untimed copy.
fn measure(gpu: &Gpu, stream: &Stream, bytes: usize, reps: u32) -> gpu_dsl::Result<Row> {
    let len = bytes / std::mem::size_of::<Word>();
    let host: Vec<Word> = (0..len as u32).collect();
    let mut host_out = vec![0 as Word; len];
    let mut pinned = PinnedBuffer::from_slice(gpu, &host)?;
    let mut device = DeviceBuffer::from_host(stream, &host)?;
    let mut device_copy = DeviceBuffer::<Word>::zeroed(stream, len)?;

    let mut gb_s = [0.0; 6];
    for (slot, kind) in gb_s.iter_mut().zip(Kind::ALL) {
        // One untimed copy first: it touches every page and wakes the copy engines.
        let mut copy = |stream: &Stream| -> gpu_dsl::Result<()> {
            match kind {
                Kind::HostToDevice => device.copy_from_host(stream, &host),
                Kind::DeviceToHost => device.copy_to_host(stream, &mut host_out),
                Kind::ToHostNewVec => device.to_host(stream).map(drop),
                Kind::PinnedToDevice => device.copy_from_pinned(stream, &pinned),
                Kind::DeviceToPinned => device.copy_to_pinned(stream, &mut pinned),
                Kind::DeviceToDevice => device_copy.copy_from(stream, &device),
            }
        };
        copy(stream)?;
        stream.synchronize()?;
        let seconds = if kind == Kind::ToHostNewVec {
            // The allocation happens on the host, outside what events see: time it by the clock.
            let start = Instant::now();
            for _ in 0..reps {
                copy(stream)?;
            }
            stream.synchronize()?;
            start.elapsed().as_secs_f64()
        } else {
            let start = stream.record_event()?;
            for _ in 0..reps {
                copy(stream)?;
            }
            let end = stream.record_event()?;
            f64::from(start.elapsed_ms(&end)?) / 1e3
        };
        // A device-to-device copy reads and writes every byte, as CUDA's bandwidthTest counts.
        let moved = if kind == Kind::DeviceToDevice { 2 } else { 1 } * bytes;
        *slot = moved as f64 * f64::from(reps) / seconds / 1e9;
    }

    // The last copies went device → pinned and device → Vec: both must hold the data.
    if pinned.as_slice()? != host.as_slice() || host_out != host {
        return Err(gpu_dsl::Error::InvalidLaunch(format!(
            "bandwidth: the {} MiB copies did not return the data written",
            bytes / MIB
        )));
    }
    Ok(Row { bytes, gb_s })
}

/// "1 MiB", "256 MiB", "1 GiB".
fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 30 {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

fn print_header() {
    print!("{:>9}", "size");
    for kind in Kind::ALL {
        print!("  {:>12}", kind.label());
    }
    println!("   (GB/s, 1 GB = 1e9 bytes)");
}

fn print_row(row: &Row) {
    print!("{:>9}", size_label(row.bytes));
    for gb_s in row.gb_s {
        print!("  {gb_s:>12.2}");
    }
    println!();
}

/// The font family the plot uses, registered from the embedded DejaVu Sans so the plot renders
/// the same on a machine without system fonts.
const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // A valid TTF shipped in the crate: a failure would only lose the text, not the plot.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Writes GB/s against size (both axes logarithmic), one line per kind of copy, and the theoretical
/// memory bandwidth as a dashed line where the device reports it.
fn plot(path: &Path, rows: &[Row], device: &str, peak: Option<f64>) -> Result<(), String> {
    register_font();
    let err = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // A log y axis too: PCIe copies (tens of GB/s) and device memory (thousands) on one plot.
    let measured = rows
        .iter()
        .flat_map(|r| r.gb_s)
        .filter(|v| v.is_finite() && *v > 0.0);
    let (low, high) = measured.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let low = if low.is_finite() { low } else { 1.0 };
    let high = peak.unwrap_or(0.0).max(high).max(low * 2.0);
    let x_min = rows.first().map_or(1.0, |r| r.bytes as f64 / MIB as f64);
    let x_max = rows.last().map_or(2.0, |r| r.bytes as f64 / MIB as f64);
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("copy bandwidth — {device}"), (FONT, 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (x_min * 0.9..x_max * 1.1).log_scale().base(2.0),
            (low * 0.7..high * 1.5).log_scale(),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("copy size (MiB)")
        .y_desc("GB/s")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(|e| err(&e))?;
    for (column, kind) in Kind::ALL.iter().enumerate() {
        let color = kind.color();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.bytes as f64 / MIB as f64, r.gb_s[column]))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(kind.label())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .map_err(|e| err(&e))?;
    }
    if let Some(peak) = peak {
        let line = DashedLineSeries::new(
            vec![(x_min * 0.9, peak), (x_max * 1.1, peak)],
            8,
            6,
            BLACK.stroke_width(1),
        );
        chart
            .draw_series(line)
            .map_err(|e| err(&e))?
            .label(format!("theoretical memory {peak:.0} GB/s"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 15))
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
