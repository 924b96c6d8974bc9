//! Scheduling one block's threads as coroutines: round-robin on the block's worker, with
//! `sync_threads` barriers, warp rendezvous, and deadlock detection.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};

use corosensei::CoroutineResult;

use crate::core::race::SiteAction;
use crate::cpu::block::BlockShared;
use crate::cpu::coroutine::{ThreadCoroutine, Wait};
use crate::cpu::launch_state::LaunchState;
use crate::cpu::racecheck::{RaceCheck, RaceReport};
use crate::cpu::thread::Dim3;
use crate::cpu::warp::{Rendezvous, WARP_SIZE};

/// Where a coroutine thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Runnable,
    AtBarrier,
    /// At a `grid_sync`: released by the cooperative grid's runner once every block waits.
    AtGrid,
    InWarpOp,
    Returned,
}

/// Where a block's threads stand when none can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Every thread has returned.
    Done,
    /// Every thread that has not returned waits at a `grid_sync`.
    AtGrid,
    /// The block failed (deadlock, divergence, a panicking twin), recorded in the launch state.
    Failed,
}

/// The message of a panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Round-robin scheduling of one block's coroutine threads.
pub(crate) struct Scheduler {
    status: Vec<Status>,
    /// What each thread's next resume passes in (a warp operation's result).
    input: Vec<u64>,
    runnable: VecDeque<u32>,
    warps: Vec<Rendezvous>,
    live: u32,
    at_barrier: u32,
    at_grid: u32,
    /// Per thread: the line of the barrier it waits at.
    lines: Vec<u32>,
}

impl Scheduler {
    pub(crate) fn new(threads: u32) -> Self {
        Scheduler {
            status: vec![Status::Runnable; threads as usize],
            input: vec![0; threads as usize],
            runnable: (0..threads).collect(),
            warps: vec![Rendezvous::default(); threads.div_ceil(WARP_SIZE) as usize],
            live: threads,
            at_barrier: 0,
            at_grid: 0,
            lines: vec![0; threads as usize],
        }
    }

    /// Runs the block's threads until all have returned, recording a deadlock or a twin's
    /// panic in `state`; `thread_idx` turns a linear thread index into the thread's index.
    pub(crate) fn run(
        &mut self,
        coroutines: &mut [ThreadCoroutine],
        block: &BlockShared,
        state: &LaunchState,
        block_idx: Dim3,
        thread_idx: impl Fn(u32) -> Dim3,
    ) {
        if self.run_phase(coroutines, block, state, block_idx, thread_idx) == Phase::AtGrid {
            state.contract_error(format!(
                "its threads wait at grid_sync (line {}), but it was not launched cooperatively: \
                 the kernel must be marked cooperative (Kernel::__cooperative, which the \
                 #[kernel] macro adds to every kernel that reaches grid_sync)",
                self.grid_line()
            ));
        }
    }

