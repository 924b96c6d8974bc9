//! Cooperative launches (kernels that call `grid_sync`) on the CPU: every block resident at
//! once, all on the launching OS thread.
//!
//! Each block keeps its own block state (shared memory, warp lanes, the race checker's epochs)
//! and its own coroutine scheduler. A phase runs each block's threads in turn until every
//! thread that has not returned waits at a `grid_sync`; when every block has got there, the
//! runner releases them all and the next phase starts. One OS thread rather than one per
//! block: a grid barrier is then a loop over the blocks, costing coroutine switches (tens of
//! nanoseconds a thread) instead of an OS-thread barrier (tens of microseconds, see
//! `exec.rs`), which matters for persistent kernels that meet thousands of times; and the
//! order is deterministic. The price is parallelism: a cooperative launch uses one core.
//!
//! Residency: every thread of the grid is a suspended coroutine with its own stack, so the
//! backend holds at most [`COOPERATIVE_THREADS`] threads at once (`max_cooperative_blocks`
//! divides it by the block size); a larger grid is `Error::CooperativeGridTooLarge`, as on a
//! GPU.

use super::*;
use crate::core::race::SiteAction;
use crate::cpu::schedule::{describe_dim, Phase};

/// Threads a cooperative launch may have on the CPU backend: 16,384 coroutine stacks of 256 KiB
/// reserve 4 GiB of address space (only touched pages cost memory) and about 32,768 memory
/// mappings, half of Linux's default `vm.max_map_count`.
pub(crate) const COOPERATIVE_THREADS: u32 = 16 * 1024;

/// Stacks a cooperative launch gives back to the thread's pool; the rest are unmapped, so a
/// large grid does not keep its touched stack pages for the life of the thread.
const KEPT_STACKS: usize = 1024;

/// The most blocks of `block_threads` threads a cooperative launch may have on the CPU backend.
pub(crate) fn max_cooperative_blocks(block_threads: u32) -> u32 {
    COOPERATIVE_THREADS / block_threads.max(1)
}

/// One resident block of a cooperative grid.
struct Resident {
    block_idx: Dim3,
    /// Declared before `shared`, so dropped before it (should the runner unwind): the threads
    /// point at it.
    coroutines: Vec<ThreadCoroutine>,
    /// Boxed: the block's threads point at it while it moves around in the runner's list.
    shared: Box<BlockShared>,
    scheduler: Scheduler,
    phase: Phase,
}

