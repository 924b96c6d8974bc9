//! The race checker: while a launch runs on the CPU backend, every access to global and shared
//! memory is checked against a shadow of the word it touches, which remembers the last write
//! and up to two reads since it. Two accesses by different threads, at least one a plain write,
//! race unless something orders them:
//!
//! - the same block's `sync_threads` between them (each block counts its barriers: an
//!   *epoch*);
//! - for lanes of one warp, a warp operation both took part in after the first access;
//! - an mbarrier phase the second thread waited for, completed after the first access;
//! - in any two blocks, a `grid_sync` between them (each block counts the grid barriers it
//!   passed, and all blocks of a cooperative grid pass each one together);
//! - across blocks (global memory), a `thread_fence` by the first thread after its access, and
//!   a later one by a thread of the second thread's block: the fence-and-flag handshake of
//!   "last block" reductions and decoupled look-back scans. The checker does not follow the
//!   flag itself, so it trusts any such pair of fences.
//!
//! Atomics never race with atomics, and an atomic read-modify-write takes the word over, so a
//! thread may write plainly what it last updated atomically. Memory costs one shadow per word
//! touched in the launch (global) or the block (shared); it is freed with the launch.
//!
//! The scheduler reports divergent barriers and warp operations through [`BlockRace`], which
//! also keeps each block's barrier epoch, mbarrier ticks and warp clocks.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::core::race::{RaceSite, SiteAction};
use crate::cpu::racecheck::shadow::{Access, Dense, Shadow, ShadowMap};
use crate::cpu::thread::{Dim3, ThreadCtx};
use crate::cpu::warp::WARP_SIZE;

mod shadow;

pub(crate) use shadow::AccessKind;

/// Locks of the global shadow: enough that blocks on different workers rarely meet.
const SHARDS: usize = 64;

/// A named piece of memory: a parameter's slice or a shared array.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    start: usize,
    end: usize,
    elem: usize,
    name: String,
}

impl Region {
    /// `len` elements of `elem` bytes at `start`, called `name` in reports.
    pub(crate) fn new(start: usize, len: usize, elem: usize, name: String) -> Region {
        Region {
            start,
            end: start.saturating_add(len.saturating_mul(elem)),
            elem: elem.max(1),
            name,
        }
    }

    fn holds(&self, addr: usize) -> bool {
        self.start <= addr && addr < self.end
    }

    fn index(&self, addr: usize) -> usize {
        (addr - self.start) / self.elem
    }
}

/// What the checker found first; the launch fails with it.
#[derive(Clone, Debug)]
pub(crate) enum RaceReport {
    /// A data race.
    Race {
        memory: String,
        index: usize,
        first: RaceSite,
        second: RaceSite,
        advice: &'static str,
    },
    /// A barrier or warp operation some thread it names never reaches.
    Divergent { waiting: RaceSite, other: RaceSite },
    /// A read of shared memory no thread of the block wrote.
    Uninitialized {
        memory: String,
        index: usize,
        read: RaceSite,
    },
}

/// The launch-wide half of the checker: global memory's shadow, fences, the first report.
pub(crate) struct RaceCheck {
    file: &'static str,
    grid_dim: Dim3,
    block_dim: Dim3,
    /// The slice parameters' memory.
    params: Vec<Region>,
    /// Their shadows, where they could be allocated.
    dense: Vec<Dense>,
    /// The shadow of global memory outside `dense`.
    global: Vec<Mutex<ShadowMap>>,
    /// Fences so far in the launch.
    clock: AtomicU32,
    /// Each fencing thread's fence times, in order, by (block, thread).
    fences: Mutex<HashMap<(u32, u32), Vec<u32>>>,
    /// Each block's latest fence.
    block_fences: Mutex<HashMap<u32, u32>>,
    report: OnceLock<RaceReport>,
    /// The first read of unwritten shared memory: reported when nothing worse is, as a
    /// missing barrier often shows first as a read of what another thread writes later.
    unwritten: OnceLock<RaceReport>,
}

