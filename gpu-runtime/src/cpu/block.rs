//! Block-wide state on the worker thread running a block: shared memory and, for kernels that
//! synchronize, which lanes of each warp are still running.
//!
//! A worker keeps one `BlockShared` for all the blocks it runs, so shared memory is allocated
//! once per worker and launch; a generation number tells each slot to zero itself on first use
//! in a new block. Only the worker's own OS thread touches it (every thread of a block runs
//! there), hence `Cell`/`RefCell` and no locks.

use std::cell::{Cell, RefCell};

use crate::core::launch::DeviceLimits;
use crate::core::value::Value;
use crate::cpu::memory::{RawMemory, HOST_ALIGN};
use crate::cpu::racecheck::{BlockRace, Region};
use crate::cpu::warp::WARP_SIZE;

/// More static shared-memory declarations than any kernel has; bounds the slot table.
const MAX_SLOTS: u32 = 1024;

/// One worker's block-wide state.
pub(crate) struct BlockShared {
    memory: RefCell<SharedMemory>,
    /// Per thread: its MMA count in this block and its fragments for the last two MMAs.
    mma: RefCell<MmaStage>,
    /// Per warp: lanes that exist and have not returned (kernels that synchronize).
    live: [Cell<u32>; WARP_SIZE as usize],
    /// Whether a lane has returned since the masks were last reset: only then does a new block
    /// reset them (a barrier-free block never retires a lane, and 32 stores a block showed in
    /// profiles of small blocks).
    retired: Cell<bool>,
    /// Threads per block.
    threads: u32,
    /// The race checker's block state, when the launch runs under it.
    race: Option<BlockRace>,
}

struct SharedMemory {
    /// Static shared memory, by declaration number.
    slots: Vec<Option<Slot>>,
    /// Bytes of all static declarations met so far.
    static_bytes: usize,
    /// The launch's dynamic shared memory, allocated on first use.
    dynamic: Option<Slot>,
    dynamic_bytes: usize,
    /// The block being run; slots from older generations are zeroed before reuse.
    generation: u64,
    limits: DeviceLimits,
}

#[derive(Default)]
struct MmaStage {
    counts: Vec<u64>,
    fragments: Vec<[MmaFragments; 2]>,
}

/// One lane's fragments for one MMA.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct MmaFragments {
    /// The lane's MMA count when it staged these; `u64::MAX` when never staged in this block.
    pub(crate) seq: u64,
    /// A: four registers of two packed 16-bit floats.
    pub(crate) a: [u32; 4],
    /// B: two registers of two packed 16-bit floats.
    pub(crate) b: [u32; 2],
    /// C: four f32.
    pub(crate) c: [f32; 4],
}

impl MmaFragments {
    /// Nothing staged.
    pub(crate) const EMPTY: MmaFragments = MmaFragments {
        seq: u64::MAX,
        a: [0; 4],
        b: [0; 2],
        c: [0.0; 4],
    };
}

struct Slot {
    memory: RawMemory,
    bytes: usize,
    generation: u64,
}

impl Slot {
    /// The slot's memory, zeroed first if this is a new block for it.
    fn for_block(&mut self, generation: u64) -> *mut u8 {
        if self.generation != generation {
            self.memory.zero(self.bytes);
            self.generation = generation;
        }
        self.memory.as_ptr()
    }
}

impl BlockShared {
    /// State for blocks of `threads` threads with `dynamic_bytes` of dynamic shared memory,
    /// with the race checker's when `racecheck`.
    pub(crate) fn new(
        threads: u32,
        dynamic_bytes: u32,
        limits: DeviceLimits,
        racecheck: bool,
    ) -> BlockShared {
        BlockShared {
            memory: RefCell::new(SharedMemory {
                slots: Vec::new(),
                static_bytes: 0,
                dynamic: None,
                dynamic_bytes: dynamic_bytes as usize,
                generation: 0,
                limits,
            }),
            mma: RefCell::new(MmaStage::default()),
            live: std::array::from_fn(|warp| Cell::new(lanes_in_warp(threads, warp as u32))),
            retired: Cell::new(false),
            threads,
            race: racecheck.then(|| BlockRace::new(threads)),
        }
    }

    /// The race checker's block state, when the launch runs under it.
    #[inline(always)]
    pub(crate) fn race(&self) -> Option<&BlockRace> {
        self.race.as_ref()
    }

