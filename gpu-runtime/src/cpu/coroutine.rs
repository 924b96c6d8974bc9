//! A thread of a kernel that synchronizes runs as a coroutine: why it suspends, the handle it
//! suspends through, and the coroutine itself.

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

use crate::cpu::warp::Deposit;

/// Why a coroutine thread suspended.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// At the `sync_threads` of this source line.
    Block(u32),
    /// At the `grid_sync` of this source line.
    Grid(u32),
    /// In a warp operation.
    Warp(Deposit),
    /// Polling an mbarrier: runnable again after the others have run.
    Spin,
}

/// The coroutine handle a thread suspends through; the resume value is a warp result.
pub(crate) type Yielder = corosensei::Yielder<u64, Wait>;

/// One thread of a block as a coroutine: it suspends with a [`Wait`] and is resumed with a warp
/// result.
pub(crate) type ThreadCoroutine = Coroutine<u64, Wait, (), DefaultStack>;
