//! Events: points in a stream's work to wait on or time.

use std::sync::Arc;

use cudarc::driver::CudaEvent;

use crate::checked::PendingChecks;
use crate::device::Gpu;
use crate::error::{Error, Result};

/// A recorded point in a stream, with timing enabled.
#[derive(Debug)]
pub struct Event {
    pub(crate) inner: CudaEvent,
    pub(crate) ordinal: usize,
    /// Checked launches queued before the event and not yet checked when it was recorded.
    pub(crate) check: Option<EventCheck>,
}

/// What waiting for an event lets us check: the stream's first `through` checked launches.
#[derive(Debug)]
pub(crate) struct EventCheck {
    pub(crate) gpu: Gpu,
    pub(crate) checks: Arc<PendingChecks>,
    pub(crate) through: u64,
}

impl Event {
    /// Blocks until the work recorded before this event has finished; reports a checked-mode
    /// panic ([`Error::KernelPanic`]) of a launch before it.
    pub fn synchronize(&self) -> Result<()> {
        self.inner
            .synchronize()
            .map_err(Error::driver("waiting for an event"))?;
        self.report_panics()
    }

    /// Milliseconds between this event and `later` (waits for both); a checked-mode panic
    /// before either is reported instead.
    pub fn elapsed_ms(&self, later: &Event) -> Result<f32> {
        if later.ordinal != self.ordinal {
            return Err(Error::WrongDevice {
                what: "the later event".to_string(),
                expected: self.ordinal,
                found: later.ordinal,
            });
        }
        let ms = self
            .inner
            .elapsed_ms(&later.inner)
            .map_err(Error::driver("timing between events"))?;
        self.report_panics()?;
        later.report_panics()?;
        Ok(ms)
    }

    /// Whether the recorded work has finished, without blocking.
    pub fn is_complete(&self) -> Result<bool> {
        self.inner
            .try_is_complete()
            .map_err(Error::driver("querying an event"))
    }

    /// After the event completed: reports a panic of the checked launches before it.
    fn report_panics(&self) -> Result<()> {
        match &self.check {
            Some(check) => check.gpu.report_panics(&check.checks, check.through),
            None => Ok(()),
        }
    }
}
