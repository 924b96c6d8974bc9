//! The profiler: every launch and copy on every stream of the process, timed with events
//! recorded around it on its stream (wall time on the CPU backend, whose work runs when it is
//! queued), summed up by [`ProfileReport`].
//!
//! The hooks live in the front: `Stream::launch_variant` (launch.rs) and `DeviceBuffer`'s
//! copies (buffer.rs) ask [`enabled`], one relaxed atomic load, and only when it says yes go
//! through [`record`]. Process-wide rather than per device, so one profile covers a program
//! that uses several GPUs, and a closure needs no handle to be profiled.

mod report;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::core::error::{Error, Result};
use crate::cuda::nvtx::NvtxRange;
use crate::device::Gpu;
use crate::dispatch::MarkerImpl;
use crate::stream::Stream;

pub use report::{Activity, CopyDirection, ProfileRecord, ProfileReport};

/// Whether a profiler is recording; the only thing the launch and copy paths read when none is.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The recording profile, if any.
static SESSION: Mutex<Option<Session>> = Mutex::new(None);

/// Timing events of finished profiles, kept for the next so a profiled loop re-records events
/// rather than creating thousands.
static POOL: Mutex<Vec<(Gpu, MarkerImpl)>> = Mutex::new(Vec::new());

/// Whether a profiler is recording (a relaxed load: a launch racing with `start` or `finish`
/// on another thread may or may not be recorded).
#[inline(always)]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn lock<T>(mutex: &'static Mutex<T>) -> MutexGuard<'static, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What is recorded of one launch or copy until the report resolves its times.
struct Pending {
    activity: Activity,
    gpu: Gpu,
    track: u64,
    /// When the host issued it, from the start of the profile.
    host_start_us: f64,
    /// Its events; `None` when it was captured into a graph.
    marks: Option<(MarkerImpl, MarkerImpl)>,
}

struct Session {
    started: Instant,
    records: Vec<Pending>,
}

/// A recording profile of every launch and copy in the process, from [`Profiler::start`] to
/// [`Profiler::finish`]; dropping it unfinished stops recording and discards what it saw.
///
/// One profiler records at a time: starting a second while one records is
/// [`Error::ProfilerActive`], so nested profiles are refused rather than split.
#[derive(Debug)]
#[must_use = "a profiler records until it is finished or dropped"]
pub struct Profiler {
    finished: bool,
}

impl Profiler {
    /// Starts recording every launch and copy on every stream of the process.
    pub fn start() -> Result<Profiler> {
        let mut session = lock(&SESSION);
        if session.is_some() {
            return Err(Error::ProfilerActive);
        }
        *session = Some(Session {
            started: Instant::now(),
            records: Vec::new(),
        });
        ENABLED.store(true, Ordering::Relaxed);
        Ok(Profiler { finished: false })
    }

    /// Stops recording, waits for the recorded work and reads its times.
    pub fn finish(mut self) -> Result<ProfileReport> {
        self.finished = true;
        let session = stop();
        let wall_us = session.started.elapsed().as_secs_f64() * 1e6;
        resolve(session.records, wall_us)
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        if !self.finished {
            recycle(stop().records);
        }
    }
}

/// Runs `work` under a [`Profiler`] and returns its result with the report.
pub fn profile<R>(work: impl FnOnce() -> R) -> Result<(R, ProfileReport)> {
    let profiler = Profiler::start()?;
    let result = work();
    Ok((result, profiler.finish()?))
}

fn stop() -> Session {
    let mut session = lock(&SESSION);
    ENABLED.store(false, Ordering::Relaxed);
    session.take().unwrap_or_else(|| Session {
        started: Instant::now(),
        records: Vec::new(),
    })
}

/// A pooled mark of `gpu`'s, if there is one.
fn pooled(gpu: &Gpu) -> Option<MarkerImpl> {
    let mut pool = lock(&POOL);
    let at = pool.iter().rposition(|(owner, _)| owner == gpu)?;
    Some(pool.swap_remove(at).1)
}