    /// Starts a new block: shared memory reads as zero again, every lane is live.
    pub(crate) fn begin_block(&self) {
        if let Ok(mut memory) = self.memory.try_borrow_mut() {
            memory.generation += 1;
        }
        if let Ok(mut mma) = self.mma.try_borrow_mut() {
            if !mma.counts.is_empty() {
                mma.counts.fill(0);
                mma.fragments.fill([MmaFragments::EMPTY; 2]);
            }
        }
        if self.retired.replace(false) {
            for (warp, live) in self.live.iter().enumerate() {
                live.set(lanes_in_warp(self.threads, warp as u32));
            }
        }
    }

    /// Marks lane `linear % 32` of its warp as returned.
    pub(crate) fn retire(&self, linear: u32) {
        let warp = &self.live[(linear / WARP_SIZE) as usize % WARP_SIZE as usize];
        warp.set(warp.get() & !(1 << (linear % WARP_SIZE)));
        self.retired.set(true);
    }

    /// Lanes that exist in warp `warp` of the block.
    pub(crate) fn lanes(&self, warp: u32) -> u32 {
        lanes_in_warp(self.threads, warp)
    }

    /// Lanes of warp `warp` still running.
    pub(crate) fn live_mask(&self, warp: u32) -> u32 {
        self.live.get(warp as usize).map_or(0, Cell::get)
    }

    /// Lanes of the warp of thread `linear` from its lane on (the threads of a barrier-free
    /// kernel that have not run yet).
    pub(crate) fn lanes_from(&self, linear: u32) -> u32 {
        let lanes = lanes_in_warp(self.threads, linear / WARP_SIZE);
        lanes & (u32::MAX << (linear % WARP_SIZE))
    }

    /// Stages thread `linear`'s fragments for its next MMA; returns that MMA's number.
    pub(crate) fn stage_mma(
        &self,
        linear: u32,
        a: [u32; 4],
        b: [u32; 2],
        c: [f32; 4],
    ) -> Option<u64> {
        let mut mma = self.mma.try_borrow_mut().ok()?;
        let threads = self.threads as usize;
        if mma.counts.len() < threads {
            mma.counts.resize(threads, 0);
            mma.fragments.resize(threads, [MmaFragments::EMPTY; 2]);
        }
        let index = linear as usize;
        let seq = *mma.counts.get(index)?;
        mma.counts[index] = seq + 1;
        mma.fragments[index][(seq % 2) as usize] = MmaFragments { seq, a, b, c };
        Some(seq)
    }

    /// Thread `linear`'s fragments in the buffer of MMA number `seq` (check their `seq`).
    pub(crate) fn staged_mma(&self, linear: u32, seq: u64) -> Option<MmaFragments> {
        let mma = self.mma.try_borrow().ok()?;
        mma.fragments
            .get(linear as usize)
            .map(|buffers| buffers[(seq % 2) as usize])
    }

    /// Static shared memory for declaration `slot`, `len` elements of `T` called `name`: its
    /// address, or why it cannot be had.
    pub(crate) fn shared_array<T: Value>(
        &self,
        slot: u32,
        len: usize,
        name: &str,
    ) -> Result<*mut u8, String> {
        let mut memory = self
            .memory
            .try_borrow_mut()
            .map_err(|_| "shared memory was requested re-entrantly".to_string())?;
        let generation = memory.generation;
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| format!("shared array {slot} of {len} {} overflows", T::ELEM))?;
        if slot >= MAX_SLOTS {
            return Err(format!(
                "shared array number {slot} is past the {MAX_SLOTS} declarations a kernel may have"
            ));
        }
        let index = slot as usize;
        if memory.slots.len() <= index {
            memory.slots.resize_with(index + 1, || None);
        }
        if let Some(existing) = memory.slots[index].as_mut() {
            if existing.bytes != bytes {
                return Err(format!(
                    "shared array {slot} is requested as {bytes} bytes after {} bytes; each \
                     declaration must keep one type and length",
                    existing.bytes
                ));
            }
            return Ok(existing.for_block(generation));
        }
        let static_bytes = memory.static_bytes + bytes;
        memory.check_limits(static_bytes)?;
        let raw = RawMemory::zeroed(bytes)
            .map_err(|err| format!("allocating shared array {slot}: {err}"))?;
        let ptr = raw.as_ptr();
        memory.static_bytes = static_bytes;
        if let Some(race) = &self.race {
            let name = if name.is_empty() {
                format!("shared array {slot}")
            } else {
                format!("shared array `{name}`")
            };
            race.name_region(Region::new(
                ptr as usize,
                len,
                std::mem::size_of::<T>(),
                name,
            ));
        }
        memory.slots[index] = Some(Slot {
            memory: raw,
            bytes,
            generation,
        });
        Ok(ptr)
    }

    /// The dynamic shared memory of this block: address and bytes (0 bytes when the launch
    /// asked for none, or when it could not be allocated, which is reported elsewhere).
    pub(crate) fn dynamic_shared(&self) -> (*mut u8, usize) {
        // A dangling but aligned address for empty views.
        let empty = (HOST_ALIGN as *mut u8, 0);
        let Ok(mut memory) = self.memory.try_borrow_mut() else {
            return empty;
        };
        let bytes = memory.dynamic_bytes;
        if bytes == 0 {
            return empty;
        }
        let generation = memory.generation;
        if memory.dynamic.is_none() {
            let Ok(raw) = RawMemory::zeroed(bytes) else {
                return empty;
            };
            memory.dynamic = Some(Slot {
                memory: raw,
                bytes,
                generation,
            });
        }
        match memory.dynamic.as_mut() {
            Some(slot) => (slot.for_block(generation), bytes),
            None => empty,
        }
    }
}