impl Grid<'_> {
    /// Runs a cooperative grid: every block resident, released together at each `grid_sync`.
    pub(super) fn run_cooperative(&self) {
        // Launches check the block count against `max_cooperative_blocks` first.
        let blocks =
            u64::from(self.grid_dim.x) * u64::from(self.grid_dim.y) * u64::from(self.grid_dim.z);
        let threads = self.threads_per_block();
        let mut stacks = Vec::new();
        let total = usize::try_from(blocks * u64::from(threads)).unwrap_or(usize::MAX);
        if let Err(reason) = take_stacks(&mut stacks, total) {
            self.state.contract_error(reason);
            return;
        }
        let mut residents = Vec::new();
        for block in 0..blocks {
            residents.push(self.resident(block, &mut stacks));
        }
        let race = self.state.race.as_ref();
        while !self.state.aborted() {
            for resident in residents.iter_mut().filter(|r| r.phase == Phase::AtGrid) {
                let grid = self;
                resident.phase = resident.scheduler.run_phase(
                    &mut resident.coroutines,
                    &resident.shared,
                    self.state,
                    resident.block_idx,
                    |linear| grid.thread_idx(linear),
                );
                if self.state.aborted() {
                    break;
                }
            }
            if self.state.aborted() {
                break;
            }
            let waiting = residents.iter().find(|r| r.phase == Phase::AtGrid);
            let Some(waiting) = waiting else {
                // Every block has returned.
                break;
            };
            // After a panic a GPU's grid barriers stop waiting (the launch then reports it), so
            // a block whose threads all ended in a failed assertion does not hang the others.
            let panicked = self.state.violation.get().is_some();
            match residents.iter().find(|r| r.phase == Phase::Done) {
                Some(done) if !panicked => {
                    self.block_never_arrives(waiting, done);
                    break;
                }
                Some(_) | None => {}
            }
            for resident in &mut residents {
                resident.scheduler.release_grid(&resident.shared, race);
            }
        }
        for resident in residents {
            finish(resident.coroutines, &mut stacks);
        }
        stacks.truncate(KEPT_STACKS);
        let _ = STACKS.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                pool.extend(stacks);
            }
        });
    }

    /// Block `block` with its threads created and suspended at their start.
    fn resident(&self, block: u64, stacks: &mut Vec<DefaultStack>) -> Resident {
        let threads = self.threads_per_block();
        let shared = Box::new(BlockShared::new(
            threads,
            self.dynamic_shared,
            self.limits,
            self.state.race.is_some(),
        ));
        shared.begin_block();
        if let Some(race) = shared.race() {
            // Cooperative grids hold at most COOPERATIVE_THREADS threads, so few blocks.
            race.begin(u32::try_from(block).unwrap_or(u32::MAX));
        }
        let block_idx = self.block_idx(block);
        let mut coroutines = Vec::with_capacity(threads as usize);
        for linear in 0..threads {
            let Some(stack) = stacks.pop() else {
                break;
            };
            let base = ThreadCtx {
                thread_idx: Cell::new(self.thread_idx(linear)),
                block_idx,
                block_dim: self.block_dim,
                grid_dim: self.grid_dim,
                linear: Cell::new(linear),
                block: &*shared,
                launch: self.state,
                yielder: std::ptr::null(),
                race: self
                    .state
                    .race
                    .as_ref()
                    .map_or(std::ptr::null(), |race| race as *const RaceCheck),
                site: Cell::new(0),
            };
            let twin = self.twin;
            let args = self.args;
            let body = move |yielder: &Yielder, _start: u64| {
                let ctx = ThreadCtx { yielder, ..base };
                run_thread(|| twin(args, &ctx));
            };
            // SAFETY: the body borrows `args` (alive for the whole launch) and points at the
            // block's boxed state and the launch state, which outlive it: `run_cooperative`
            // runs every coroutine to completion or unwinds it (`finish`) before it returns or
            // drops the box, and none is ever forgotten.
            coroutines.push(unsafe { Coroutine::with_stack_unchecked(stack, body) });
        }
        Resident {
            block_idx,
            coroutines,
            shared,
            scheduler: Scheduler::new(threads),
            // Not started: the first phase runs it.
            phase: Phase::AtGrid,
        }
    }

    /// Block `done` returned while `waiting` waits at a `grid_sync` it can never pass (on a
    /// GPU, a hang).
    #[cold]
    fn block_never_arrives(&self, waiting: &Resident, done: &Resident) {
        let (thread, line) = waiting.scheduler.grid_waiter().unwrap_or((0, 0));
        if let (Some(race), Some(local), Some(gone)) = (
            self.state.race.as_ref(),
            waiting.shared.race(),
            done.shared.race(),
        ) {
            let last = done.coroutines.len().saturating_sub(1) as u32;
            race.report(RaceReport::Divergent {
                waiting: race.site(
                    local.block_linear(),
                    thread,
                    line,
                    SiteAction::Waits("grid_sync"),
                ),
                other: race.site(
                    gone.block_linear(),
                    last,
                    gone.last_line(last),
                    SiteAction::Returned,
                ),
            });
            return;
        }
        self.state.contract_error(format!(
            "deadlock: block {} waits at grid_sync (line {line}) but every thread of block {} \
             has returned, so it never arrives. Every block must reach every grid_sync (on a GPU \
             this hangs): move the grid_sync out of the condition, or let every block reach it \
             before returning",
            describe_dim(waiting.block_idx),
            describe_dim(done.block_idx),
        ));
    }
}
