//! Shared memory as a CPU twin sees it: the block's memory for each static declaration and
//! the launch's dynamic bytes, as `CpuSlice`s.

use crate::core::value::Value;
use crate::cpu::racecheck::Region;
use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;

impl ThreadCtx {
    /// Static shared memory: `len` elements of `T` for declaration `slot` (0, 1, ... in the
    /// kernel), the same memory for every thread of the block, zeroed when the block starts.
    pub fn shared_array<T: Value>(&self, slot: u32, len: usize) -> CpuSlice<'_, T> {
        self.shared_array_named(slot, len, "")
    }

    /// [`ThreadCtx::shared_array`] for an array the kernel calls `name` (the race checker's
    /// reports name it).
    pub fn shared_array_named<T: Value>(
        &self,
        slot: u32,
        len: usize,
        name: &'static str,
    ) -> CpuSlice<'_, T> {
        match self.block().shared_array::<T>(slot, len, name) {
            // SAFETY: the block's memory for this slot holds at least `len` elements, is
            // 64-byte aligned, zero-initialised (valid for every Value) and written only through
            // CpuSlices of this block's threads, which all run on this OS thread; it outlives
            // the borrow of `self`, which ends before the block does.
            Ok(ptr) => unsafe { CpuSlice::from_raw(ptr.cast::<T>(), len, true) },
            Err(reason) => {
                self.contract_error(reason);
                CpuSlice::empty()
            }
        }
    }

    /// Dynamic shared memory: the launch's `shared_mem_bytes` per block, as
    /// `bytes / size_of::<T>()` elements of `T`, zeroed when the block starts.
    pub fn dynamic_shared<T: Value>(&self) -> CpuSlice<'_, T> {
        let (ptr, bytes) = self.block().dynamic_shared();
        let len = bytes.checked_div(std::mem::size_of::<T>()).unwrap_or(0);
        if let (Some(race), true) = (self.block().race(), bytes > 0) {
            // Named with the first view's element type, so reports index elements, not bytes.
            race.name_region_with(ptr as usize, || {
                let name = format!("dynamic shared memory (as {})", T::ELEM);
                Region::new(ptr as usize, len, std::mem::size_of::<T>(), name)
            });
        }
        // SAFETY: as for `shared_array`: `bytes` zeroed, aligned bytes of this block.
        unsafe { CpuSlice::from_raw(ptr.cast::<T>(), len, true) }
    }
}
