//! `CpuPlace`: one element of a slice (or a part of one: a field, an array element) as a CPU
//! twin reads and writes it, so that `bodies[i].pos[0] = x` writes four bytes, as on a GPU,
//! and not the whole element another block may be writing at the same time.

use std::fmt;
use std::marker::PhantomData;

use crate::core::value::{zero, Value};
use crate::cpu::racecheck::AccessKind;
use crate::cpu::slice::{CpuSlice, FAIL_INDEX};
use crate::cpu::thread::ThreadCtx;
use crate::cpu::twin_thread::{racing, ThreadView};

/// A place in global or shared memory: the element `index` of a slice, or a part of it.
/// Reads and writes go leaf by leaf through relaxed atomics, as [`crate::cpu::CpuSlice`]'s
/// do. A place made from an out-of-bounds index (the failure already reported) reads zeros
/// and ignores writes.
pub struct CpuPlace<'a, T> {
    /// Null for a place that does not exist (its index failed its bounds check).
    ptr: *mut T,
    /// The slice element the place is in, for messages.
    index: usize,
    /// Whether the slice may be written (`&mut [T]`, shared memory).
    writable: bool,
    marker: PhantomData<&'a T>,
}

impl<T> Clone for CpuPlace<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for CpuPlace<'_, T> {}

// SAFETY: as for CpuSlice: a shared view whose every access is atomic (Value's leaves go
// through Element), so using it from several threads is as sound as sharing `&[AtomicU32]`.
unsafe impl<T: Sync> Send for CpuPlace<'_, T> {}
// SAFETY: as for Send.
unsafe impl<T: Sync> Sync for CpuPlace<'_, T> {}

impl<T> fmt::Debug for CpuPlace<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuPlace")
            .field("ptr", &self.ptr)
            .field("index", &self.index)
            .field("writable", &self.writable)
            .finish()
    }
}

impl<'a, T: Value> CpuPlace<'a, T> {
    /// The value at `ptr`, inside element `index` of its slice.
    ///
    /// # Safety
    /// `ptr` must be valid for reads (and writes, when `writable`) of one `T`, aligned, for
    /// `'a`, holding a valid `T`, and every other access to it during `'a` must be atomic or
    /// through a `CpuSlice` or another `CpuPlace`.
    #[inline(always)]
    pub(crate) unsafe fn new(ptr: *mut T, index: usize, writable: bool) -> Self {
        CpuPlace {
            ptr,
            index,
            writable,
            marker: PhantomData,
        }
    }

    /// A place that does not exist: its index failed the bounds check (already reported).
    #[inline(always)]
    pub(crate) fn absent(index: usize) -> Self {
        CpuPlace {
            ptr: std::ptr::null_mut(),
            index,
            writable: false,
            marker: PhantomData,
        }
    }

    /// The value, read by thread `t` at source `line` (zeros for a place whose index was out
    /// of bounds).
    #[inline(always)]
    pub fn read<V: ThreadView + ?Sized>(&self, t: &V, line: u32) -> T {
        if self.ptr.is_null() {
            return zero();
        }
        let p = self.ptr;
        if let Some(race) = racing(t) {
            // SAFETY: as below.
            return race.access(t.ctx(), p as usize, AccessKind::Read, line, || unsafe {
                T::__load(p)
            });
        }
        // SAFETY: non-null, so valid for 'a (`new`'s contract); accessed atomically.
        unsafe { T::__load(p) }
    }

    /// Stores `value`; a write to a read-only slice is reported for source `line` and stores
    /// nothing, as is one to a place whose index was out of bounds (reported when it failed).
    #[inline(always)]
    pub fn set<V: ThreadView + ?Sized>(&self, value: T, t: &V, line: u32) {
        if self.writable {
            let p = self.ptr;
            if let Some(race) = racing(t) {
                // SAFETY: as below.
                race.access(t.ctx(), p as usize, AccessKind::Write, line, || unsafe {
                    T::__store(p, value)
                });
                return;
            }
            // SAFETY: writable places are valid for writes (`new`'s contract; absent ones are
            // never writable).
            unsafe { T::__store(p, value) }
        } else if !self.ptr.is_null() {
            refused_write(self.index, t.ctx(), line);
        }
    }

    /// The part of this place at `offset` bytes, of type `F`: a field. `#[device]` structs
    /// project their fields through this; only `__device_struct!`'s expansion calls it.
    ///
    /// # Safety
    /// A field of type `F` must start `offset` bytes into every `T`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn __field<F: Value>(self, offset: usize) -> CpuPlace<'a, F> {
        if self.ptr.is_null() {
            return CpuPlace::absent(self.index);
        }
        // SAFETY: the field lies inside the `T` at `ptr` (the caller's contract), so it is
        // valid for what the `T` is valid for, aligned as the field's type within `T`.
        unsafe {
            CpuPlace::new(
                self.ptr.cast::<u8>().add(offset).cast::<F>(),
                self.index,
                self.writable,
            )
        }
    }
}

impl<'a, T: Value, const N: usize> CpuPlace<'a, [T; N]> {
    /// Element `i` of the array in this place; out of bounds, reports the violation for source
    /// `line` and returns a place that reads zeros and ignores writes.
    #[inline(always)]
    pub fn index<V: ThreadView + ?Sized>(&self, i: usize, t: &V, line: u32) -> CpuPlace<'a, T> {
        if i >= N {
            t.ctx().fail(FAIL_INDEX, line, i as u64, N as u64);
            return CpuPlace::absent(self.index);
        }
        if self.ptr.is_null() {
            return CpuPlace::absent(self.index);
        }
        // SAFETY: element `i < N` of the array this place holds (`new`'s contract).
        unsafe { CpuPlace::new(self.ptr.cast::<T>().add(i), self.index, self.writable) }
    }

    /// The array in this place as a slice of its `N` elements, which atomics reach as a
    /// slice's (`hist[w].atomic_add(b, 1)` on a row of shared memory). A place whose index
    /// failed its bounds check gives an empty slice.
    #[inline(always)]
    pub fn row(&self) -> CpuSlice<'a, T> {
        if self.ptr.is_null() {
            return CpuSlice::empty();
        }
        // SAFETY: the `[T; N]` at `ptr` is valid for `'a` (writable when the place is) and
        // accessed only atomically (`new`'s contract), so its `N` elements are what
        // `from_raw` asks for; `[T; N]` aligns each `T` as `T` does.
        unsafe { CpuSlice::from_raw(self.ptr.cast::<T>(), N, self.writable) }
    }
}

/// A write through a place of a read-only slice.
#[cold]
#[inline(never)]
fn refused_write(index: usize, t: &ThreadCtx, line: u32) {
    t.contract_error(format!(
        "line {line} writes into element {index} of a read-only slice (`&[T]`); the twin must \
         only write `&mut` slices and shared memory"
    ));
}
