//! `TwinThread`: the thread a twin runs as, with what it knows about itself held in locals, and
//! `ThreadView`, what an element access or a device function asks of it. A block twin's loop
//! makes one per thread; a per-thread twin makes one from its `ThreadCtx` when it starts.
//!
//! Why a view and not `&ThreadCtx` (measured with `examples/cpu_saxpy.rs`): `ThreadCtx` holds a
//! `Cell`, so rustc cannot tell LLVM that a `&ThreadCtx` is read-only, and every relaxed atomic
//! store of an element might have changed it: each access reloaded the race checker's pointer,
//! and each thread its indices, from memory. A `TwinThread` is a fresh local whose address
//! never leaves the code it is inlined into (the accesses' cold paths and everything else that
//! needs the context get the `&ThreadCtx` inside it), so its fields stay in registers. Device
//! functions' twins are generic over the view, so a block twin's device functions test nothing
//! for the race checker either.

use std::ops::Deref;

use crate::cpu::racecheck::RaceCheck;
use crate::cpu::thread::{Dim3, ThreadCtx};
use crate::cpu::warp::WARP_SIZE;

/// What an element access or a device function needs of the thread running it: the context,
/// whether the launch's race checker is on (asked on every access, so a view may answer from a
/// register), and the indices (which a device function's twin, generic over the view, reads
/// through here).
pub trait ThreadView: sealed::Sealed {
    /// The thread's context.
    fn ctx(&self) -> &ThreadCtx;
    /// Whether the launch runs under the race checker.
    fn race_checked(&self) -> bool;
    /// `threadIdx`.
    fn thread_idx(&self) -> Dim3;
    /// `blockIdx`.
    fn block_idx(&self) -> Dim3;
    /// `blockDim`.
    fn block_dim(&self) -> Dim3;
    /// `gridDim`.
    fn grid_dim(&self) -> Dim3;
    /// The lane: the thread's linear index in its block, modulo 32.
    fn lane_id(&self) -> u32;
    /// Whether the launch runs in checked mode, where `debug_assert!` is active.
    fn checked(&self) -> bool;
}

/// The trait's index methods, answered by the type's own (inherent) methods of those names.
macro_rules! view_indices {
    () => {
        #[inline(always)]
        fn thread_idx(&self) -> Dim3 {
            Self::thread_idx(self)
        }

        #[inline(always)]
        fn block_idx(&self) -> Dim3 {
            Self::block_idx(self)
        }

        #[inline(always)]
        fn block_dim(&self) -> Dim3 {
            Self::block_dim(self)
        }

        #[inline(always)]
        fn grid_dim(&self) -> Dim3 {
            Self::grid_dim(self)
        }

        #[inline(always)]
        fn lane_id(&self) -> u32 {
            Self::lane_id(self)
        }

        #[inline(always)]
        fn checked(&self) -> bool {
            Self::checked(self)
        }
    };
}

/// The launch's race checker as `t` sees it: `None` without a test where `t` knows it is off.
#[inline(always)]
pub(crate) fn racing<V: ThreadView + ?Sized>(t: &V) -> Option<&RaceCheck> {
    if t.race_checked() {
        t.ctx().racing()
    } else {
        None
    }
}

mod sealed {
    /// Only the runtime's thread types are views: the race checker relies on their answers.
    pub trait Sealed {}
    impl Sealed for crate::cpu::thread::ThreadCtx {}
    impl Sealed for super::TwinThread<'_> {}
}

impl ThreadView for ThreadCtx {
    #[inline(always)]
    fn ctx(&self) -> &ThreadCtx {
        self
    }

    #[inline(always)]
    fn race_checked(&self) -> bool {
        self.racing().is_some()
    }

    view_indices!();
}

