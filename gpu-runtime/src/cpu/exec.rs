//! Running a grid on the CPU: blocks in parallel on rayon's workers, each block on one worker.
//!
//! Barrier-free kernels run a block's threads as a plain loop of calls to the twin. Kernels that
//! synchronize run each thread of a block as a stackful coroutine (corosensei) on the block's
//! worker, scheduled round-robin: a thread runs until it reaches `sync_threads` or a warp
//! operation, where it suspends; a barrier releases its waiters once every live thread of the
//! block has arrived (returned threads count as arrived), a warp operation once every live lane
//! its mask names has deposited. If no thread can run while some have not returned, the block
//! is deadlocked and the launch fails instead of hanging.
//!
//! Why coroutines (measured in release builds on the 2-vCPU development VM, AMD EPYC; see
//! `tests/cpu_bench.rs`): a corosensei suspend + resume round trip costs 4-5 ns hot and about
//! 15 ns cycling round-robin through 1024 coroutines; inside real kernels, with the scheduler's
//! bookkeeping and cold return predictions, a thread pays 40-55 ns per barrier. Two OS threads
//! meeting at a `std::sync::Barrier` take 40-50 µs per barrier here, about 10,000 times more,
//! and a 1024-thread block would need 1024 OS threads per worker. Each coroutine has a 256 KiB
//! stack (room for `println!` debugging in unoptimised builds; only touched pages cost memory)
//! from a per-OS-thread pool, so stacks are mapped once and reused by later blocks and
//! launches.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;
use rayon::prelude::*;

use crate::core::checks::panic_message;
use crate::core::error::{Error, Result};
use crate::core::generic::{rust_instantiation, TemplateArg};
use crate::core::kernel::KernelSpec;
use crate::core::launch::{DeviceLimits, LaunchConfig};
use crate::cpu::args::{CpuArg, CpuArgs};
use crate::cpu::block::BlockShared;
use crate::cpu::coroutine::{ThreadCoroutine, Yielder};
use crate::cpu::device::{CpuDevice, CpuStream, PendingPanic};
use crate::cpu::launch_state::{Failure, LaunchState};
use crate::cpu::racecheck::{RaceCheck, RaceReport, Region};
use crate::cpu::schedule::{panic_text, Scheduler};
use crate::cpu::thread::{run_thread, Dim3, ThreadCtx, ThreadExit};
use crate::cpu::{CpuBlockFn, CpuKernelFn};

mod cooperative;

pub(crate) use cooperative::max_cooperative_blocks;

/// Stack of each coroutine thread.
const STACK_BYTES: usize = 256 * 1024;
/// Launches of at most this many threads run on the calling thread: handing them to rayon's
/// pool would cost more than it saves.
const INLINE_THREADS: u64 = 4096;
/// Threads per rayon task at least, for barrier-free kernels.
const TASK_THREADS: u64 = 16 * 1024;

/// The twin of `kernel`, after checking it can run on the CPU backend.
pub(crate) fn twin_of(
    kernel: &KernelSpec,
    twin: Option<CpuKernelFn>,
    template_args: &[TemplateArg],
) -> Result<CpuKernelFn> {
    kernel.check_cpu_shape()?;
    twin.ok_or_else(|| Error::CpuBackend {
        kernel: rust_instantiation(kernel, template_args),
        reason: "it has no CPU twin (it was built without one, by hand or by a #[kernel] macro \
                 older than the CPU backend); add one with Kernel::with_cpu, or run it on a CUDA \
                 device"
            .to_string(),
    })
}

/// What one CPU launch runs: the twin of a kernel, validated for the device.
pub(crate) struct CpuLaunch<'k> {
    /// The kernel.
    pub(crate) kernel: &'k KernelSpec,
    /// Its twin, from [`twin_of`].
    pub(crate) twin: CpuKernelFn,
    /// Its twin of a whole block, for a barrier-free kernel.
    pub(crate) block_twin: Option<CpuBlockFn>,
    /// Whether the twin synchronizes (and so runs its threads as coroutines).
    pub(crate) needs_sync: bool,
    /// The instantiation's template arguments.
    pub(crate) template_args: &'k [TemplateArg],
    /// The grid, already validated against `limits`.
    pub(crate) config: LaunchConfig,
    /// The device's limits.
    pub(crate) limits: DeviceLimits,
    /// Whether the launch runs in checked mode (`debug_assert!` is active).
    pub(crate) checked: bool,
    /// Whether the launch runs under the race checker.
    pub(crate) racecheck: bool,
}

