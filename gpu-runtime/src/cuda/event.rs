//! CUDA events: points in a stream's work to wait on or time.

use std::sync::Arc;

use cudarc::driver::CudaEvent;

use crate::core::checks::PendingChecks;
use crate::core::error::{Error, Result};
use crate::cuda::device::CudaDevice;

/// A recorded CUDA event and the checked launches before it not yet checked when recorded.
#[derive(Debug)]
pub(crate) struct CudaMarker {
    pub(crate) event: CudaEvent,
    /// The stream's checks and how many of them the event follows.
    pub(crate) check: Option<(Arc<PendingChecks>, u64)>,
}

impl CudaMarker {
    /// Blocks until the work recorded before the event has finished.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.event
            .synchronize()
            .map_err(Error::driver("waiting for an event"))
    }

    /// Milliseconds between this event and `later` (waits for both).
    pub(crate) fn elapsed_ms(&self, later: &CudaMarker) -> Result<f32> {
        self.event
            .elapsed_ms(&later.event)
            .map_err(Error::driver("timing between events"))
    }

    /// Whether the recorded work has finished, without blocking.
    pub(crate) fn is_complete(&self) -> Result<bool> {
        self.event
            .try_is_complete()
            .map_err(Error::driver("querying an event"))
    }

    /// After the event completed: reports a panic of the checked launches before it.
    pub(crate) fn report_panics(&self, device: &CudaDevice) -> Result<()> {
        match &self.check {
            Some((checks, through)) => device.report_panics(checks, *through),
            None => Ok(()),
        }
    }
}