/// One thread as its twin runs it: its indices, the block's and the grid's, and whether the
/// race checker is on, copied out of its [`ThreadCtx`] (which it dereferences to, for
/// everything else).
pub struct TwinThread<'a> {
    ctx: &'a ThreadCtx,
    thread_idx: Dim3,
    block_idx: Dim3,
    block_dim: Dim3,
    grid_dim: Dim3,
    race_checked: bool,
    /// Whether the thread runs in the owned loop (`ThreadCtx::__each_owned_thread`): a
    /// one-dimensional launch without the race checker, where its global x index is its alone.
    owns_elements: bool,
}

impl ThreadView for TwinThread<'_> {
    #[inline(always)]
    fn ctx(&self) -> &ThreadCtx {
        // A block twin's loop leaves the context's indices unset (a store per thread
        // measurably slows the loop); whatever reads them gets the context through here, so
        // they are set before anything can see them.
        self.ctx.thread_idx.set(self.thread_idx);
        self.ctx.linear.set(self.linear());
        self.ctx
    }

    #[inline(always)]
    fn race_checked(&self) -> bool {
        self.race_checked
    }

    view_indices!();
}

impl Deref for TwinThread<'_> {
    type Target = ThreadCtx;

    #[inline(always)]
    fn deref(&self) -> &ThreadCtx {
        self.ctx()
    }
}

impl TwinThread<'_> {
    /// `threadIdx`.
    #[inline(always)]
    pub fn thread_idx(&self) -> Dim3 {
        self.thread_idx
    }

    /// `blockIdx`.
    #[inline(always)]
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// `blockDim`.
    #[inline(always)]
    pub fn block_dim(&self) -> Dim3 {
        self.block_dim
    }

    /// `gridDim`.
    #[inline(always)]
    pub fn grid_dim(&self) -> Dim3 {
        self.grid_dim
    }

    /// The lane: the thread's linear index in its block, modulo 32.
    #[inline(always)]
    pub fn lane_id(&self) -> u32 {
        self.linear() % WARP_SIZE
    }

    /// The thread's linear index in its block (x fastest), computed when asked: a counter
    /// kept in the loop for it cost an instruction a thread.
    #[inline(always)]
    fn linear(&self) -> u32 {
        let t = self.thread_idx;
        (t.z * self.block_dim.y + t.y) * self.block_dim.x + t.x
    }

    /// Whether the launch runs in checked mode, where `debug_assert!` is active.
    #[inline(always)]
    pub fn checked(&self) -> bool {
        self.ctx.checked()
    }

    /// Whether element `index` of an owned slice is this thread's: in the owned loop, the one
    /// whose index is the thread's global x index. Spelled as the twin spells
    /// `global_idx().x`, so the compiler sees the same value and folds the test.
    #[inline(always)]
    pub(crate) fn owns(&self, index: usize) -> bool {
        self.owns_elements
            && index
                == self.block_idx.x as usize * self.block_dim.x as usize
                    + self.thread_idx.x as usize
    }
}

