//! Block barriers, memory fences and the cycle counter.

use super::{CpuWriter, CudaWriter, Ret, Signature};
use crate::ir::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    /// `sync_threads()`: every thread of the block waits for the others.
    SyncThreads,
    /// `thread_fence()`: orders this thread's memory accesses device-wide.
    ThreadFence,
    /// `thread_fence_block()`: the same, for the block.
    ThreadFenceBlock,
    /// `thread_fence_system()`: the same, for the host and peer devices too.
    ThreadFenceSystem,
    /// `clock64()`: the multiprocessor's cycle counter.
    Clock64,
}

impl SyncOp {
    const ALL: [SyncOp; 5] = [
        SyncOp::SyncThreads,
        SyncOp::ThreadFence,
        SyncOp::ThreadFenceBlock,
        SyncOp::ThreadFenceSystem,
        SyncOp::Clock64,
    ];

    pub fn from_name(name: &str) -> Option<SyncOp> {
        SyncOp::ALL.into_iter().find(|op| op.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            SyncOp::SyncThreads => "sync_threads",
            SyncOp::ThreadFence => "thread_fence",
            SyncOp::ThreadFenceBlock => "thread_fence_block",
            SyncOp::ThreadFenceSystem => "thread_fence_system",
            SyncOp::Clock64 => "clock64",
        }
    }

    pub fn signature(self) -> Signature {
        match self {
            SyncOp::SyncThreads
            | SyncOp::ThreadFence
            | SyncOp::ThreadFenceBlock
            | SyncOp::ThreadFenceSystem => Signature::new(vec![], Ret::Unit),
            SyncOp::Clock64 => Signature::new(vec![], Ret::Scalar(Scalar::U64)),
        }
    }

    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        let code = match self {
            SyncOp::SyncThreads => "__syncthreads()",
            SyncOp::ThreadFence => "__threadfence()",
            SyncOp::ThreadFenceBlock => "__threadfence_block()",
            SyncOp::ThreadFenceSystem => "__threadfence_system()",
            SyncOp::Clock64 => "((unsigned long long)clock64())",
        };
        w.template(code, None)
    }

    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            SyncOp::SyncThreads => w.template("__t.sync_threads()"),
            SyncOp::ThreadFence => w.template("__t.thread_fence()"),
            SyncOp::ThreadFenceBlock => w.template("__t.thread_fence_block()"),
            SyncOp::ThreadFenceSystem => w.template("__t.thread_fence_system()"),
            SyncOp::Clock64 => w.template("__t.clock64()"),
        }
    }

    pub fn synchronizes(self) -> bool {
        match self {
            SyncOp::SyncThreads => true,
            SyncOp::ThreadFence
            | SyncOp::ThreadFenceBlock
            | SyncOp::ThreadFenceSystem
            | SyncOp::Clock64 => false,
        }
    }
}