/// Locks `mutex`; the maps stay consistent through a panic (each update is one insert).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RaceCheck {
    /// A checker for a launch of the kernel in `file` whose slice parameters are `params`.
    pub(crate) fn new(
        file: &'static str,
        grid_dim: Dim3,
        block_dim: Dim3,
        params: Vec<Region>,
    ) -> Self {
        let dense = params
            .iter()
            .filter_map(|r| Dense::new(r.start, (r.end - r.start) / r.elem, r.elem))
            .collect();
        RaceCheck {
            file,
            grid_dim,
            block_dim,
            params,
            dense,
            global: (0..SHARDS)
                .map(|_| Mutex::new(ShadowMap::default()))
                .collect(),
            clock: AtomicU32::new(0),
            fences: Mutex::new(HashMap::new()),
            block_fences: Mutex::new(HashMap::new()),
            report: OnceLock::new(),
            unwritten: OnceLock::new(),
        }
    }

    /// The first report, once the launch has run.
    pub(crate) fn into_report(self) -> Option<RaceReport> {
        self.report.into_inner().or(self.unwritten.into_inner())
    }

    /// Whether something was reported (the launch stops checking and starting blocks).
    pub(crate) fn reported(&self) -> bool {
        self.report.get().is_some()
    }

    /// Records `report` if it is the launch's first.
    pub(crate) fn report(&self, report: RaceReport) {
        let _ = self.report.set(report);
    }

    /// Runs `op`, thread `t`'s access of `kind` to the word at `addr` at source `line`, and
    /// checks it against the word's shadow. Global memory's shadow stays locked while `op`
    /// runs, so the shadow sees atomics in the order memory does.
    pub(crate) fn access<R>(
        &self,
        t: &ThreadCtx,
        addr: usize,
        kind: AccessKind,
        line: u32,
        op: impl FnOnce() -> R,
    ) -> R {
        let block = t.block();
        let Some(local) = block.race() else {
            return op();
        };
        if self.reported() {
            return op();
        }
        local.seen(t.linear(), line);
        let now = Access {
            block: local.block.get(),
            thread: t.linear(),
            line,
            epoch: local.epoch.get(),
            tick: local.tick.get(),
            warp_gen: local.warp_gen(t.linear()),
            time: self.clock.load(Ordering::SeqCst),
            grid: local.grid.get(),
            ..Access::new(kind)
        };
        if local.is_shared(addr) {
            let result = op();
            let mut shared = local.shared.borrow_mut();
            let shadow = shared.entry(addr).or_default();
            let unwritten = shadow.write.get().is_none() && kind != AccessKind::Write;
            let race = self.update(shadow, now, local);
            drop(shared);
            if !unwritten && race.is_none() {
                return result;
            }
            let Some(region) = local.region(addr) else {
                return result;
            };
            if unwritten {
                let _ = self.unwritten.set(RaceReport::Uninitialized {
                    memory: region.name.clone(),
                    index: region.index(addr),
                    read: self.site(now.block, now.thread, line, kind.action()),
                });
            }
            if let Some(earlier) = race {
                self.report_race(&region, addr, earlier, now, true);
            }
            return result;
        }
        let (result, race) = match self.dense.iter().find(|d| d.holds(addr)) {
            Some(dense) => dense.with(addr, |shadow| {
                let result = op();
                (result, self.update(shadow, now, local))
            }),
            None => {
                let mut global = lock(&self.global[(addr >> 6) % SHARDS]);
                let result = op();
                let shadow = global.entry(addr).or_default();
                (result, self.update(shadow, now, local))
            }
        };
        if let Some(earlier) = race {
            let region = self
                .params
                .iter()
                .find(|r| r.holds(addr))
                .cloned()
                .unwrap_or_else(|| Region::new(addr, 1, 1, format!("the memory at {addr:#x}")));
            self.report_race(&region, addr, earlier, now, false);
        }
        result
    }

    /// Checks `now` against `shadow` and records it; returns the earlier access it races with.
    fn update(&self, shadow: &mut Shadow, now: Access, local: &BlockRace) -> Option<Access> {
        let conflicts = |earlier: &Access| {
            let both_atomic = earlier.kind().atomic() && now.kind().atomic();
            !both_atomic && !self.ordered(earlier, &now, local)
        };
        if let Some(write) = shadow.write.get().filter(|w| conflicts(w)) {
            return Some(write);
        }
        if now.kind().writes() {
            if let Some(read) = shadow
                .reads
                .iter()
                .filter_map(|r| r.get())
                .find(|r| conflicts(r))
            {
                return Some(read);
            }
            shadow.write = now;
            shadow.reads = [Access::NONE; 2];
            return None;
        }
        // Keep two readers: this one in place of itself, of an empty slot, or of a reader
        // ordered before it (which any later write is ordered after too).
        let present = |r: &Access| r.get();
        let slot = shadow
            .reads
            .iter()
            .position(|r| {
                present(r).is_some_and(|r| r.block == now.block && r.thread == now.thread)
            })
            .or_else(|| shadow.reads.iter().position(|r| present(r).is_none()))
            .or_else(|| {
                shadow
                    .reads
                    .iter()
                    .position(|r| present(r).is_some_and(|r| self.ordered(&r, &now, local)))
            })
            .unwrap_or(1);
        shadow.reads[slot] = now;
        None
    }

    /// Whether `earlier` is ordered before `now` (a later access by the thread `local` runs).
    fn ordered(&self, earlier: &Access, now: &Access, local: &BlockRace) -> bool {
        // Every thread of the grid passes each grid_sync together.
        if earlier.grid < now.grid {
            return true;
        }
        if earlier.block == now.block {
            return earlier.thread == now.thread
                || earlier.epoch < now.epoch
                || earlier.tick < local.acquired(now.thread)
                || local.warp_synced(earlier.thread, now.thread, earlier.warp_gen);
        }
        // Another block: a fence of the earlier thread after its access, then a fence in this
        // block after that one.
        let fences = lock(&self.fences);
        let Some(times) = fences.get(&(earlier.block, earlier.thread)) else {
            return false;
        };
        let after = times.partition_point(|&t| t <= earlier.time);
        let Some(&released) = times.get(after) else {
            return false;
        };
        drop(fences);
        lock(&self.block_fences)
            .get(&now.block)
            .is_some_and(|&acquired| acquired > released)
    }

    /// Thread `t` executed a device-wide fence.
    pub(crate) fn fence(&self, t: &ThreadCtx) {
        let Some(local) = t.block().race() else {
            return;
        };
        let time = self.clock.fetch_add(1, Ordering::SeqCst) + 1;
        let block = local.block.get();
        lock(&self.fences)
            .entry((block, t.linear()))
            .or_default()
            .push(time);
        lock(&self.block_fences).insert(block, time);
    }

    fn report_race(
        &self,
        region: &Region,
        addr: usize,
        earlier: Access,
        now: Access,
        shared: bool,
    ) {
        let advice = if shared {
            "put sync_threads() between them (or, within one warp, sync_warp()), or make both atomic"
        } else if earlier.block != now.block {
            "give each block its own elements, combine with atomics (atomic_add), or split the \
             work into two launches"
        } else {
            "put sync_threads() between them, or make both atomic"
        };
        self.report(RaceReport::Race {
            memory: region.name.clone(),
            index: region.index(addr),
            first: self.site(
                earlier.block,
                earlier.thread,
                earlier.line,
                earlier.kind().action(),
            ),
            second: self.site(now.block, now.thread, now.line, now.kind().action()),
            advice,
        });
    }

    /// Where thread `thread` of block `block` was.
    pub(crate) fn site(&self, block: u32, thread: u32, line: u32, action: SiteAction) -> RaceSite {
        let (g, b) = (self.grid_dim, self.block_dim);
        let gx = g.x.max(1);
        let gy = g.y.max(1);
        let bx = b.x.max(1);
        let by = b.y.max(1);
        RaceSite {
            file: self.file,
            line,
            block: [block % gx, (block / gx) % gy, block / (gx * gy)],
            thread: [thread % bx, (thread / bx) % by, thread / (bx * by)],
            action,
        }
    }
}