impl CpuDevice {
    /// Runs a launch on `stream`, now, with its arguments unpacked into host memory. A
    /// checked-mode violation is queued for the stream's next synchronizing call; a broken
    /// contract, a deadlock or a panicking twin is this call's error.
    #[inline]
    pub(crate) fn launch(
        &self,
        stream: &CpuStream,
        launch: CpuLaunch<'_>,
        args: Vec<CpuArg>,
    ) -> Result<()> {
        let CpuLaunch {
            kernel,
            twin,
            block_twin,
            needs_sync,
            template_args,
            config,
            limits,
            checked,
            racecheck,
        } = launch;
        let display = || rust_instantiation(kernel, template_args);
        if kernel.cooperative() {
            check_cooperative(kernel, &config)?;
        }
        let grid_dim = Dim3::new(config.grid.x, config.grid.y, config.grid.z);
        let block_dim = Dim3::new(config.block.x, config.block.y, config.block.z);
        let race = racecheck.then(|| {
            let params = args
                .iter()
                .enumerate()
                .filter_map(|(index, arg)| {
                    let (start, len, elem) = arg.memory()?;
                    let name = match kernel.param_name(index) {
                        Some(name) => format!("`{name}`"),
                        None => format!("parameter {index}"),
                    };
                    Some(Region::new(start, len, elem, name))
                })
                .collect();
            RaceCheck::new(kernel.file(), grid_dim, block_dim, params)
        });
        let state = LaunchState::new(checked, race);
        let cpu_args = CpuArgs::new(args, template_args, &state);
        let grid = Grid {
            twin,
            block_twin,
            needs_sync,
            cooperative: kernel.cooperative(),
            args: &cpu_args,
            state: &state,
            grid_dim,
            block_dim,
            dynamic_shared: config.shared_mem_bytes,
            limits,
        };
        grid.run();
        drop(cpu_args);

        let seq = stream.next_launch();
        let LaunchState {
            violation,
            error,
            race,
            ..
        } = state;
        if let Some(report) = race.and_then(RaceCheck::into_report) {
            return Err(race_error(display(), report));
        }
        if let Some(reason) = error.into_inner() {
            return Err(Error::CpuBackend {
                kernel: display(),
                reason,
            });
        }
        if let Some(violation) = violation.into_inner() {
            let (file, message) = match violation.what {
                Failure::Check { kind, index, len } => {
                    (kernel.file(), panic_message(kind, index, len))
                }
                Failure::Assertion { file, message } => (file, message),
            };
            self.record_panic(PendingPanic {
                stream: stream.id(),
                seq,
                kernel: display(),
                file,
                line: violation.line,
                block: violation.block,
                thread: violation.thread,
                message,
            });
        }
        Ok(())
    }
}

/// Refuses a cooperative launch with more blocks than the CPU backend keeps resident.
fn check_cooperative(kernel: &KernelSpec, config: &LaunchConfig) -> Result<()> {
    let blocks = config.grid.x as u64 * config.grid.y as u64 * config.grid.z as u64;
    let block_threads = config.block.x * config.block.y * config.block.z;
    let max = u64::from(max_cooperative_blocks(block_threads));
    if blocks <= max {
        return Ok(());
    }
    Err(Error::CooperativeGridTooLarge {
        kernel: kernel.name().to_string(),
        blocks,
        block_threads,
        shared_bytes: config.shared_mem_bytes,
        max,
        device: "the CPU backend",
    })
}

/// The error a race checker's report makes.
fn race_error(kernel: String, report: RaceReport) -> Error {
    match report {
        RaceReport::Race {
            memory,
            index,
            first,
            second,
            advice,
        } => Error::DataRace {
            kernel,
            memory,
            index,
            first: Box::new(first),
            second: Box::new(second),
            advice,
        },
        RaceReport::Divergent { waiting, other } => Error::DivergentBarrier {
            kernel,
            waiting: Box::new(waiting),
            other: Box::new(other),
        },
        RaceReport::Uninitialized {
            memory,
            index,
            read,
        } => Error::UninitializedShared {
            kernel,
            memory,
            index,
            read: Box::new(read),
        },
    }
}

/// One launch's grid.
struct Grid<'l> {
    twin: CpuKernelFn,
    block_twin: Option<CpuBlockFn>,
    needs_sync: bool,
    /// Whether the kernel calls `grid_sync`: every block resident at once.
    cooperative: bool,
    args: &'l CpuArgs<'l>,
    state: &'l LaunchState,
    grid_dim: Dim3,
    block_dim: Dim3,
    dynamic_shared: u32,
    limits: DeviceLimits,
}

