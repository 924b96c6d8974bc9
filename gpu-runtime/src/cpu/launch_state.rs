//! What the threads of one launch report, from any worker: the first checked-mode violation
//! and the first broken contract, which aborts the launch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::cpu::racecheck::RaceCheck;

/// A checked-mode violation or a failed assertion, as the GPU's error slot records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The Rust source line.
    pub(crate) line: u32,
    /// The failing thread's block.
    pub(crate) block: [u32; 3],
    /// The failing thread's index in its block.
    pub(crate) thread: [u32; 3],
    /// What failed.
    pub(crate) what: Failure,
}

/// What a thread's failure was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A checked-mode violation: `kind` 1 index out of bounds (`index`, `len`), 2 division by
    /// zero, 3 division overflow.
    Check { kind: u32, index: u64, len: u64 },
    /// A failed `assert!` or a `panic!`, written in `file`, with its formatted message.
    Assertion { file: &'static str, message: String },
}

/// What the threads of one launch report, from any worker.
#[derive(Default)]
pub(crate) struct LaunchState {
    /// Whether the launch runs in checked mode (`debug_assert!` is active).
    pub(crate) checked: bool,
    /// The first checked-mode violation.
    pub(crate) violation: OnceLock<Violation>,
    /// The first broken contract, deadlock or twin panic: the launch's error.
    pub(crate) error: OnceLock<String>,
    /// Set with `error`: blocks not yet started are skipped.
    aborted: AtomicBool,
    /// The race checker, when the launch runs under it.
    pub(crate) race: Option<RaceCheck>,
}

impl LaunchState {
    /// A launch's state, checked or not, under the race checker `race` or not.
    pub(crate) fn new(checked: bool, race: Option<RaceCheck>) -> LaunchState {
        LaunchState {
            checked,
            race,
            ..LaunchState::default()
        }
    }

    /// Records a checked-mode violation or failed assertion; only the launch's first is kept.
    pub(crate) fn fail(&self, violation: Violation) {
        let _ = self.violation.set(violation);
    }

    /// Records why the launch fails; only the first reason is kept.
    pub(crate) fn contract_error(&self, reason: String) {
        let _ = self.error.set(reason);
        self.aborted.store(true, Ordering::Relaxed);
    }

    /// Whether the launch has failed, so blocks not yet started are skipped.
    #[inline]
    pub(crate) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed) || self.race.as_ref().is_some_and(RaceCheck::reported)
    }
}
