//! How much memory this process holds on a device, with torch's names and meanings
//! (`torch.cuda.memory_allocated` and the rest), scopes that measure it ([`MemoryTracker`]),
//! and the out-of-memory error that quotes it.
//!
//! Allocated bytes are counted here, by the buffers; reserved bytes are the backend's: on a GPU,
//! what its memory pool holds from the driver, freed memory kept for reuse included (see
//! `cuda/mempool.rs`); on the CPU backend, which caches nothing, what is allocated.

use std::fmt;

use crate::core::backend::Backend;
use crate::core::error::{AllocFailure, Error, Result};
use crate::core::memory::{format_bytes, MemoryStats};
use crate::device::Gpu;

impl Gpu {
    /// Bytes held by this process's live buffers on the device, as they asked for them (torch's
    /// `memory_allocated`).
    pub fn memory_allocated(&self) -> usize {
        self.inner.memory.allocated()
    }

    /// The most bytes allocated at once since the device was opened or
    /// [`reset_peak_memory`](Gpu::reset_peak_memory) was last called (torch's
    /// `max_memory_allocated`).
    pub fn max_memory_allocated(&self) -> usize {
        self.inner.memory.peak()
    }

    /// Bytes the allocator holds from the driver: what is allocated plus freed memory it keeps
    /// for reuse (torch's `memory_reserved`). On a GPU that is its memory pool, which every
    /// stream-ordered allocation of this process on the device shares; on the CPU backend,
    /// which keeps nothing, it equals [`memory_allocated`](Gpu::memory_allocated).
    pub fn memory_reserved(&self) -> usize {
        self.memory_stats().reserved_bytes
    }

    /// Allocated, peak and reserved bytes and the live buffers, read together.
    pub fn memory_stats(&self) -> MemoryStats {
        self.inner
            .memory
            .snapshot(self.inner.device.reserved_bytes())
    }

    /// Restarts the device's peak from what is allocated now (torch's
    /// `reset_peak_memory_stats`); live [`MemoryTracker`]s keep their own peaks.
    pub fn reset_peak_memory(&self) {
        self.inner.memory.reset_peak();
    }

    /// Hands the freed memory the allocator keeps back to the driver, so other processes (or
    /// allocations outside this crate) can have it (torch's `empty_cache`). Waits for the
    /// device first, so frees still queued behind work complete, and reports what a
    /// synchronization reports. Live buffers are untouched; nothing to do on the CPU backend.
    pub fn empty_cache(&self) -> Result<()> {
        self.inner.device.empty_cache()
    }

    /// Starts measuring memory use until the returned tracker is dropped: its peak, and how
    /// much more (or less) is allocated than when it started. Trackers may nest and overlap;
    /// each keeps its own peak, and none changes the device's
    /// ([`max_memory_allocated`](Gpu::max_memory_allocated)).
    pub fn track_memory(&self) -> MemoryTracker {
        let start = self.inner.memory.start_tracker();
        MemoryTracker {
            gpu: self.clone(),
            id: start.id,
            start_bytes: start.allocated,
        }
    }

    /// The error for an allocation of `bytes` that failed as `failure` says: running out of
    /// memory is quoted with this device's figures.
    pub(crate) fn alloc_error(&self, failure: AllocFailure, bytes: usize) -> Error {
        match failure {
            AllocFailure::OutOfMemory => {
                let stats = self.memory_stats();
                Error::OutOfMemory {
                    device: match self.backend() {
                        Backend::Cuda => format!("GPU {} ({})", self.ordinal(), self.name()),
                        Backend::Cpu => "the CPU backend (host memory)".to_string(),
                    },
                    requested: bytes,
                    allocated: stats.allocated_bytes,
                    reserved: stats.reserved_bytes,
                    total: self.total_memory(),
                }
            }
            AllocFailure::Other(error) => error,
        }
    }
}

/// Measures memory use on one device while it lives (from [`Gpu::track_memory`]): the peak of
/// allocated bytes, and allocated bytes now against its start. All figures count buffers, as
/// [`Gpu::memory_allocated`] does, and include allocations of other threads meanwhile.
///
/// ```
/// use gpu_dsl_runtime::{DeviceBuffer, Gpu};
///
/// let gpu = Gpu::cpu();
/// let stream = gpu.default_stream();
/// let tracker = gpu.track_memory();
/// let kept = DeviceBuffer::<f32>::zeroed(&stream, 256)?; // 1 KiB
/// drop(DeviceBuffer::<f32>::zeroed(&stream, 1024)?); // 4 KiB, briefly
/// assert_eq!(tracker.peak_increase_bytes(), 5 * 1024);
/// assert_eq!(tracker.delta_bytes(), 1024);
/// # drop(kept);
/// # Ok::<(), gpu_dsl_runtime::Error>(())
/// ```
#[must_use = "a tracker measures only while it lives: bind it to a variable"]
#[derive(Debug)]
pub struct MemoryTracker {
    gpu: Gpu,
    id: u64,
    start_bytes: usize,
}

impl MemoryTracker {
    /// Bytes allocated on the device when the tracker started.
    pub fn start_bytes(&self) -> usize {
        self.start_bytes
    }

    /// The most bytes allocated at once on the device while the tracker has lived: an absolute
    /// figure, like [`Gpu::max_memory_allocated`] (at least [`start_bytes`](Self::start_bytes)).
    pub fn peak_bytes(&self) -> usize {
        self.gpu.inner.memory.tracker_peak(self.id)
    }

    /// How far the peak rose above the start: the most the tracked scope added at once.
    pub fn peak_increase_bytes(&self) -> usize {
        self.peak_bytes().saturating_sub(self.start_bytes)
    }

    /// Bytes allocated now minus at the start: what the scope kept, negative when it freed
    /// more than it allocated.
    pub fn delta_bytes(&self) -> i64 {
        let now = self.gpu.memory_allocated();
        let signed = |bytes: usize| i64::try_from(bytes).unwrap_or(i64::MAX);
        if now >= self.start_bytes {
            signed(now - self.start_bytes)
        } else {
            -signed(self.start_bytes - now)
        }
    }

    /// The device it measures.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

impl fmt::Display for MemoryTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let delta = self.delta_bytes();
        let sign = if delta < 0 { "-" } else { "+" };
        write!(
            f,
            "peak {} ({} above the start), now {sign}{} against the start",
            format_bytes(self.peak_bytes()),
            format_bytes(self.peak_increase_bytes()),
            format_bytes(usize::try_from(delta.unsigned_abs()).unwrap_or(usize::MAX))
        )
    }
}

impl Drop for MemoryTracker {
    fn drop(&mut self) {
        self.gpu.inner.memory.stop_tracker(self.id);
    }
}