/// One warp's operation count and, for each pair of lanes, the count at the last operation
/// both took part in.
#[derive(Clone)]
struct WarpClock {
    gen: u32,
    joint: [[u32; WARP_SIZE as usize]; WARP_SIZE as usize],
}

impl Default for WarpClock {
    fn default() -> Self {
        WarpClock {
            gen: 0,
            joint: [[0; WARP_SIZE as usize]; WARP_SIZE as usize],
        }
    }
}

/// The block-wide half of the checker, on the worker running the block: shared memory's
/// shadow and names, and what orders the block's threads.
pub(crate) struct BlockRace {
    /// The running block's linear index.
    block: Cell<u32>,
    regions: RefCell<Vec<Region>>,
    shared: RefCell<ShadowMap>,
    /// Barriers released in the block.
    epoch: Cell<u32>,
    /// `grid_sync`s the block has passed: the same count in every block of a cooperative grid.
    grid: Cell<u32>,
    /// mbarrier arrivals in the block.
    tick: Cell<u32>,
    /// Per thread: the arrivals before the latest mbarrier phase it waited for.
    acquired: RefCell<Vec<u32>>,
    /// Per thread: the last line it was seen at.
    lines: RefCell<Vec<u32>>,
    warps: RefCell<Vec<WarpClock>>,
    /// Per mbarrier address: the arrivals when its latest phase completed.
    phases: RefCell<HashMap<usize, u32>>,
}

impl BlockRace {
    /// State for blocks of `threads` threads.
    pub(crate) fn new(threads: u32) -> BlockRace {
        let threads = threads as usize;
        BlockRace {
            block: Cell::new(0),
            regions: RefCell::new(Vec::new()),
            shared: RefCell::new(ShadowMap::default()),
            epoch: Cell::new(0),
            grid: Cell::new(0),
            tick: Cell::new(0),
            acquired: RefCell::new(vec![0; threads]),
            lines: RefCell::new(vec![0; threads]),
            warps: RefCell::new(vec![
                WarpClock::default();
                threads.div_ceil(WARP_SIZE as usize)
            ]),
            phases: RefCell::new(HashMap::new()),
        }
    }

