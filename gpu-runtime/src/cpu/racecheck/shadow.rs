//! The shadow of memory: what the checker remembers of each word, and where it keeps it.

use std::alloc::{self, Layout};
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use crate::core::race::SiteAction;

/// Hashes an address with one multiplication: the shadow is keyed by addresses only, and
/// SipHash would cost more than the rest of a check.
#[derive(Default)]
pub(super) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_usize(&mut self, addr: usize) {
        // A multiply then a fold of the high half into the low: the table indexes by the low
        // bits, which alone would see only the address's low bits (constant within a shard,
        // and zero below the element size).
        let product = (addr as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = product ^ (product >> 32);
    }
}

/// A word's shadow by its address.
pub(super) type ShadowMap = HashMap<usize, Shadow, BuildHasherDefault<AddressHasher>>;

/// How an access touches its word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum AccessKind {
    /// A plain read.
    Read = 1,
    /// A plain write.
    Write = 2,
    /// An atomic read.
    AtomicRead = 3,
    /// An atomic read-modify-write or exchange.
    AtomicWrite = 4,
}

impl AccessKind {
    pub(super) fn atomic(self) -> bool {
        matches!(self, AccessKind::AtomicRead | AccessKind::AtomicWrite)
    }

    pub(super) fn writes(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::AtomicWrite)
    }

    pub(super) fn action(self) -> SiteAction {
        match self {
            AccessKind::Read => SiteAction::Read,
            AccessKind::Write => SiteAction::Write,
            AccessKind::AtomicRead => SiteAction::AtomicRead,
            AccessKind::AtomicWrite => SiteAction::AtomicWrite,
        }
    }
}

/// One access, as the shadow of its word remembers it. Plain integers only, so that zeroed
/// memory is a valid shadow: one with no accesses (`kind` 0).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Access {
    /// The block's linear index in the grid.
    pub(super) block: u32,
    /// The thread's linear index in its block.
    pub(super) thread: u32,
    pub(super) line: u32,
    /// The block's barrier count when it happened.
    pub(super) epoch: u32,
    /// The block's mbarrier arrivals when it happened.
    pub(super) tick: u32,
    /// Its warp's operation count when it happened.
    pub(super) warp_gen: u32,
    /// The launch's fence count when it happened.
    pub(super) time: u32,
    /// The `grid_sync`s its block had passed when it happened.
    pub(super) grid: u32,
    /// An `AccessKind`, or 0 where there is no access.
    pub(super) kind: u8,
}

impl Access {
    /// No access.
    pub(super) const NONE: Access = Access {
        block: 0,
        thread: 0,
        line: 0,
        epoch: 0,
        tick: 0,
        warp_gen: 0,
        time: 0,
        grid: 0,
        kind: 0,
    };

    /// An access of `kind`; the other fields are filled in by the caller.
    pub(super) fn new(kind: AccessKind) -> Access {
        Access {
            kind: kind as u8,
            ..Access::NONE
        }
    }

    /// The access, if there is one.
    pub(super) fn get(self) -> Option<Access> {
        (self.kind != 0).then_some(self)
    }

    /// How it touched its word (a read where there is no access).
    pub(super) fn kind(&self) -> AccessKind {
        match self.kind {
            2 => AccessKind::Write,
            3 => AccessKind::AtomicRead,
            4 => AccessKind::AtomicWrite,
            _ => AccessKind::Read,
        }
    }
}

/// What one word of memory remembers.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Shadow {
    pub(super) write: Access,
    /// Reads since `write`, by up to two threads: any third thread differs from one of them.
    pub(super) reads: [Access; 2],
}

/// Elements of one parameter's slice that share a lock.
const STRIPE: usize = 16;
/// Locks per parameter: stripes of neighbours share one, so a block's run of elements takes
/// few locks, and blocks on different workers rarely meet.
const LOCKS: usize = 256;

/// The shadows of every element of one slice parameter, in an array: neighbouring elements'
/// shadows are neighbours in memory (a hash map's would be scattered over the heap), and pages
/// no thread touches are never written, so memory grows with the words touched.
pub(super) struct Dense {
    start: usize,
    end: usize,
    elem: usize,
    cells: Box<[UnsafeCell<Shadow>]>,
    locks: Box<[Mutex<()>]>,
}

// SAFETY: every cell is read and written only with its stripe's lock held (`with`), so the
// shadows are shared between workers as a `Mutex<Shadow>` each would be.
unsafe impl Sync for Dense {}

impl Dense {
    /// Shadows for `len` elements of `elem` bytes at `start`; `None` if they cannot be had.
    pub(super) fn new(start: usize, len: usize, elem: usize) -> Option<Dense> {
        let bytes = len.checked_mul(std::mem::size_of::<Shadow>())?;
        // Beyond a few GiB of shadow the hash map, which grows with the words touched, is
        // the better bet.
        if bytes > 1 << 33 {
            return None;
        }
        let cells: Box<[UnsafeCell<Shadow>]> = if len == 0 {
            Box::new([])
        } else {
            let layout = Layout::array::<UnsafeCell<Shadow>>(len).ok()?;
            // SAFETY: `layout` has a nonzero size (len > 0, and a Shadow is not empty). Zeroed
            // memory from the allocator stays unmapped until written, so untouched elements
            // cost no memory.
            let memory = unsafe { alloc::alloc_zeroed(layout) }.cast::<UnsafeCell<Shadow>>();
            if memory.is_null() {
                return None;
            }
            // SAFETY: `memory` holds `len` zeroed elements allocated with the global allocator
            // and the layout of `[UnsafeCell<Shadow>; len]`, as a Box of that slice frees them;
            // a Shadow is plain integers (an Access of kind 0 is no access), so all-zero bytes
            // are a valid, empty Shadow, and UnsafeCell has its content's layout.
            unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(memory, len)) }
        };
        Some(Dense {
            start,
            end: start.saturating_add(len.saturating_mul(elem)),
            elem: elem.max(1),
            cells,
            locks: (0..LOCKS).map(|_| Mutex::new(())).collect(),
        })
    }

    /// Whether `addr` is one of the elements.
    pub(super) fn holds(&self, addr: usize) -> bool {
        self.start <= addr && addr < self.end
    }

    /// Runs `f` on the shadow of the element at `addr` (which `holds`), with its lock held.
    pub(super) fn with<R>(&self, addr: usize, f: impl FnOnce(&mut Shadow) -> R) -> R {
        let index = (addr - self.start) / self.elem;
        let lock = &self.locks[(index / STRIPE) % LOCKS];
        let _held = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // SAFETY: `index` is below the slice's length (`addr` is inside it), and the stripe's
        // lock, held until `f` returns, is the only way to this cell.
        f(unsafe { &mut *self.cells[index].get() })
    }
}
