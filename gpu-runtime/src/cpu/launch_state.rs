//! What the threads of one launch report, from any worker: the first checked-mode violation
//! and the first broken contract, which aborts the launch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// A checked-mode violation, as the GPU's error slot records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// 1 index out of bounds, 2 division by zero, 3 division overflow.
    pub(crate) kind: u32,
    /// The Rust source line.
    pub(crate) line: u32,
    /// The index, for an out-of-bounds one.
    pub(crate) index: u64,
    /// The length indexed, for an out-of-bounds one.
    pub(crate) len: u64,
}

/// What the threads of one launch report, from any worker.
#[derive(Debug, Default)]
pub(crate) struct LaunchState {
    /// The first checked-mode violation.
    pub(crate) violation: OnceLock<Violation>,
    /// The first broken contract, deadlock or twin panic: the launch's error.
    pub(crate) error: OnceLock<String>,
    /// Set with `error`: blocks not yet started are skipped.
    aborted: AtomicBool,
}

impl LaunchState {
    /// Records a checked-mode violation; only the launch's first is kept.
    pub(crate) fn fail(&self, kind: u32, line: u32, index: u64, len: u64) {
        let _ = self.violation.set(Violation {
            kind,
            line,
            index,
            len,
        });
    }

    /// Records why the launch fails; only the first reason is kept.
    pub(crate) fn contract_error(&self, reason: String) {
        let _ = self.error.set(reason);
        self.aborted.store(true, Ordering::Relaxed);
    }

    /// Whether the launch has failed, so blocks not yet started are skipped.
    #[inline]
    pub(crate) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }
}