impl ThreadCtx {
    /// This thread as a view, made once when a per-thread twin starts.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __twin_thread(&self) -> TwinThread<'_> {
        TwinThread {
            ctx: self,
            thread_idx: self.thread_idx(),
            block_idx: self.block_idx,
            block_dim: self.block_dim,
            grid_dim: self.grid_dim,
            race_checked: self.racing().is_some(),
            owns_elements: false,
        }
    }

    /// Whether the launch runs under the race checker: which instantiation of its loop a
    /// block twin runs.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __race_checked(&self) -> bool {
        self.racing().is_some()
    }

    /// Runs `body` as each thread of the block in turn, from linear index `first` on (x
    /// fastest): the loop of a block twin. `RACECHECK` false promises the launch has no race
    /// checker, so accesses skip the test; a twin that breaks the promise is refused.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __each_thread<const RACECHECK: bool>(
        &mut self,
        first: u32,
        mut body: impl FnMut(&TwinThread<'_>),
    ) {
        if !RACECHECK && self.racing().is_some() {
            self.contract_error(
                "the block twin ran its loop without race checks under the race checker; \
                 regenerate it with the matching #[kernel] macro"
                    .to_string(),
            );
            return;
        }
        let race_checked = RACECHECK;
        let dim = self.block_dim;
        let block_idx = self.block_idx;
        let grid_dim = self.grid_dim;
        // Validated launches have nonzero block dimensions; `first` is where the loop resumes
        // after a thread ended in a failed assertion.
        if dim.x == 0 || dim.y == 0 || first >= dim.x * dim.y * dim.z {
            return;
        }
        // Started at `first` rather than testing every thread against it: the inner loop then
        // does nothing but run threads.
        // (Without the divisions in the usual case, a block run from its first thread.)
        let (mut x0, mut y0, z0) = if first == 0 {
            (0, 0, 0)
        } else {
            (
                first % dim.x,
                first / dim.x % dim.y,
                first / (dim.x * dim.y),
            )
        };
        for z in z0..dim.z {
            for y in y0..dim.y {
                for x in x0..dim.x {
                    body(&TwinThread {
                        ctx: self,
                        thread_idx: Dim3 { x, y, z },
                        block_idx,
                        block_dim: dim,
                        grid_dim,
                        race_checked,
                        owns_elements: false,
                    });
                }
                x0 = 0;
            }
            y0 = 0;
        }
    }

    /// Whether the launch lets a block twin run its owned loop: one-dimensional (block and
    /// grid), so a thread's global x index names it alone, and without the race checker,
    /// which must see every access as it happens.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __owned_launch(&self) -> bool {
        let (b, g) = (self.block_dim, self.grid_dim);
        b.y == 1 && b.z == 1 && g.y == 1 && g.z == 1 && self.racing().is_none()
    }

    /// Runs `body` as each thread of a one-dimensional block in turn, from `first` on, as
    /// threads that own the elements of `CpuOwnedSlice`s at their global x index: the loop of
    /// a block twin's owned path. `bound` is the least length of the slices the twin indexes
    /// at that index: threads below it are told so, which lets the compiler drop the twin's
    /// and the views' checks and vectorize them. A launch that is not
    /// [`ThreadCtx::__owned_launch`] is refused.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __each_owned_thread(
        &mut self,
        first: u32,
        bound: usize,
        mut body: impl FnMut(&TwinThread<'_>),
    ) {
        if !self.__owned_launch() {
            self.contract_error(
                "the block twin ran its owned loop in a launch that is not one-dimensional or \
                 runs under the race checker; regenerate it with the matching #[kernel] macro"
                    .to_string(),
            );
            return;
        }
        let dim = self.block_dim;
        let block_idx = self.block_idx;
        let grid_dim = self.grid_dim;
        let base = block_idx.x as usize * dim.x as usize;
        // Threads `first..sure` have `base + x < bound`; the rest run unchanged.
        let sure = bound.saturating_sub(base).min(dim.x as usize) as u32;
        let mut x = first;
        // One call of `body` in the source, so it is inlined once; the two passes are the
        // same loop, and only the first states its bound.
        for (end, below_bound) in [(sure, true), (dim.x, false)] {
            while x < end {
                let t = TwinThread {
                    ctx: self,
                    thread_idx: Dim3 { x, y: 0, z: 0 },
                    block_idx,
                    block_dim: dim,
                    grid_dim,
                    race_checked: false,
                    owns_elements: true,
                };
                if below_bound {
                    // SAFETY: x < sure <= bound - base (sure is 0 when bound <= base), so the
                    // thread's global x index, base + x as `TwinThread::owns` and the twin
                    // compute it, is below `bound` (and, two u32s multiplied and added in a
                    // usize, exact).
                    unsafe { std::hint::assert_unchecked(base + (x as usize) < bound) }
                }
                body(&t);
                x += 1;
            }
        }
    }
}