    /// Runs the block's threads until none can run: all returned, or all that have not wait
    /// at a `grid_sync`, or a failure recorded in `state`.
    pub(crate) fn run_phase(
        &mut self,
        coroutines: &mut [ThreadCoroutine],
        block: &BlockShared,
        state: &LaunchState,
        block_idx: Dim3,
        thread_idx: impl Fn(u32) -> Dim3,
    ) -> Phase {
        // One catch_unwind around the whole loop rather than one per resume: a switch is a few
        // nanoseconds, and every extra call level between switches costs a mispredicted return.
        let mut current = 0;
        let race = state.race.as_ref();
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            self.schedule(coroutines, block, race, &mut current);
        }));
        match ran {
            Ok(()) if self.live > 0 && self.at_grid == self.live => return Phase::AtGrid,
            Ok(()) if self.live > 0 => {
                if race.is_some_and(|race| self.divergent_deadlock(block, race)) {
                    // The race report is the launch's error; the block only has to end.
                } else {
                    state.contract_error(self.describe_deadlock(block_idx, block));
                }
            }
            Ok(()) => return Phase::Done,
            Err(payload) => state.contract_error(format!(
                "its CPU twin panicked in thread {} of block {}: {}",
                describe_dim(thread_idx(current)),
                describe_dim(block_idx),
                panic_text(payload.as_ref())
            )),
        }
        Phase::Failed
    }

    /// The line of a `grid_sync` a thread of the block waits at (0 when none does).
    pub(crate) fn grid_line(&self) -> u32 {
        self.status
            .iter()
            .position(|&s| s == Status::AtGrid)
            .map_or(0, |thread| self.lines[thread])
    }

    /// A thread of the block that waits at a `grid_sync`, with its line.
    pub(crate) fn grid_waiter(&self) -> Option<(u32, u32)> {
        let thread = self.status.iter().position(|&s| s == Status::AtGrid)?;
        Some((thread as u32, self.lines[thread]))
    }

    /// Releases the block's threads from the `grid_sync` every live thread of the grid waits
    /// at; under the race checker, first reports a thread of the block that returned or waits
    /// at another `grid_sync`, and orders everything before the barrier before everything
    /// after it.
    pub(crate) fn release_grid(&mut self, block: &BlockShared, race: Option<&RaceCheck>) {
        if let Some(race) = race {
            self.check_waiters(block, race, Status::AtGrid, "grid_sync");
            if let Some(local) = block.race() {
                local.grid_barrier();
            }
        }
        for (linear, status) in self.status.iter_mut().enumerate() {
            if *status == Status::AtGrid {
                *status = Status::Runnable;
                self.runnable.push_back(linear as u32);
            }
        }
        self.at_grid = 0;
    }

    /// Resumes runnable threads until none is left; `current` names the one running.
    fn schedule(
        &mut self,
        coroutines: &mut [ThreadCoroutine],
        block: &BlockShared,
        race: Option<&RaceCheck>,
        current: &mut u32,
    ) {
        while let Some(linear) = self.runnable.pop_front() {
            let Some(coroutine) = coroutines.get_mut(linear as usize) else {
                continue;
            };
            *current = linear;
            let warp = linear / WARP_SIZE;
            match coroutine.resume(self.input[linear as usize]) {
                CoroutineResult::Yield(Wait::Block(line)) => {
                    self.status[linear as usize] = Status::AtBarrier;
                    self.lines[linear as usize] = line;
                    self.at_barrier += 1;
                    self.release_barrier(block, race);
                }
                CoroutineResult::Yield(Wait::Grid(line)) => {
                    self.status[linear as usize] = Status::AtGrid;
                    self.lines[linear as usize] = line;
                    self.at_grid += 1;
                }
                CoroutineResult::Yield(Wait::Spin) => {
                    self.runnable.push_back(linear);
                }
                CoroutineResult::Yield(Wait::Warp(deposit)) => {
                    self.status[linear as usize] = Status::InWarpOp;
                    self.warps[warp as usize].deposit(linear % WARP_SIZE, deposit);
                    self.release_warp(warp, block, race);
                }
                CoroutineResult::Return(()) => {
                    self.status[linear as usize] = Status::Returned;
                    self.live -= 1;
                    block.retire(linear);
                    self.release_barrier(block, race);
                    self.release_warp(warp, block, race);
                }
            }
        }
    }

    /// Releases the block barrier once every live thread waits at it.
    fn release_barrier(&mut self, block: &BlockShared, race: Option<&RaceCheck>) {
        if self.at_barrier == 0 || self.at_barrier < self.live {
            return;
        }
        if let Some(race) = race {
            if let Some(local) = block.race() {
                local.barrier();
            }
            self.check_waiters(block, race, Status::AtBarrier, "sync_threads");
        }
        for (linear, status) in self.status.iter_mut().enumerate() {
            if *status == Status::AtBarrier {
                *status = Status::Runnable;
                self.runnable.push_back(linear as u32);
            }
        }
        self.at_barrier = 0;
    }

    /// Releases every group of warp `warp` whose lanes have all deposited.
    fn release_warp(&mut self, warp: u32, block: &BlockShared, race: Option<&RaceCheck>) {
        let live = block.live_mask(warp);
        let mut results = [0u64; WARP_SIZE as usize];
        let Some(rendezvous) = self.warps.get_mut(warp as usize) else {
            return;
        };
        while let Some(group) = rendezvous.ready_group(live) {
            if let Some(race) = race {
                check_warp_group(rendezvous, warp, group, block, race);
            }
            rendezvous.release(group, &mut results);
            let mut members = group;
            while members != 0 {
                let lane = members.trailing_zeros();
                members &= members - 1;
                let linear = (warp * WARP_SIZE + lane) as usize;
                self.input[linear] = results[lane as usize];
                self.status[linear] = Status::Runnable;
                self.runnable.push_back(linear as u32);
            }
        }
    }

    /// The race checker's view of a barrier (`waiting` threads at the operation `name`) about
    /// to release: every thread that has not returned waits at it; one that returned, or waits
    /// at another line, never comes.
    fn check_waiters(
        &self,
        block: &BlockShared,
        race: &RaceCheck,
        waiting: Status,
        name: &'static str,
    ) {
        let Some(local) = block.race() else {
            return;
        };
        if race.reported() {
            return;
        }
        let Some(waiter) = self.status.iter().position(|&s| s == waiting) else {
            return;
        };
        let line = self.lines[waiter];
        let other = self
            .status
            .iter()
            .enumerate()
            .find_map(|(thread, &status)| {
                let thread = thread as u32;
                match status {
                    Status::Returned => {
                        Some((thread, local.last_line(thread), SiteAction::Returned))
                    }
                    status if status == waiting && self.lines[thread as usize] != line => {
                        Some((thread, self.lines[thread as usize], SiteAction::Waits(name)))
                    }
                    Status::AtBarrier | Status::AtGrid | Status::Runnable | Status::InWarpOp => {
                        None
                    }
                }
            });
        if let Some((thread, other_line, action)) = other {
            let block_linear = local.block_linear();
            race.report(RaceReport::Divergent {
                waiting: race.site(block_linear, waiter as u32, line, SiteAction::Waits(name)),
                other: race.site(block_linear, thread, other_line, action),
            });
        }
    }

    /// Under the race checker, a deadlock between a barrier and a warp operation or a grid
    /// barrier is a divergent barrier; reports it and returns true, or returns false for
    /// another deadlock.
    fn divergent_deadlock(&self, block: &BlockShared, race: &RaceCheck) -> bool {
        let Some(local) = block.race() else {
            return false;
        };
        let at = |wanted: Status| self.status.iter().position(|&s| s == wanted);
        let block_linear = local.block_linear();
        // Threads at a block barrier and at a grid barrier wait for each other.
        if let (Some(barrier), Some(grid)) = (at(Status::AtBarrier), at(Status::AtGrid)) {
            race.report(RaceReport::Divergent {
                waiting: race.site(
                    block_linear,
                    barrier as u32,
                    self.lines[barrier],
                    SiteAction::Waits("sync_threads"),
                ),
                other: race.site(
                    block_linear,
                    grid as u32,
                    self.lines[grid],
                    SiteAction::Waits("grid_sync"),
                ),
            });
            return true;
        }
        let (Some(barrier), Some(warp_op)) = (at(Status::AtBarrier), at(Status::InWarpOp)) else {
            return false;
        };
        let deposit = self.warps[warp_op / WARP_SIZE as usize].deposit_of(warp_op as u32);
        race.report(RaceReport::Divergent {
            waiting: race.site(
                block_linear,
                warp_op as u32,
                deposit.line,
                SiteAction::Waits(deposit.op.name()),
            ),
            other: race.site(
                block_linear,
                barrier as u32,
                self.lines[barrier],
                SiteAction::Waits("sync_threads"),
            ),
        });
        true
    }

    fn describe_deadlock(&self, block_idx: Dim3, block: &BlockShared) -> String {
        let count = |wanted: Status| self.status.iter().filter(|&&s| s == wanted).count();
        let mut warps = Vec::new();
        for (warp, rendezvous) in self.warps.iter().enumerate() {
            if rendezvous.waiting() != 0 {
                warps.push(format!(
                    "warp {warp}: lanes {:#010x} wait, lanes {:#010x} are live",
                    rendezvous.waiting(),
                    block.live_mask(warp as u32)
                ));
            }
        }
        let warp_detail = if warps.is_empty() {
            String::new()
        } else {
            format!(" ({})", warps.join("; "))
        };
        let grid = match count(Status::AtGrid) {
            0 => String::new(),
            n => format!(" ({n} more wait at grid_sync)"),
        };
        format!(
            "deadlock in block {}: {} thread(s) wait at sync_threads and {} in warp \
             operations{warp_detail}{grid}, {} have returned, and none can proceed. Every thread of a \
             block that has not returned must reach the same sync_threads, and every live lane \
             named in a warp operation's mask the same warp operation (on a GPU this hangs or \
             is undefined)",
            describe_dim(block_idx),
            count(Status::AtBarrier),
            count(Status::InWarpOp),
            count(Status::Returned)
        )
    }
}

