//! Scheduling one block's threads as coroutines: round-robin on the block's worker, with
//! `sync_threads` barriers, warp rendezvous, and deadlock detection.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};

use corosensei::CoroutineResult;

use crate::cpu::block::BlockShared;
use crate::cpu::coroutine::{ThreadCoroutine, Wait};
use crate::cpu::launch_state::LaunchState;
use crate::cpu::thread::Dim3;
use crate::cpu::warp::{Rendezvous, WARP_SIZE};

/// Where a coroutine thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Runnable,
    AtBarrier,
    InWarpOp,
    Returned,
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
        // One catch_unwind around the whole loop rather than one per resume: a switch is a few
        // nanoseconds, and every extra call level between switches costs a mispredicted return.
        let mut current = 0;
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            self.schedule(coroutines, block, &mut current);
        }));
        match ran {
            Ok(()) if self.live > 0 => {
                state.contract_error(self.describe_deadlock(block_idx, block));
            }
            Ok(()) => {}
            Err(payload) => state.contract_error(format!(
                "its CPU twin panicked in thread {} of block {}: {}",
                describe_dim(thread_idx(current)),
                describe_dim(block_idx),
                panic_text(payload.as_ref())
            )),
        }
    }

    /// Resumes runnable threads until none is left; `current` names the one running.
    fn schedule(
        &mut self,
        coroutines: &mut [ThreadCoroutine],
        block: &BlockShared,
        current: &mut u32,
    ) {
        while let Some(linear) = self.runnable.pop_front() {
            let Some(coroutine) = coroutines.get_mut(linear as usize) else {
                continue;
            };
            *current = linear;
            let warp = linear / WARP_SIZE;
            match coroutine.resume(self.input[linear as usize]) {
                CoroutineResult::Yield(Wait::Block) => {
                    self.status[linear as usize] = Status::AtBarrier;
                    self.at_barrier += 1;
                    self.release_barrier();
                }
                CoroutineResult::Yield(Wait::Spin) => {
                    self.runnable.push_back(linear);
                }
                CoroutineResult::Yield(Wait::Warp(deposit)) => {
                    self.status[linear as usize] = Status::InWarpOp;
                    self.warps[warp as usize].deposit(linear % WARP_SIZE, deposit);
                    self.release_warp(warp, block);
                }
                CoroutineResult::Return(()) => {
                    self.status[linear as usize] = Status::Returned;
                    self.live -= 1;
                    block.retire(linear);
                    self.release_barrier();
                    self.release_warp(warp, block);
                }
            }
        }
    }

    /// Releases the block barrier once every live thread waits at it.
    fn release_barrier(&mut self) {
        if self.at_barrier == 0 || self.at_barrier < self.live {
            return;
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
    fn release_warp(&mut self, warp: u32, block: &BlockShared) {
        let live = block.live_mask(warp);
        let mut results = [0u64; WARP_SIZE as usize];
        let Some(rendezvous) = self.warps.get_mut(warp as usize) else {
            return;
        };
        while let Some(group) = rendezvous.ready_group(live) {
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
        format!(
            "deadlock in block {}: {} thread(s) wait at sync_threads and {} in warp \
             operations{warp_detail}, {} have returned, and none can proceed. Every thread of a \
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

pub(crate) fn describe_dim(d: Dim3) -> String {
    format!("({}, {}, {})", d.x, d.y, d.z)
}
