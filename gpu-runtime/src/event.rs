//! Events: points in a stream's work to wait on or time.

use cudarc::driver::CudaEvent;

use crate::error::{Error, Result};

/// A recorded point in a stream, with timing enabled.
#[derive(Debug)]
pub struct Event {
    pub(crate) inner: CudaEvent,
    pub(crate) ordinal: usize,
}

impl Event {
    /// Blocks until the work recorded before this event has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner
            .synchronize()
            .map_err(Error::driver("waiting for an event"))
    }

    /// Milliseconds between this event and `later` (waits for both).
    pub fn elapsed_ms(&self, later: &Event) -> Result<f32> {
        if later.ordinal != self.ordinal {
            return Err(Error::WrongDevice {
                what: "the later event".to_string(),
                expected: self.ordinal,
                found: later.ordinal,
            });
        }
        self.inner
            .elapsed_ms(&later.inner)
            .map_err(Error::driver("timing between events"))
    }

    /// Whether the recorded work has finished, without blocking.
    pub fn is_complete(&self) -> Result<bool> {
        self.inner
            .try_is_complete()
            .map_err(Error::driver("querying an event"))
    }
}