impl Grid<'_> {
    fn threads_per_block(&self) -> u32 {
        // Validated: at most 1024.
        self.block_dim.x * self.block_dim.y * self.block_dim.z
    }

    fn run(&self) {
        if self.cooperative {
            self.run_cooperative();
            return;
        }
        let blocks =
            u64::from(self.grid_dim.x) * u64::from(self.grid_dim.y) * u64::from(self.grid_dim.z);
        let threads = u64::from(self.threads_per_block());
        if blocks == 1 || blocks * threads <= INLINE_THREADS || rayon::current_num_threads() == 1 {
            let mut worker = Worker::new(self);
            for block in 0..blocks {
                if self.state.aborted() {
                    break;
                }
                worker.run_block(block);
            }
            return;
        }
        let min_len = if self.needs_sync {
            1
        } else {
            (TASK_THREADS / threads).max(1)
        };
        let min_len = usize::try_from(min_len).unwrap_or(1);
        // usize ranges split exactly; a 64-bit host holds any grid's block count.
        let blocks = usize::try_from(blocks).unwrap_or(usize::MAX);
        (0..blocks)
            .into_par_iter()
            .with_min_len(min_len)
            .for_each_init(
                || Worker::new(self),
                |worker, block| {
                    if !self.state.aborted() {
                        worker.run_block(block as u64);
                    }
                },
            );
    }

    fn block_idx(&self, linear: u64) -> Dim3 {
        if self.grid_dim.y == 1 && self.grid_dim.z == 1 {
            // A one-dimensional grid, without the divisions (which showed in profiles of
            // small blocks); its block count fits in u32.
            return Dim3::new(linear as u32, 0, 0);
        }
        let gx = u64::from(self.grid_dim.x);
        let gy = u64::from(self.grid_dim.y);
        // Each is below its grid dimension, so fits in u32.
        Dim3::new(
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        )
    }

    fn thread_idx(&self, linear: u32) -> Dim3 {
        let bx = self.block_dim.x;
        let by = self.block_dim.y;
        Dim3::new(linear % bx, (linear / bx) % by, linear / (bx * by))
    }
}

thread_local! {
    /// Coroutine stacks of this OS thread, kept for later blocks and launches.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// One worker thread's state for a launch.
struct Worker<'g, 'l> {
    grid: &'g Grid<'l>,
    block: BlockShared,
    /// Coroutine stacks in use by this worker (returned to `STACKS` on drop).
    stacks: Vec<DefaultStack>,
}

impl Drop for Worker<'_, '_> {
    fn drop(&mut self) {
        let stacks = std::mem::take(&mut self.stacks);
        // During thread teardown the pool may be gone; the stacks are then simply unmapped.
        let _ = STACKS.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                pool.extend(stacks);
            }
        });
    }
}

impl<'g, 'l> Worker<'g, 'l> {
    fn new(grid: &'g Grid<'l>) -> Self {
        Worker {
            grid,
            block: BlockShared::new(
                grid.threads_per_block(),
                grid.dynamic_shared,
                grid.limits,
                grid.state.race.is_some(),
            ),
            stacks: Vec::new(),
        }
    }

    fn run_block(&mut self, block: u64) {
        self.block.begin_block();
        if let Some(race) = self.block.race() {
            // Grids the checker can finish have far fewer than 2^32 blocks.
            race.begin(u32::try_from(block).unwrap_or(u32::MAX));
        }
        if self.grid.needs_sync {
            self.run_coroutines(block);
        } else {
            self.run_plain(block);
        }
    }

    fn context(&self, block_idx: Dim3) -> ThreadCtx {
        ThreadCtx {
            thread_idx: Cell::new(Dim3::default()),
            block_idx,
            block_dim: self.grid.block_dim,
            grid_dim: self.grid.grid_dim,
            linear: Cell::new(0),
            block: &self.block,
            launch: self.grid.state,
            yielder: std::ptr::null(),
            race: self
                .grid
                .state
                .race
                .as_ref()
                .map_or(std::ptr::null(), |race| race as *const RaceCheck),
            site: Cell::new(0),
        }
    }