impl SharedMemory {
    /// Fails when `static_bytes` of static shared memory, with the launch's dynamic bytes,
    /// would not fit a GPU block.
    fn check_limits(&self, static_bytes: usize) -> Result<(), String> {
        let static_max = self.limits.max_shared_mem_per_block as usize;
        if static_bytes > static_max {
            return Err(format!(
                "the kernel declares {static_bytes} bytes of static shared memory, over the \
                 {static_max}-byte limit for static shared memory on a GPU; use dynamic shared \
                 memory for larger arrays"
            ));
        }
        let total_max = self
            .limits
            .max_shared_mem_per_block_optin
            .max(self.limits.max_shared_mem_per_block) as usize;
        if static_bytes + self.dynamic_bytes > total_max {
            return Err(format!(
                "the kernel declares {static_bytes} bytes of static shared memory; with {} \
                 dynamic bytes the block needs {} bytes, over the device limit of {total_max} \
                 bytes per block",
                self.dynamic_bytes,
                static_bytes + self.dynamic_bytes
            ));
        }
        Ok(())
    }
}

/// The lanes that exist in warp `warp` of a block of `threads` threads.
fn lanes_in_warp(threads: u32, warp: u32) -> u32 {
    let start = warp.saturating_mul(WARP_SIZE);
    match threads.saturating_sub(start) {
        0 => 0,
        n if n >= WARP_SIZE => u32::MAX,
        n => (1u32 << n) - 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_and_liveness() {
        assert_eq!(lanes_in_warp(100, 0), u32::MAX);
        assert_eq!(lanes_in_warp(100, 3), 0b1111);
        assert_eq!(lanes_in_warp(100, 4), 0);
        let block = BlockShared::new(40, 0, DeviceLimits::SM_90, false);
        block.begin_block();
        assert_eq!(block.live_mask(1), 0xff);
        block.retire(33);
        assert_eq!(block.live_mask(1), 0xfd);
        assert_eq!(block.lanes_from(36), 0xf0);
        block.begin_block();
        assert_eq!(block.live_mask(1), 0xff);
    }

    #[test]
    fn shared_slots_are_per_block_and_zeroed() {
        let block = BlockShared::new(32, 64, DeviceLimits::SM_90, false);
        block.begin_block();
        let a = block.shared_array::<f32>(0, 16, "").unwrap();
        // SAFETY: 16 f32s of block memory, nothing else uses them in this test.
        unsafe { a.cast::<f32>().write(5.0) };
        assert_eq!(
            block.shared_array::<f32>(0, 16, "").unwrap(),
            a,
            "same memory"
        );
        // SAFETY: as above.
        assert_eq!(unsafe { a.cast::<f32>().read() }, 5.0);
        block.begin_block();
        let again = block.shared_array::<f32>(0, 16, "").unwrap();
        // SAFETY: as above.
        assert_eq!(
            unsafe { again.cast::<f32>().read() },
            0.0,
            "zeroed per block"
        );
        assert!(block.shared_array::<f32>(0, 17, "").is_err());
        let (dynamic, bytes) = block.dynamic_shared();
        assert_eq!(bytes, 64);
        assert_eq!(dynamic as usize % HOST_ALIGN, 0);
        let too_big = block.shared_array::<u32>(1, 12 * 1024, "").unwrap_err();
        assert!(too_big.contains("static shared memory"), "{too_big}");
        assert!(block.shared_array::<u32>(MAX_SLOTS, 1, "").is_err());
    }
}