/// The race checker's view of warp `warp`'s lanes `group` about to complete a warp operation:
/// every lane its masks name must take part in the same operation (a lane that returned never
/// will); then the group's lanes are ordered with each other.
fn check_warp_group(
    rendezvous: &Rendezvous,
    warp: u32,
    group: u32,
    block: &BlockShared,
    race: &RaceCheck,
) {
    let Some(local) = block.race() else {
        return;
    };
    if !race.reported() {
        let exited = block.lanes(warp) & !block.live_mask(warp);
        let first = rendezvous.deposit_of(group.trailing_zeros());
        let mut members = group;
        while members != 0 {
            let lane = members.trailing_zeros();
            members &= members - 1;
            let deposit = rendezvous.deposit_of(lane);
            let thread = warp * WARP_SIZE + lane;
            let waiting = |line, op: &'static str| {
                race.site(local.block_linear(), thread, line, SiteAction::Waits(op))
            };
            let other = if deposit.mask & exited != 0 {
                let gone = warp * WARP_SIZE + (deposit.mask & exited).trailing_zeros();
                Some(race.site(
                    local.block_linear(),
                    gone,
                    local.last_line(gone),
                    SiteAction::Returned,
                ))
            } else if deposit.op != first.op {
                let first_thread = warp * WARP_SIZE + group.trailing_zeros();
                Some(race.site(
                    local.block_linear(),
                    first_thread,
                    first.line,
                    SiteAction::Waits(first.op.name()),
                ))
            } else {
                None
            };
            if let Some(other) = other {
                race.report(RaceReport::Divergent {
                    waiting: waiting(deposit.line, deposit.op.name()),
                    other,
                });
                break;
            }
        }
    }
    local.warp_op(warp, group);
}

pub(crate) fn describe_dim(d: Dim3) -> String {
    format!("({}, {}, {})", d.x, d.y, d.z)
}
