//! A finished profile: its records, the summary table and the Chrome trace.

use std::fmt::Write as _;
use std::path::Path;

use crate::core::backend::Backend;
use crate::core::error::{Error, Result};
use crate::core::launch::{Block, Grid};

/// Which way a copy went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDirection {
    /// From host memory into a device buffer.
    HostToDevice,
    /// From a device buffer into host memory.
    DeviceToHost,
    /// Between device buffers (peer to peer across GPUs).
    DeviceToDevice,
}

impl CopyDirection {
    /// CUDA's short name: `HtoD`, `DtoH` or `DtoD`.
    pub fn short(self) -> &'static str {
        match self {
            CopyDirection::HostToDevice => "HtoD",
            CopyDirection::DeviceToHost => "DtoH",
            CopyDirection::DeviceToDevice => "DtoD",
        }
    }
}

/// What a record is of.
#[derive(Clone, Debug, PartialEq)]
pub enum Activity {
    /// A kernel launch.
    Launch {
        /// The kernel's name.
        kernel: String,
        /// Its template arguments, as Rust writes them (empty for a plain kernel).
        template_args: Vec<String>,
        /// The grid, in blocks.
        grid: Grid,
        /// The block, in threads.
        block: Block,
        /// Dynamic shared memory per block, in bytes.
        shared_mem_bytes: u32,
    },
    /// A copy.
    Copy {
        /// Bytes copied.
        bytes: usize,
        /// Which way.
        direction: CopyDirection,
        /// Whether the host side was page-locked memory.
        pinned: bool,
    },
}

impl Activity {
    /// The name the table groups by: the kernel with its template arguments, or the copy's
    /// kind (`Memcpy HtoD (pinned)`).
    pub fn name(&self) -> String {
        match self {
            Activity::Launch {
                kernel,
                template_args,
                ..
            } if template_args.is_empty() => kernel.clone(),
            Activity::Launch {
                kernel,
                template_args,
                ..
            } => format!("{kernel}::<{}>", template_args.join(", ")),
            Activity::Copy {
                direction: CopyDirection::DeviceToDevice,
                ..
            } => "Memcpy DtoD".to_string(),
            Activity::Copy {
                direction, pinned, ..
            } => format!(
                "Memcpy {} ({})",
                direction.short(),
                if *pinned { "pinned" } else { "pageable" }
            ),
        }
    }

    /// Bytes moved: a copy's size, 0 for a launch.
    pub fn bytes(&self) -> usize {
        match self {
            Activity::Launch { .. } => 0,
            Activity::Copy { bytes, .. } => *bytes,
        }
    }
}

/// One launch or copy of a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRecord {
    /// What it was.
    pub activity: Activity,
    /// The device ordinal.
    pub device: usize,
    /// The device's backend.
    pub backend: Backend,
    /// Its stream, numbered from 0 in the order streams first appear in the profile.
    pub stream: u32,
    /// When it started, in microseconds from the start of the profile.
    pub start_us: f64,
    /// How long it ran in microseconds; `None` for work captured into a CUDA graph, which
    /// events cannot time.
    pub duration_us: Option<f64>,
}

/// A finished profile: every recorded launch and copy in the order they were issued.
#[derive(Clone, Debug)]
pub struct ProfileReport {
    records: Vec<ProfileRecord>,
    wall_us: f64,
}

/// One row of the summary table.
struct Row {
    name: String,
    calls: usize,
    total_us: f64,
    bytes: usize,
    is_copy: bool,
}

impl ProfileReport {
    pub(crate) fn new(records: Vec<ProfileRecord>, wall_us: f64) -> ProfileReport {
        ProfileReport { records, wall_us }
    }

    /// The records, in the order they were issued.
    pub fn records(&self) -> &[ProfileRecord] {
        &self.records
    }

    /// Host time from the start of the profile to its finish, in microseconds.
    pub fn wall_us(&self) -> f64 {
        self.wall_us
    }

    /// Sum of the timed records' durations, in microseconds.
    pub fn device_us(&self) -> f64 {
        self.records.iter().filter_map(|r| r.duration_us).sum()
    }

    fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        for record in &self.records {
            let name = record.activity.name();
            let at = match rows.iter().position(|row| row.name == name) {
                Some(at) => at,
                None => {
                    rows.push(Row {
                        name,
                        calls: 0,
                        total_us: 0.0,
                        bytes: 0,
                        is_copy: matches!(record.activity, Activity::Copy { .. }),
                    });
                    rows.len() - 1
                }
            };
            let row = &mut rows[at];
            row.calls += 1;
            row.total_us += record.duration_us.unwrap_or(0.0);
            row.bytes += record.activity.bytes();
        }
        rows.sort_by(|a, b| {
            b.total_us
                .total_cmp(&a.total_us)
                .then_with(|| a.name.cmp(&b.name))
        });
        rows
    }

    /// A summary like torch.profiler's `key_averages().table()`: one row per kernel (with its
    /// template arguments) or kind of copy, with calls, total and mean time, share of the
    /// device time and, for copies, the achieved GB/s; sorted by total time, longest first.
    pub fn table(&self) -> String {
        let rows = self.rows();
        let device_us = self.device_us();
        let width = rows
            .iter()
            .map(|row| row.name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(4, 60);
        let mut out = String::new();
        let header = format!(
            "{:<width$}  {:>7}  {:>12}  {:>11}  {:>7}  {:>9}",
            "Name", "Calls", "Total", "Mean", "% time", "GB/s"
        );
        let rule = "-".repeat(header.len());
        let _ = writeln!(out, "{rule}\n{header}\n{rule}");
        for row in &rows {
            let mean = row.total_us / row.calls as f64;
            let share = if device_us > 0.0 {
                100.0 * row.total_us / device_us
            } else {
                0.0
            };
            let rate = if row.is_copy && row.total_us > 0.0 {
                format!("{:.2}", row.bytes as f64 / (row.total_us * 1e3))
            } else {
                String::new()
            };
            let name = shorten(&row.name, width);
            let _ = writeln!(
                out,
                "{name:<width$}  {:>7}  {:>12}  {:>11}  {share:>6.2}%  {rate:>9}",
                row.calls,
                micros(row.total_us),
                micros(mean),
            );
        }
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(
            out,
            "device time total: {}; wall time of the profile: {}",
            micros(device_us),
            micros(self.wall_us)
        );
        let untimed = self
            .records
            .iter()
            .filter(|r| r.duration_us.is_none())
            .count();
        if untimed > 0 {
            let _ = writeln!(out, "{untimed} launches captured into graphs are not timed");
        }
        out
    }

    /// The profile as Chrome trace events (`{"traceEvents": [...]}`), which chrome://tracing
    /// and Perfetto open: one complete (`"X"`) event per timed record, a process per device
    /// and a track per stream.
    pub fn chrome_trace_json(&self) -> String {
        let mut out = String::from("{\"traceEvents\":[\n");
        let mut first = true;
        let mut named: Vec<(usize, u32)> = Vec::new();
        let mut push = |out: &mut String, event: String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            out.push_str(&event);
        };
        for record in &self.records {
            let pid = record.device;
            let tid = record.stream;
            if !named.contains(&(pid, tid)) {
                if !named.iter().any(|&(p, _)| p == pid) {
                    let device = match record.backend {
                        Backend::Cuda => format!("GPU {pid}"),
                        Backend::Cpu => "CPU backend".to_string(),
                    };
                    push(
                        &mut out,
                        format!(
                            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                            json_string(&device)
                        ),
                    );
                }
                named.push((pid, tid));
                push(
                    &mut out,
                    format!(
                        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"stream {tid}\"}}}}"
                    ),
                );
            }
            let Some(duration) = record.duration_us else {
                continue;
            };
            let (category, args) = match &record.activity {
                Activity::Launch {
                    grid,
                    block,
                    shared_mem_bytes,
                    ..
                } => (
                    "kernel",
                    format!(
                        "\"grid\":[{},{},{}],\"block\":[{},{},{}],\"shared_mem_bytes\":{shared_mem_bytes}",
                        grid.x, grid.y, grid.z, block.x, block.y, block.z
                    ),
                ),
                Activity::Copy {
                    bytes,
                    direction,
                    pinned,
                } => (
                    "memcpy",
                    format!(
                        "\"bytes\":{bytes},\"direction\":\"{}\",\"pinned\":{pinned}",
                        direction.short()
                    ),
                ),
            };
            push(
                &mut out,
                format!(
                    "{{\"name\":{},\"cat\":\"{category}\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
                    json_string(&record.activity.name()),
                    record.start_us,
                    duration,
                ),
            );
        }
        out.push_str("\n]}\n");
        out
    }

    /// Writes [`ProfileReport::chrome_trace_json`] to `path`.
    pub fn chrome_trace(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.chrome_trace_json()).map_err(|source| Error::TraceWrite {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// A duration for the table, in the unit that keeps it readable.
fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.3} us")
    }
}

/// `name` cut to `width` characters, its end marked, so one long instantiation does not
/// stretch every row.
fn shorten(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        name.to_string()
    } else {
        let kept: String = name.chars().take(width.saturating_sub(3)).collect();
        format!("{kept}...")
    }
}

/// `text` as a JSON string; hand-written because the runtime has no JSON dependency and
/// needs only this.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
