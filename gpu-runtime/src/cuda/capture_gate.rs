//! Keeps device-wide synchronizations out of the graph captures in progress on a device.
//!
//! Synchronizing a context while one of its streams is capturing invalidates the capture (its
//! next launch fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), so a program that captures on
//! one thread while another synchronizes the device failed at random. Captures hold the gate
//! shared and device-wide synchronizations exclusively, so each waits for the other.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::core::error::{Error, Result};

thread_local! {
    /// The gate (its address) this thread is capturing under, 0 when none: a synchronization
    /// from inside its own capture would otherwise wait for itself.
    static CAPTURING: Cell<usize> = const { Cell::new(0) };
}

/// One device's gate between captures and device-wide synchronizations.
#[derive(Default)]
pub(crate) struct CaptureGate {
    // Guards no data: only who may run at once. A panic while it is held leaves nothing
    // inconsistent, so a poisoned lock is taken as it is.
    lock: RwLock<()>,
    /// The captures in progress that pause the context's event tracking, and whether it was
    /// on before the first: the last to end turns it back on, not the first, which left a
    /// capture on another thread waiting on events recorded outside it
    /// (CUDA_ERROR_STREAM_CAPTURE_ISOLATION, seen in the runtime's parallel tests).
    // Boxed: the device is kept small beside the CPU backend's (clippy's large_enum_variant).
    paused: Box<Mutex<(usize, bool)>>,
}

/// Held for the length of one capture.
pub(crate) struct Capturing<'a> {
    _shared: Option<RwLockReadGuard<'a, ()>>,
    previous: usize,
}

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        CAPTURING.with(|capturing| capturing.set(self.previous));
    }
}

impl CaptureGate {
    fn id(&self) -> usize {
        self as *const CaptureGate as usize
    }

    /// Waits for device-wide synchronizations in flight, then keeps new ones out until the
    /// returned guard is dropped.
    pub(crate) fn capturing(&self) -> Capturing<'_> {
        let previous = CAPTURING.with(|capturing| capturing.replace(self.id()));
        // A capture nested in another on this thread already holds the gate.
        let shared = (previous != self.id())
            .then(|| self.lock.read().unwrap_or_else(PoisonError::into_inner));
        Capturing {
            _shared: shared,
            previous,
        }
    }

    /// The count of captures that pause the event tracking, and whether it was on.
    pub(crate) fn paused(&self) -> MutexGuard<'_, (usize, bool)> {
        self.paused.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the captures in progress on other threads; an error inside a capture on this
    /// thread, which a device-wide synchronization would break.
    pub(crate) fn synchronizing(&self) -> Result<RwLockWriteGuard<'_, ()>> {
        if CAPTURING.with(Cell::get) == self.id() {
            return Err(Error::InvalidLaunch(
                "Gpu::synchronize was called inside Stream::capture: a device-wide \
                 synchronization cannot be captured; synchronize before or after the capture"
                    .to_string(),
            ));
        }
        Ok(self.lock.write().unwrap_or_else(PoisonError::into_inner))
    }
}
