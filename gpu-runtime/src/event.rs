//! Events: points in a stream's work to wait on or time.

use crate::core::error::Result;
use crate::device::Gpu;
use crate::dispatch::MarkerImpl;

/// A recorded point in a stream, with timing enabled.
#[derive(Debug)]
pub struct Event {
    /// The backend's event, with the checked launches before it not yet checked when recorded.
    pub(crate) marker: MarkerImpl,
    pub(crate) gpu: Gpu,
}

impl Event {
    /// Blocks until the work recorded before this event has finished; reports a checked-mode
    /// panic ([`crate::Error::KernelPanic`]) of a launch before it.
    pub fn synchronize(&self) -> Result<()> {
        self.marker.synchronize()?;
        self.report_panics()
    }

    /// Milliseconds between this event and `later` (waits for both); a checked-mode panic
    /// before either is reported instead.
    pub fn elapsed_ms(&self, later: &Event) -> Result<f32> {
        self.gpu
            .check_same(|| "the later event".to_string(), &later.gpu)?;
        let ms = self.marker.elapsed_ms(&later.marker)?;
        self.report_panics()?;
        later.report_panics()?;
        Ok(ms)
    }

    /// Whether the recorded work has finished, without blocking.
    pub fn is_complete(&self) -> Result<bool> {
        self.marker.is_complete()
    }

    /// After the event completed: reports a panic of the checked launches before it.
    fn report_panics(&self) -> Result<()> {
        self.marker.report_panics(self.gpu.device())
    }
}