fn recycle(records: Vec<Pending>) {
    let mut pool = lock(&POOL);
    for record in records {
        if let Some((start, end)) = record.marks {
            pool.push((record.gpu.clone(), start));
            pool.push((record.gpu, end));
        }
    }
}

/// Runs `op` (a launch or copy queued on `stream`) between two timing marks and records it
/// as `activity`, inside an NVTX range of its name; a failed `op` is not recorded.
pub(crate) fn record<R>(
    stream: &Stream,
    activity: impl FnOnce() -> Activity,
    op: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let gpu = stream.gpu();
    let activity = activity();
    // Nsight Systems, where it runs, sees the same work by the same names.
    let range = NvtxRange::push(|| activity.name());
    let host_start = Instant::now();
    let start = stream.queue.record_timing(pooled(gpu))?;
    let result = op();
    let end = match &start {
        Some(_) => stream.queue.record_timing(pooled(gpu))?,
        None => None,
    };
    drop(range);
    let marks = start.zip(end);
    let value = match result {
        Ok(value) => value,
        Err(error) => {
            if let Some((start, end)) = marks {
                let mut pool = lock(&POOL);
                pool.push((gpu.clone(), start));
                pool.push((gpu.clone(), end));
            }
            return Err(error);
        }
    };
    let mut session = lock(&SESSION);
    // Finished meanwhile on another thread: this one is not part of it.
    if let Some(session) = session.as_mut() {
        let host_start_us = host_start
            .saturating_duration_since(session.started)
            .as_secs_f64()
            * 1e6;
        session.records.push(Pending {
            activity,
            gpu: gpu.clone(),
            track: stream.queue.track(),
            host_start_us,
            marks,
        });
    }
    Ok(value)
}

/// Waits for the recorded work and turns the marks into times: durations from each pair,
/// start times from the first mark of the same device, placed where the host issued that
/// first one so devices share one time line.
fn resolve(pending: Vec<Pending>, wall_us: f64) -> Result<ProfileReport> {
    let mut origins: Vec<(Gpu, usize)> = Vec::new();
    let mut tracks: Vec<(usize, u64)> = Vec::new();
    let mut records = Vec::with_capacity(pending.len());
    let mut failure = None;
    for (index, record) in pending.iter().enumerate() {
        let timed = match &record.marks {
            Some((start, end)) => {
                let origin = match origins.iter().find(|(gpu, _)| *gpu == record.gpu) {
                    Some(&(_, origin)) => origin,
                    None => {
                        origins.push((record.gpu.clone(), index));
                        index
                    }
                };
                let times = end.synchronize().and_then(|()| {
                    let duration = start.elapsed_ms(end)? as f64 * 1e3;
                    let (origin_marks, origin_us) = match &pending[origin].marks {
                        Some((mark, _)) => (mark, pending[origin].host_start_us),
                        None => (start, record.host_start_us),
                    };
                    let offset = origin_marks.elapsed_ms(start)? as f64 * 1e3;
                    Ok((origin_us + offset, duration))
                });
                match times {
                    Ok((start_us, duration_us)) => Some((start_us, duration_us)),
                    Err(error) => {
                        failure.get_or_insert(error);
                        None
                    }
                }
            }
            None => None,
        };
        let device = record.gpu.ordinal();
        let track_key = (device, record.track);
        let stream = match tracks.iter().position(|key| *key == track_key) {
            Some(at) => at,
            None => {
                tracks.push(track_key);
                tracks.len() - 1
            }
        };
        records.push(ProfileRecord {
            activity: record.activity.clone(),
            device,
            backend: record.gpu.backend(),
            stream: stream as u32,
            start_us: timed.map_or(record.host_start_us, |(start, _)| start),
            duration_us: timed.map(|(_, duration)| duration),
        });
    }
    recycle(pending);
    // Work on another stream can start before the device's first mark (that stream was idle
    // while the first one drained earlier work); the trace's time line starts at zero.
    let earliest = records.iter().map(|r| r.start_us).fold(0.0, f64::min);
    for record in &mut records {
        record.start_us -= earliest;
    }
    match failure {
        Some(error) => Err(error),
        None => Ok(ProfileReport::new(records, wall_us)),
    }
}
