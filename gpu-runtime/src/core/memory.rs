//! Memory accounting of one device: the bytes this process's buffers hold, their peak, and the
//! peaks of the scopes being tracked ([`crate::MemoryTracker`]). The backends' caches (what is
//! reserved) are asked by the front; this file only counts what the buffers asked for.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Device memory held through this crate's buffers on one device, and what its allocator keeps
/// in reserve; torch's `memory_allocated`, `max_memory_allocated` and `memory_reserved`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemoryStats {
    /// Bytes held by live buffers, as they asked for them (an empty buffer counts one element).
    pub allocated_bytes: usize,
    /// Most bytes allocated at once since the device was opened (or the peak was reset).
    pub peak_bytes: usize,
    /// Bytes the allocator holds from the driver: allocated, plus freed memory kept for reuse
    /// (equal to `allocated_bytes` where nothing is cached: the CPU backend, GPUs without
    /// memory pools).
    pub reserved_bytes: usize,
    /// Buffers currently alive.
    pub live_buffers: usize,
}

impl fmt::Display for MemoryStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} allocated in {} buffer(s), peak {}, {} reserved",
            format_bytes(self.allocated_bytes),
            self.live_buffers,
            format_bytes(self.peak_bytes),
            format_bytes(self.reserved_bytes)
        )
    }
}

/// `bytes` for people: "512 bytes", "1.50 KiB", "20.00 MiB", "1.25 GiB".
pub(crate) fn format_bytes(bytes: usize) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

/// One device's counters behind [`MemoryStats`] and the trackers.
///
/// One lock rather than atomics: a tracker's peak must see exactly the allocations made while
/// it lives, and a lock taken once per allocation costs nothing beside the allocation itself.
#[derive(Debug, Default)]
pub(crate) struct MemoryCounters {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    allocated: usize,
    peak: usize,
    live: usize,
    next_tracker: u64,
    /// The live trackers and their peaks, in the order they started.
    trackers: Vec<TrackerPeak>,
}

#[derive(Debug)]
struct TrackerPeak {
    id: u64,
    peak: usize,
}

/// What a tracker saw when it started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TrackerStart {
    /// Its key for later queries.
    pub(crate) id: u64,
    /// Bytes allocated when it started.
    pub(crate) allocated: usize,
}

impl MemoryCounters {
    fn lock(&self) -> MutexGuard<'_, Counts> {
        // Every update is a few additions that cannot panic halfway, so a poisoned lock (a
        // panic elsewhere while it was held) still guards consistent numbers.
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A buffer of `bytes` was allocated.
    pub(crate) fn add(&self, bytes: usize) {
        let mut counts = self.lock();
        counts.allocated += bytes;
        counts.live += 1;
        let now = counts.allocated;
        counts.peak = counts.peak.max(now);
        for tracker in &mut counts.trackers {
            tracker.peak = tracker.peak.max(now);
        }
    }

    /// A buffer of `bytes` was freed.
    pub(crate) fn sub(&self, bytes: usize) {
        let mut counts = self.lock();
        counts.allocated = counts.allocated.saturating_sub(bytes);
        counts.live = counts.live.saturating_sub(1);
    }

    /// Bytes allocated now.
    pub(crate) fn allocated(&self) -> usize {
        self.lock().allocated
    }

    /// The most bytes allocated at once since the device opened or the peak was reset.
    pub(crate) fn peak(&self) -> usize {
        self.lock().peak
    }

    /// The counters, with `reserved` bytes held by the backend's cache (`None`: no cache, so
    /// what is reserved is what is allocated).
    pub(crate) fn snapshot(&self, reserved: Option<usize>) -> MemoryStats {
        let counts = self.lock();
        MemoryStats {
            allocated_bytes: counts.allocated,
            peak_bytes: counts.peak,
            reserved_bytes: reserved.unwrap_or(counts.allocated),
            live_buffers: counts.live,
        }
    }

    /// Restarts the device's peak from what is allocated now; trackers keep theirs.
    pub(crate) fn reset_peak(&self) {
        let mut counts = self.lock();
        counts.peak = counts.allocated;
    }

    /// Starts a tracker whose peak begins at what is allocated now.
    pub(crate) fn start_tracker(&self) -> TrackerStart {
        let mut counts = self.lock();
        let id = counts.next_tracker;
        counts.next_tracker += 1;
        let allocated = counts.allocated;
        counts.trackers.push(TrackerPeak {
            id,
            peak: allocated,
        });
        TrackerStart { id, allocated }
    }

    /// The most bytes allocated at once since tracker `id` started.
    pub(crate) fn tracker_peak(&self, id: u64) -> usize {
        let counts = self.lock();
        counts
            .trackers
            .iter()
            .find(|tracker| tracker.id == id)
            .map_or(counts.allocated, |tracker| tracker.peak)
    }

    /// Forgets tracker `id`.
    pub(crate) fn stop_tracker(&self, id: u64) {
        self.lock().trackers.retain(|tracker| tracker.id != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_track_allocated_peak_and_live_buffers() {
        let counters = MemoryCounters::default();
        counters.add(100);
        counters.add(50);
        counters.sub(100);
        let stats = counters.snapshot(None);
        assert_eq!(
            stats,
            MemoryStats {
                allocated_bytes: 50,
                peak_bytes: 150,
                reserved_bytes: 50,
                live_buffers: 1
            }
        );
        assert_eq!(counters.snapshot(Some(4096)).reserved_bytes, 4096);
        counters.reset_peak();
        assert_eq!(counters.snapshot(None).peak_bytes, 50);
        assert_eq!(
            stats.to_string(),
            "50 bytes allocated in 1 buffer(s), peak 150 bytes, 50 bytes reserved"
        );
    }

    #[test]
    fn nested_trackers_keep_their_own_peaks() {
        let counters = MemoryCounters::default();
        counters.add(1000);
        let outer = counters.start_tracker();
        assert_eq!(outer.allocated, 1000);
        counters.add(500); // 1500
        counters.sub(500); // 1000
        let inner = counters.start_tracker();
        assert_eq!(inner.allocated, 1000);
        assert_eq!(counters.tracker_peak(inner.id), 1000);
        counters.add(200); // 1200
        counters.sub(200);
        assert_eq!(counters.tracker_peak(inner.id), 1200);
        assert_eq!(counters.tracker_peak(outer.id), 1500);
        // Resetting the device's peak leaves the trackers' alone.
        counters.reset_peak();
        assert_eq!(counters.snapshot(None).peak_bytes, 1000);
        assert_eq!(counters.tracker_peak(outer.id), 1500);
        counters.stop_tracker(inner.id);
        counters.add(700); // 1700
        assert_eq!(counters.tracker_peak(outer.id), 1700);
        counters.stop_tracker(outer.id);
        assert!(counters.lock().trackers.is_empty());
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(format_bytes(0), "0 bytes");
        assert_eq!(format_bytes(1023), "1023 bytes");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(20 << 20), "20.00 MiB");
        assert_eq!(format_bytes(5 << 29), "2.50 GiB");
        assert_eq!(format_bytes(3 << 50), "3.00 PiB");
        assert_eq!(format_bytes(usize::MAX), "16.00 EiB");
    }
}
