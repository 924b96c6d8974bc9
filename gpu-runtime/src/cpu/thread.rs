//! `ThreadCtx`: what one CPU "thread" of the grid knows and can do — its indices, barriers,
//! warp exchanges, and the checked-mode error report. Its shared memory is in
//! `shared_memory.rs`, above `CpuSlice`, which reports through it.

use std::cell::Cell;
use std::sync::atomic::{fence, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use crate::core::scalar::Scalar;
use crate::cpu::block::BlockShared;
use crate::cpu::coroutine::{Wait, Yielder};
use crate::cpu::launch_state::{Failure, LaunchState, Violation};
use crate::cpu::racecheck::RaceCheck;
use crate::cpu::warp::{Deposit, WarpOp, WARP_SIZE};

/// Three dimensions of an index or a size, as CUDA's `dim3`/`uint3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Along x (the fastest-varying dimension).
    pub x: u32,
    /// Along y.
    pub y: u32,
    /// Along z.
    pub z: u32,
}

impl Dim3 {
    /// `(x, y, z)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// The unwinding payload that ends a thread after a failed assertion: the runner catches it and
/// goes on with the block's other threads.
pub(crate) struct ThreadExit;

/// Runs `body` as one thread: returns normally when the thread ended with a failed assertion,
/// and passes any other panic on.
#[inline(always)]
pub(crate) fn run_thread(body: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        if !payload.is::<ThreadExit>() {
            std::panic::resume_unwind(payload);
        }
    }
}

/// One CPU "thread" of the grid, as its kernel's CPU twin sees it. Only the runtime makes
/// them; a twin receives `&ThreadCtx` for the duration of one thread's run.
pub struct ThreadCtx {
    /// `threadIdx`; a block twin's loop sets it only when something may read it
    /// (`TwinThread::ctx`).
    pub(crate) thread_idx: Cell<Dim3>,
    pub(crate) block_idx: Dim3,
    pub(crate) block_dim: Dim3,
    pub(crate) grid_dim: Dim3,
    /// The thread's linear index in its block (x fastest).
    pub(crate) linear: Cell<u32>,
    /// Block-wide memory, on the worker running this block.
    pub(crate) block: *const BlockShared,
    /// Launch-wide state, shared by every worker.
    pub(crate) launch: *const LaunchState,
    /// The thread's coroutine when the kernel synchronizes; null for barrier-free kernels,
    /// whose threads run one after another as plain calls.
    pub(crate) yielder: *const Yielder,
    /// The launch's race checker; null when it is off.
    pub(crate) race: *const RaceCheck,
    /// The source line of the synchronizing operation the thread is about to run.
    pub(crate) site: Cell<u32>,
}

impl ThreadCtx {
    /// The launch this thread belongs to.
    #[inline(always)]
    fn launch(&self) -> &LaunchState {
        // SAFETY: the runtime makes a ThreadCtx only while its launch state is alive, and the
        // twin only borrows the ThreadCtx for the run of its thread.
        unsafe { &*self.launch }
    }

    /// The block this thread belongs to.
    #[inline(always)]
    pub(crate) fn block(&self) -> &BlockShared {
        // SAFETY: as for `launch`: the block state outlives every thread run in it.
        unsafe { &*self.block }
    }

    /// The thread's linear index in its block (x fastest).
    #[inline(always)]
    pub(crate) fn linear(&self) -> u32 {
        self.linear.get()
    }

    /// The launch's race checker, when it is on.
    #[inline(always)]
    pub(crate) fn racing(&self) -> Option<&RaceCheck> {
        // SAFETY: non-null only while the launch's checker, which outlives every thread run,
        // is alive (set from the launch state).
        unsafe { self.race.as_ref() }
    }

    /// Notes that the synchronizing operation called next is at source `line` (the race
    /// checker names it in reports); returns `self` to call it on.
    #[inline(always)]
    pub fn at(&self, line: u32) -> &Self {
        self.site.set(line);
        if self.racing().is_some() {
            if let Some(local) = self.block().race() {
                local.seen(self.linear(), line);
            }
        }
        self
    }

    /// The coroutine to suspend, `None` for a barrier-free kernel.
    #[inline(always)]
    fn yielder(&self) -> Option<&Yielder> {
        // SAFETY: non-null only while running inside the coroutine whose yielder it is; the
        // ThreadCtx lives on that coroutine's stack.
        unsafe { self.yielder.as_ref() }
    }