    /// Starts block `block` (linear): nothing of the last block's is remembered.
    pub(crate) fn begin(&self, block: u32) {
        self.block.set(block);
        self.shared.borrow_mut().clear();
        self.epoch.set(0);
        self.grid.set(0);
        self.tick.set(0);
        self.acquired.borrow_mut().fill(0);
        self.lines.borrow_mut().fill(0);
        self.warps.borrow_mut().fill(WarpClock::default());
        self.phases.borrow_mut().clear();
    }

    /// Names shared memory at `start` (once per worker: the memory is reused by its blocks).
    pub(crate) fn name_region(&self, region: Region) {
        self.name_region_with(region.start, || region);
    }

    /// Names the shared memory at `start` with `region()` unless it already has a name.
    pub(crate) fn name_region_with(&self, start: usize, region: impl FnOnce() -> Region) {
        let mut regions = self.regions.borrow_mut();
        if !regions.iter().any(|r| r.start == start) {
            regions.push(region());
        }
    }

    /// Whether `addr` is in the block's shared memory.
    fn is_shared(&self, addr: usize) -> bool {
        self.regions.borrow().iter().any(|r| r.holds(addr))
    }

    /// The shared memory holding `addr`, if it is shared memory.
    fn region(&self, addr: usize) -> Option<Region> {
        self.regions
            .borrow()
            .iter()
            .find(|r| r.holds(addr))
            .cloned()
    }

    /// The running block's linear index.
    pub(crate) fn block_linear(&self) -> u32 {
        self.block.get()
    }

    /// Thread `thread` is at `line`.
    pub(crate) fn seen(&self, thread: u32, line: u32) {
        if let Some(slot) = self.lines.borrow_mut().get_mut(thread as usize) {
            *slot = line;
        }
    }

    /// The last line thread `thread` was seen at.
    pub(crate) fn last_line(&self, thread: u32) -> u32 {
        self.lines
            .borrow()
            .get(thread as usize)
            .copied()
            .unwrap_or(0)
    }

    /// A `sync_threads` released every thread of the block.
    pub(crate) fn barrier(&self) {
        self.epoch.set(self.epoch.get() + 1);
    }

    /// A `grid_sync` released every thread of the grid: it is a barrier of the block too.
    pub(crate) fn grid_barrier(&self) {
        self.grid.set(self.grid.get() + 1);
        self.barrier();
    }

    /// An arrival on the mbarrier at `addr`; `completes` when it ends the phase.
    pub(crate) fn arrive(&self, addr: usize, completes: bool) {
        let tick = self.tick.get() + 1;
        self.tick.set(tick);
        if completes {
            self.phases.borrow_mut().insert(addr, tick);
        }
    }

    /// Thread `thread` saw the mbarrier at `addr` complete a phase.
    pub(crate) fn acquire(&self, thread: u32, addr: usize) {
        let Some(&tick) = self.phases.borrow().get(&addr) else {
            return;
        };
        if let Some(slot) = self.acquired.borrow_mut().get_mut(thread as usize) {
            *slot = (*slot).max(tick);
        }
    }

    fn acquired(&self, thread: u32) -> u32 {
        self.acquired
            .borrow()
            .get(thread as usize)
            .copied()
            .unwrap_or(0)
    }

    /// The lanes `group` of warp `warp` completed a warp operation together.
    pub(crate) fn warp_op(&self, warp: u32, group: u32) {
        let mut warps = self.warps.borrow_mut();
        let Some(clock) = warps.get_mut(warp as usize) else {
            return;
        };
        clock.gen += 1;
        let gen = clock.gen;
        let mut members = group;
        while members != 0 {
            let a = members.trailing_zeros() as usize;
            members &= members - 1;
            let mut others = group;
            while others != 0 {
                let b = others.trailing_zeros() as usize;
                others &= others - 1;
                clock.joint[a][b] = gen;
            }
        }
    }

    fn warp_gen(&self, thread: u32) -> u32 {
        self.warps
            .borrow()
            .get((thread / WARP_SIZE) as usize)
            .map_or(0, |clock| clock.gen)
    }

    /// Whether threads `a` and `b` are lanes of one warp that took part in one warp operation
    /// after `a`'s warp had done `since` of them.
    fn warp_synced(&self, a: u32, b: u32, since: u32) -> bool {
        if a / WARP_SIZE != b / WARP_SIZE {
            return false;
        }
        self.warps
            .borrow()
            .get((a / WARP_SIZE) as usize)
            .is_some_and(|clock| {
                clock.joint[(a % WARP_SIZE) as usize][(b % WARP_SIZE) as usize] > since
            })
    }
}
