//! What the CPU backend's race checker reports: where each of two threads was and what it
//! did. The checker itself is the CPU backend's (`cpu/racecheck`); these are plain data, so
//! [`crate::Error`] can carry them.

use std::fmt;

/// What a thread was doing where a race checker's report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteAction {
    /// A plain read of memory.
    Read,
    /// A plain write of memory.
    Write,
    /// An atomic read (`atomic_load`).
    AtomicRead,
    /// An atomic read-modify-write or exchange.
    AtomicWrite,
    /// Waiting in a synchronizing operation: `sync_threads` or a warp operation, by name.
    Waits(&'static str),
    /// The thread had returned; `line` is the last line it was seen at.
    Returned,
}

/// One thread at one line of a kernel, as a race checker's report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceSite {
    /// The Rust source file of the kernel.
    pub file: &'static str,
    /// The Rust source line.
    pub line: u32,
    /// The thread's `block_idx()`.
    pub block: [u32; 3],
    /// The thread's `thread_idx()`.
    pub thread: [u32; 3],
    /// What it did there.
    pub action: SiteAction,
}

impl fmt::Display for RaceSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tx, ty, tz] = self.thread;
        let [bx, by, bz] = self.block;
        let who = format!("thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz})");
        let at = if self.file.is_empty() {
            format!("line {}", self.line)
        } else {
            format!("{}:{}", self.file, self.line)
        };
        match self.action {
            SiteAction::Read => write!(f, "a read at {at} by {who}"),
            SiteAction::Write => write!(f, "a write at {at} by {who}"),
            SiteAction::AtomicRead => write!(f, "an atomic read at {at} by {who}"),
            SiteAction::AtomicWrite => write!(f, "an atomic write at {at} by {who}"),
            SiteAction::Waits(op) => write!(f, "{who}, waiting in {op} at {at}"),
            SiteAction::Returned if self.line == 0 => write!(f, "{who}, which returned"),
            SiteAction::Returned => write!(f, "{who}, which returned at or after {at}"),
        }
    }
}
