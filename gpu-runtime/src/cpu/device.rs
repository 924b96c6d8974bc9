//! The CPU backend as a device: its properties, its streams, and the checked-mode panics
//! waiting to be reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::core::backend::Backend;
use crate::core::error::{Error, Result};
use crate::core::info::DeviceInfo;
use crate::core::launch::DeviceLimits;

/// A stream of the CPU backend: work runs when it is queued, so a stream only numbers its
/// launches (for events) and names itself (for panics).
#[derive(Debug)]
pub(crate) struct CpuStream {
    id: u64,
    launches: AtomicU64,
}

impl CpuStream {
    /// The stream's number on its device.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// How many launches it has run.
    pub(crate) fn launches(&self) -> u64 {
        self.launches.load(Ordering::Acquire)
    }

    /// Numbers a launch that just ran.
    pub(crate) fn next_launch(&self) -> u64 {
        self.launches.fetch_add(1, Ordering::AcqRel)
    }
}

/// A checked-mode violation waiting for its stream's next synchronizing call.
#[derive(Clone, Debug)]
pub(crate) struct PendingPanic {
    /// The stream that ran the launch.
    pub(crate) stream: u64,
    /// The launch's number on that stream.
    pub(crate) seq: u64,
    /// The kernel, with template arguments.
    pub(crate) kernel: String,
    /// Its Rust source file.
    pub(crate) file: &'static str,
    /// The failed check's line.
    pub(crate) line: u32,
    /// The failing thread's block.
    pub(crate) block: [u32; 3],
    /// The failing thread's index in its block.
    pub(crate) thread: [u32; 3],
    /// Rust's wording of the failure.
    pub(crate) message: String,
}

impl PendingPanic {
    fn into_error(self) -> Error {
        Error::KernelPanic {
            kernel: self.kernel,
            file: self.file.to_string(),
            line: self.line,
            block: self.block,
            thread: self.thread,
            message: self.message,
        }
    }
}

/// The CPU backend's device-wide state.
#[derive(Debug)]
pub(crate) struct CpuDevice {
    pub(crate) default_stream: Arc<CpuStream>,
    next_stream: AtomicU64,
    pending: Mutex<Vec<PendingPanic>>,
    /// Whether every launch runs under the race checker unless the launch says otherwise.
    pub(crate) racecheck: bool,
}

impl CpuDevice {
    pub(crate) fn new(racecheck: bool) -> CpuDevice {
        CpuDevice {
            racecheck,
            default_stream: Arc::new(CpuStream {
                id: 0,
                launches: AtomicU64::new(0),
            }),
            next_stream: AtomicU64::new(1),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// A new stream.
    pub(crate) fn new_stream(&self) -> Arc<CpuStream> {
        Arc::new(CpuStream {
            id: self.next_stream.fetch_add(1, Ordering::Relaxed),
            launches: AtomicU64::new(0),
        })
    }

    /// Queues a panic for its stream's next synchronizing call.
    pub(crate) fn record_panic(&self, panic: PendingPanic) {
        self.lock().push(panic);
    }

    /// Reports (and forgets) the earliest pending panic of stream `stream` among its launches
    /// numbered below `through`, or of any stream when `scope` is `None`. The others in scope
    /// are dropped, as a GPU's error slot keeps only the first.
    pub(crate) fn take_panic(&self, scope: Option<(u64, u64)>) -> Result<()> {
        let in_scope = |p: &PendingPanic| match scope {
            Some((stream, through)) => p.stream == stream && p.seq < through,
            None => true,
        };
        let mut pending = self.lock();
        let first = pending
            .iter()
            .position(in_scope)
            .map(|i| pending[i].clone());
        pending.retain(|p| !in_scope(p));
        match first {
            Some(panic) => Err(panic.into_error()),
            None => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PendingPanic>> {
        // Every update is one push or retain, so a poisoned lock still guards a valid list.
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The CPU backend's properties: its worker threads and the host's memory, with the launch
/// limits of an H100 (sm_90), so a launch valid here is valid on current GPUs.
pub(crate) fn device_info() -> DeviceInfo {
    let threads = u32::try_from(rayon::current_num_threads()).unwrap_or(u32::MAX);
    let limits = DeviceLimits::SM_90;
    DeviceInfo {
        backend: Backend::Cpu,
        ordinal: 0,
        name: format!("CPU backend ({threads} threads)"),
        compute_capability: (0, 0),
        sm_count: threads,
        total_memory: host_memory_bytes().unwrap_or(0),
        max_threads_per_block: limits.max_threads_per_block,
        max_threads_per_sm: 2048,
        max_block_dim: limits.max_block_dim,
        max_grid_dim: limits.max_grid_dim,
        shared_mem_per_block: limits.max_shared_mem_per_block,
        shared_mem_per_block_optin: limits.max_shared_mem_per_block_optin,
        shared_mem_per_sm: 233_472,
        registers_per_block: 65_536,
        warp_size: 32,
        l2_cache_bytes: 0,
        clock_rate_khz: None,
        memory_clock_rate_khz: None,
        memory_bus_width_bits: None,
        ecc_enabled: false,
        integrated: true,
        pci_bus_id: String::new(),
        driver_version: (0, 0),
    }
}

/// Total host memory from `/proc/meminfo` (Linux); `None` elsewhere.
fn host_memory_bytes() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_total(&text)
}

fn parse_mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panic_on(stream: u64, seq: u64, line: u32) -> PendingPanic {
        PendingPanic {
            stream,
            seq,
            kernel: "k".into(),
            file: "src/k.rs",
            block: [0, 0, 0],
            thread: [1, 0, 0],
            line,
            message: "attempt to divide by zero".into(),
        }
    }

    #[test]
    fn panics_are_reported_per_stream_once() {
        let device = CpuDevice::new(false);
        device.record_panic(panic_on(1, 0, 10));
        device.record_panic(panic_on(1, 3, 11));
        device.record_panic(panic_on(2, 0, 20));
        // An event recorded before launch 3 of stream 1 sees only launch 0.
        match device.take_panic(Some((1, 1))) {
            Err(Error::KernelPanic { line: 10, .. }) => {}
            other => panic!("{other:?}"),
        }
        device.take_panic(Some((1, 1))).unwrap();
        match device.take_panic(Some((1, u64::MAX))) {
            Err(Error::KernelPanic { line: 11, .. }) => {}
            other => panic!("{other:?}"),
        }
        match device.take_panic(None) {
            Err(err @ Error::KernelPanic { line: 20, .. }) => assert_eq!(
                err.to_string(),
                "kernel `k` panicked at src/k.rs:20 in block (0, 0, 0) thread (1, 0, 0): attempt to \
                 divide by zero"
            ),
            other => panic!("{other:?}"),
        }
        device.take_panic(None).unwrap();
    }

    #[test]
    fn properties() {
        let info = device_info();
        assert_eq!(info.limits(), DeviceLimits::SM_90);
        assert!(info.name.starts_with("CPU backend ("), "{}", info.name);
        assert_eq!(
            parse_mem_total("MemFree: 1 kB\nMemTotal:  2048 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(parse_mem_total("nothing"), None);
        let text = info.to_string();
        assert!(text.starts_with("CpuBackendProperties("), "{text}");
        assert!(text.contains("max_threads_per_block=1024"), "{text}");
    }
}
