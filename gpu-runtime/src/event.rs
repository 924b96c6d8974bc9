//! Events: points in a stream's work to wait on or time.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::CudaEvent;

use crate::checked::PendingChecks;
use crate::device::Gpu;
use crate::error::{Error, Result};

/// A recorded point in a stream, with timing enabled.
#[derive(Debug)]
pub struct Event {
    pub(crate) inner: EventInner,
    pub(crate) gpu: Gpu,
    /// Checked launches queued before the event and not yet checked when it was recorded.
    pub(crate) check: Option<EventCheck>,
}

/// The backend's event.
#[derive(Debug)]
pub(crate) enum EventInner {
    Cuda(CudaEvent),
    /// The CPU backend runs work when it is queued, so an event is the moment it was recorded.
    Cpu(Instant),
}

/// What waiting for an event lets us check.
#[derive(Debug)]
pub(crate) enum EventCheck {
    /// The stream's first `through` checked launches.
    Cuda {
        checks: Arc<PendingChecks>,
        through: u64,
    },
    /// The CPU stream `stream`'s launches numbered below `through`.
    Cpu { stream: u64, through: u64 },
}

impl Event {
    /// Blocks until the work recorded before this event has finished; reports a checked-mode
    /// panic ([`Error::KernelPanic`]) of a launch before it.
    pub fn synchronize(&self) -> Result<()> {
        if let EventInner::Cuda(event) = &self.inner {
            event
                .synchronize()
                .map_err(Error::driver("waiting for an event"))?;
        }
        self.report_panics()
    }

    /// Milliseconds between this event and `later` (waits for both); a checked-mode panic
    /// before either is reported instead.
    pub fn elapsed_ms(&self, later: &Event) -> Result<f32> {
        self.gpu
            .check_same(|| "the later event".to_string(), &later.gpu)?;
        let ms = match (&self.inner, &later.inner) {
            (EventInner::Cuda(start), EventInner::Cuda(end)) => start
                .elapsed_ms(end)
                .map_err(Error::driver("timing between events"))?,
            (EventInner::Cpu(start), EventInner::Cpu(end)) => {
                // Signed, like cuEventElapsedTime when `later` was recorded first.
                match end.checked_duration_since(*start) {
                    Some(d) => (d.as_secs_f64() * 1e3) as f32,
                    None => -((start.duration_since(*end).as_secs_f64() * 1e3) as f32),
                }
            }
            // Same device implies same backend.
            _ => {
                return Err(Error::CudaOnly {
                    what: "timing a CUDA event",
                })
            }
        };
        self.report_panics()?;
        later.report_panics()?;
        Ok(ms)
    }

    /// Whether the recorded work has finished, without blocking.
    pub fn is_complete(&self) -> Result<bool> {
        match &self.inner {
            EventInner::Cuda(event) => event
                .try_is_complete()
                .map_err(Error::driver("querying an event")),
            EventInner::Cpu(_) => Ok(true),
        }
    }

    /// After the event completed: reports a panic of the checked launches before it.
    fn report_panics(&self) -> Result<()> {
        match &self.check {
            Some(EventCheck::Cuda { checks, through }) => self.gpu.report_panics(checks, *through),
            Some(EventCheck::Cpu { stream, through }) => match self.gpu.cpu_device() {
                Some(cpu) => cpu.take_panic(Some((*stream, *through))),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }
}