    /// `threadIdx`.
    #[inline(always)]
    pub fn thread_idx(&self) -> Dim3 {
        self.thread_idx.get()
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

    /// Threads per block.
    pub(crate) fn block_threads(&self) -> u32 {
        self.block_dim.x * self.block_dim.y * self.block_dim.z
    }

    /// Threads per warp: 32.
    #[inline(always)]
    pub fn warp_size(&self) -> u32 {
        WARP_SIZE
    }

    /// `__syncthreads()`: waits until every thread of the block that has not returned arrives.
    pub fn sync_threads(&self) {
        match self.yielder() {
            Some(yielder) => {
                yielder.suspend(Wait::Block(self.site.get()));
            }
            None => self.needs_sync_error("sync_threads"),
        }
    }

    /// `grid_sync()`: waits until every thread of the grid that has not returned arrives; the
    /// kernel runs as a cooperative launch, every block resident at once.
    pub fn grid_sync(&self) {
        match self.yielder() {
            Some(yielder) => {
                yielder.suspend(Wait::Grid(self.site.get()));
            }
            None => self.needs_sync_error("grid_sync"),
        }
    }

    /// Lets the block's other threads run before this one goes on (polling an mbarrier);
    /// false, with the error reported, for a kernel that runs its threads one after another.
    pub(crate) fn spin(&self) -> bool {
        match self.yielder() {
            Some(yielder) => {
                yielder.suspend(Wait::Spin);
                true
            }
            None => {
                self.needs_sync_error("mbarrier_wait");
                false
            }
        }
    }

    /// `__syncwarp()`: waits for every lane of the warp that has not returned.
    pub fn sync_warp(&self) {
        self.warp(WarpOp::Sync, u32::MAX, 0, 0);
    }

    /// `__threadfence()`: a sequentially consistent fence.
    #[inline]
    pub fn thread_fence(&self) {
        fence(Ordering::SeqCst);
        if let Some(race) = self.racing() {
            race.fence(self);
        }
    }

    /// `__threadfence_block()`: a sequentially consistent fence.
    #[inline]
    pub fn thread_fence_block(&self) {
        fence(Ordering::SeqCst);
    }

    /// `__threadfence_system()`: a sequentially consistent fence.
    #[inline]
    pub fn thread_fence_system(&self) {
        self.thread_fence();
    }

    /// `__activemask()`: the lanes of this warp that exist and have not returned. (Between
    /// barriers a barrier-free kernel runs its threads in order, so there the lanes after this
    /// one.)
    pub fn active_mask(&self) -> u32 {
        let warp = self.linear() / WARP_SIZE;
        match self.yielder() {
            // A rendezvous, as a vote: on the GPU the converged lanes read it together, so a
            // lane that runs on after it does not drop out of an earlier lane's answer.
            Some(_) => self.ballot_sync(self.block().live_mask(warp), true),
            None => self.block().lanes_from(self.linear()),
        }
    }

    /// `clock64()`: nanoseconds since the process first asked, a monotonic counter.
    pub fn clock64(&self) -> u64 {
        static START: OnceLock<Instant> = OnceLock::new();
        let start = *START.get_or_init(Instant::now);
        u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// `__shfl_sync(mask, value, src_lane)`: `value` of lane `src_lane % 32` (width 32); a
    /// source lane outside `mask` or returned gives the caller's own value.
    pub fn shfl_sync<T: Scalar>(&self, mask: u32, value: T, src_lane: u32) -> T {
        T::from_bits(self.warp(WarpOp::Index, mask, value.to_bits(), src_lane))
    }

    /// `__shfl_up_sync`: `value` of lane `lane - delta`; lanes below `delta` keep their own.
    pub fn shfl_up_sync<T: Scalar>(&self, mask: u32, value: T, delta: u32) -> T {
        T::from_bits(self.warp(WarpOp::Up, mask, value.to_bits(), delta))
    }

    /// `__shfl_down_sync`: `value` of lane `lane + delta`; lanes with `lane + delta >= 32`
    /// keep their own.
    pub fn shfl_down_sync<T: Scalar>(&self, mask: u32, value: T, delta: u32) -> T {
        T::from_bits(self.warp(WarpOp::Down, mask, value.to_bits(), delta))
    }

    /// `__shfl_xor_sync`: `value` of lane `lane ^ lane_mask` (own value when that is >= 32).
    pub fn shfl_xor_sync<T: Scalar>(&self, mask: u32, value: T, lane_mask: u32) -> T {
        T::from_bits(self.warp(WarpOp::Xor, mask, value.to_bits(), lane_mask))
    }

    /// `__all_sync`: whether `pred` holds on every participating lane.
    pub fn all_sync(&self, mask: u32, pred: bool) -> bool {
        self.warp(WarpOp::All, mask, u64::from(pred), 0) != 0
    }

    /// `__any_sync`: whether `pred` holds on some participating lane.
    pub fn any_sync(&self, mask: u32, pred: bool) -> bool {
        self.warp(WarpOp::Any, mask, u64::from(pred), 0) != 0
    }

    /// `__ballot_sync`: bit `i` set when lane `i` participates and its `pred` holds.
    pub fn ballot_sync(&self, mask: u32, pred: bool) -> u32 {
        self.warp(WarpOp::Ballot, mask, u64::from(pred), 0) as u32
    }

    /// `cp.async.commit_group`: nothing to do, as the CPU's copies land at once.
    pub fn cp_async_commit(&self) {}

    /// `cp.async.wait_group n`: nothing to wait for, as the CPU's copies land at once.
    pub fn cp_async_wait(&self, _pending: u32) {}

    /// `wgmma.fence`: nothing to order, as the CPU's multiplies run at their call.
    pub fn wgmma_fence(&self) {}

    /// `wgmma.commit_group`: nothing to group, as the CPU's multiplies run at their call.
    pub fn wgmma_commit(&self) {}

    /// `wgmma.wait_group n`: nothing to wait for, as the CPU's multiplies run at their call.
    /// Under the race checker it is what it is on a GPU, an instruction the whole warp runs
    /// together (`.sync.aligned`): after it every lane's operand reads are done, which a
    /// kernel relies on when one lane then frees the operands' stage for the others.
    pub fn wgmma_wait(&self, _pending: u32) {
        if self.racing().is_some() && self.yielder().is_some() {
            let warp = self.linear() / WARP_SIZE;
            self.warp(WarpOp::Sync, self.block().live_mask(warp), 0, 0);
        }
    }

    /// `fence.proxy.async`: the CPU has one view of shared memory, so nothing to order.
    pub fn fence_proxy_async(&self) {}

    /// Reports a checked-mode violation: `kind` 1 index out of bounds (`index`, `len`), 2
    /// division by zero, 3 division overflow, 5 an integer logarithm of a value below 1, at
    /// Rust source `line`. The launch's first one
    /// surfaces as [`crate::Error::KernelPanic`] from the stream's next synchronizing call.
    #[cold]
    #[inline(never)]
    pub fn fail(&self, kind: u32, line: u32, index: u64, len: u64) {
        self.record(line, Failure::Check { kind, index, len });
    }

    /// Whether the launch runs in checked mode, where `debug_assert!` is active.
    #[inline(always)]
    pub fn checked(&self) -> bool {
        self.launch().checked
    }

    /// A failed `assert!` or a `panic!` at `file:line` with its formatted `message`: records
    /// it (the launch's first failure surfaces as [`crate::Error::KernelPanic`] from the
    /// stream's next synchronizing call) and ends this thread, as the GPU's thread exits.
    #[cold]
    #[inline(never)]
    pub fn assert_failed(&self, file: &'static str, line: u32, message: String) -> ! {
        self.record(line, Failure::Assertion { file, message });
        // Unwinds to the runner, which ends this thread only; `resume_unwind` skips the panic
        // hook, so nothing is printed for a panic that becomes the launch's error.
        std::panic::resume_unwind(Box::new(ThreadExit))
    }

    fn record(&self, line: u32, what: Failure) {
        let dim = |d: Dim3| [d.x, d.y, d.z];
        self.launch().fail(Violation {
            line,
            block: dim(self.block_idx),
            thread: dim(self.thread_idx()),
            what,
        });
    }

    /// Reports a broken contract between twin and runtime; the launch returns it as an error.
    #[cold]
    #[inline(never)]
    pub(crate) fn contract_error(&self, reason: String) {
        self.launch().contract_error(reason);
    }

    #[cold]
    #[inline(never)]
    fn needs_sync_error(&self, what: &str) {
        self.contract_error(format!(
            "the twin calls {what} but the kernel was built with needs_sync = false, so its \
             threads run one after another without barriers; build it with needs_sync = true \
             (regenerate it with the matching #[kernel] macro)"
        ));
    }

    /// Deposits this lane's part of a warp operation and waits for the others.
    pub(crate) fn warp(&self, op: WarpOp, mask: u32, bits: u64, arg: u32) -> u64 {
        let deposit = Deposit {
            op,
            mask,
            bits,
            arg,
            line: self.site.get(),
        };
        match self.yielder() {
            Some(yielder) => yielder.suspend(Wait::Warp(deposit)),
            None => {
                self.needs_sync_error(op.name());
                // As if this lane were alone in its warp.
                crate::cpu::warp::alone(self.lane_id(), deposit)
            }
        }
    }
}