    /// A barrier-free block: its threads one after another, as plain calls.
    fn run_plain(&mut self, block: u64) {
        let grid = self.grid;
        let twin = grid.twin;
        let args = grid.args;
        let mut ctx = self.context(grid.block_idx(block));
        // One catch_unwind around the loop, not one per thread; a thread ended by a failed
        // assertion restarts the loop after it.
        let mut first = 0;
        loop {
            let ran = panic::catch_unwind(AssertUnwindSafe(|| match grid.block_twin {
                Some(block_twin) => block_twin(args, &mut ctx, first),
                None => ctx.__each_thread::<true>(first, |t| twin(args, t)),
            }));
            match ran {
                Ok(()) => return,
                Err(payload) if payload.is::<ThreadExit>() => first = ctx.linear() + 1,
                Err(payload) => {
                    self.twin_panicked(ctx.block_idx, ctx.thread_idx(), payload.as_ref());
                    return;
                }
            }
        }
    }

    /// A block of a kernel that synchronizes: its threads as coroutines, round-robin.
    fn run_coroutines(&mut self, block: u64) {
        let grid = self.grid;
        let threads = grid.threads_per_block();
        let block_idx = grid.block_idx(block);
        if let Err(reason) = take_stacks(&mut self.stacks, threads as usize) {
            grid.state.contract_error(reason);
            return;
        }
        let mut coroutines: Vec<ThreadCoroutine> = Vec::with_capacity(threads as usize);
        for linear in 0..threads {
            let Some(stack) = self.stacks.pop() else {
                break;
            };
            let base = ThreadCtx {
                thread_idx: Cell::new(grid.thread_idx(linear)),
                linear: Cell::new(linear),
                ..self.context(block_idx)
            };
            let twin = grid.twin;
            let args = grid.args;
            let body = move |yielder: &Yielder, _start: u64| {
                let ctx = ThreadCtx { yielder, ..base };
                run_thread(|| twin(args, &ctx));
            };
            // SAFETY: the body borrows `args` (alive for the whole launch) and points at
            // `self.block` and the launch state, which outlive this block: every coroutine is
            // run to completion or unwound in `finish` before this function returns,
            // and none is ever forgotten.
            coroutines.push(unsafe { Coroutine::with_stack_unchecked(stack, body) });
        }
        let mut scheduler = Scheduler::new(threads);
        scheduler.run(
            &mut coroutines,
            &self.block,
            grid.state,
            block_idx,
            |linear| grid.thread_idx(linear),
        );
        finish(coroutines, &mut self.stacks);
    }

    #[cold]
    fn twin_panicked(&self, block: Dim3, thread: Dim3, payload: &(dyn std::any::Any + Send)) {
        self.grid.state.contract_error(format!(
            "its CPU twin panicked in thread ({}, {}, {}) of block ({}, {}, {}): {}",
            thread.x,
            thread.y,
            thread.z,
            block.x,
            block.y,
            block.z,
            panic_text(payload)
        ));
    }
}

/// Makes sure `stacks` holds `count` stacks, from the thread's pool or newly mapped.
fn take_stacks(stacks: &mut Vec<DefaultStack>, count: usize) -> Result<(), String> {
    if stacks.len() >= count {
        return Ok(());
    }
    let missing = count - stacks.len();
    let _ = STACKS.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            let take = missing.min(pool.len());
            let start = pool.len() - take;
            stacks.extend(pool.drain(start..));
        }
    });
    while stacks.len() < count {
        let stack = DefaultStack::new(STACK_BYTES).map_err(|err| {
            format!(
                "mapping a {} KiB coroutine stack for one of the launch's {count} \
                 coroutine threads failed ({err}); use fewer or smaller blocks, or fewer worker \
                 threads (RAYON_NUM_THREADS)",
                STACK_BYTES / 1024
            )
        })?;
        stacks.push(stack);
    }
    Ok(())
}

/// Ends every coroutine of a block that has not returned and keeps the stacks.
fn finish(coroutines: Vec<ThreadCoroutine>, stacks: &mut Vec<DefaultStack>) {
    for mut coroutine in coroutines {
        if !coroutine.done() {
            if cfg!(panic = "unwind") {
                // Runs the destructors of the suspended thread's locals.
                let _ = panic::catch_unwind(AssertUnwindSafe(|| coroutine.force_unwind()));
            }
            if !coroutine.done() {
                // SAFETY: reached only when unwinding is impossible (panic = "abort") or
                // failed; the thread's locals are then leaked, never used again: twins keep no
                // self-referential or pinned values on their stacks.
                unsafe { coroutine.force_reset() };
            }
        }
        stacks.push(coroutine.into_stack());
    }
}
