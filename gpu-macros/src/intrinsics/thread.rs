//! Where a thread is and how it meets the others: the index builtins, block barriers,
//! memory fences and the cycle counter.

use super::{CpuWriter, CudaWriter, Placement, Ret, Signature};
use crate::types::{Scalar, Ty};

/// The index and dimension builtins: `thread_idx()` and the like, whose components are read
/// as `.x`, `.y`, `.z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    /// `block_idx * block_dim + thread_idx`, per axis, as `usize`.
    GlobalIdx,
    /// `grid_dim * block_dim`, per axis, as `usize`: the stride of a grid-stride loop.
    GridSize,
}

impl Builtin {
    pub const ALL: [Builtin; 6] = [
        Builtin::ThreadIdx,
        Builtin::BlockIdx,
        Builtin::BlockDim,
        Builtin::GridDim,
        Builtin::GlobalIdx,
        Builtin::GridSize,
    ];

    /// The name a user calls.
    pub fn rust_name(self) -> &'static str {
        match self {
            Builtin::ThreadIdx => "thread_idx",
            Builtin::BlockIdx => "block_idx",
            Builtin::BlockDim => "block_dim",
            Builtin::GridDim => "grid_dim",
            Builtin::GlobalIdx => "global_idx",
            Builtin::GridSize => "grid_size",
        }
    }

    /// Three `u32` components, or three `usize` for the grid-wide ones.
    pub fn ty(self) -> Ty {
        match self {
            Builtin::ThreadIdx | Builtin::BlockIdx | Builtin::BlockDim | Builtin::GridDim => {
                Ty::Dim3
            }
            Builtin::GlobalIdx | Builtin::GridSize => Ty::Index3,
        }
    }

    /// The CUDA C++ of component `axis` (`x`, `y` or `z`).
    pub fn cuda(self, a: &str) -> String {
        match self {
            Builtin::ThreadIdx => format!("threadIdx.{a}"),
            Builtin::BlockIdx => format!("blockIdx.{a}"),
            Builtin::BlockDim => format!("blockDim.{a}"),
            Builtin::GridDim => format!("gridDim.{a}"),
            Builtin::GlobalIdx => {
                format!("((unsigned long long)blockIdx.{a} * blockDim.{a} + threadIdx.{a})")
            }
            Builtin::GridSize => format!("((unsigned long long)gridDim.{a} * blockDim.{a})"),
        }
    }

    /// The CPU twin's Rust of component `axis`, from the thread's context.
    pub fn cpu(self, a: &str) -> String {
        match self {
            Builtin::ThreadIdx => format!("__t.thread_idx().{a}"),
            Builtin::BlockIdx => format!("__t.block_idx().{a}"),
            Builtin::BlockDim => format!("__t.block_dim().{a}"),
            Builtin::GridDim => format!("__t.grid_dim().{a}"),
            Builtin::GlobalIdx => format!(
                "(__t.block_idx().{a} as usize * __t.block_dim().{a} as usize + __t.thread_idx().{a} as usize)"
            ),
            Builtin::GridSize => {
                format!("(__t.grid_dim().{a} as usize * __t.block_dim().{a} as usize)")
            }
        }
    }
}

/// The barriers, fences and clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    /// `sync_threads()`: every thread of the block waits for the others.
    SyncThreads,
    /// `grid_sync()`: every thread of the grid waits for the others; the kernel launches
    /// cooperatively.
    GridSync,
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
    const ALL: [SyncOp; 6] = [
        SyncOp::SyncThreads,
        SyncOp::GridSync,
        SyncOp::ThreadFence,
        SyncOp::ThreadFenceBlock,
        SyncOp::ThreadFenceSystem,
        SyncOp::Clock64,
    ];

    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<SyncOp> {
        SyncOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name a user writes.
    pub fn name(self) -> &'static str {
        match self {
            SyncOp::SyncThreads => "sync_threads",
            SyncOp::GridSync => "grid_sync",
            SyncOp::ThreadFence => "thread_fence",
            SyncOp::ThreadFenceBlock => "thread_fence_block",
            SyncOp::ThreadFenceSystem => "thread_fence_system",
            SyncOp::Clock64 => "clock64",
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        match self {
            SyncOp::SyncThreads
            | SyncOp::ThreadFence
            | SyncOp::ThreadFenceBlock
            | SyncOp::ThreadFenceSystem => Signature::new(vec![], Ret::Unit),
            SyncOp::GridSync => Signature::new(vec![], Ret::Unit).placement(Placement::Statement {
                message: "`grid_sync()` is a statement (a grid-wide barrier) and gives no value: \
                          write `grid_sync();` on its own line",
            }),
            SyncOp::Clock64 => Signature::new(vec![], Ret::Scalar(Scalar::U64)),
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        let code = match self {
            SyncOp::SyncThreads => "__syncthreads()",
            SyncOp::GridSync => return w.template("rs_grid_sync()", Some("rs_grid_sync")),
            SyncOp::ThreadFence => "__threadfence()",
            SyncOp::ThreadFenceBlock => "__threadfence_block()",
            SyncOp::ThreadFenceSystem => "__threadfence_system()",
            SyncOp::Clock64 => "((unsigned long long)clock64())",
        };
        w.template(code, None)
    }

    /// The CPU twin's Rust of a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            SyncOp::SyncThreads => w.template("__t.at({line}).sync_threads()"),
            SyncOp::GridSync => w.template("__t.at({line}).grid_sync()"),
            SyncOp::ThreadFence => w.template("__t.thread_fence()"),
            SyncOp::ThreadFenceBlock => w.template("__t.thread_fence_block()"),
            SyncOp::ThreadFenceSystem => w.template("__t.thread_fence_system()"),
            SyncOp::Clock64 => w.template("__t.clock64()"),
        }
    }

    /// Whether every thread named must reach the call before any leaves it.
    pub fn synchronizes(self) -> bool {
        match self {
            SyncOp::SyncThreads | SyncOp::GridSync => true,
            SyncOp::ThreadFence
            | SyncOp::ThreadFenceBlock
            | SyncOp::ThreadFenceSystem
            | SyncOp::Clock64 => false,
        }
    }
}
