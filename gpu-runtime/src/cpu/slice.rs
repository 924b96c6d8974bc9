//! `CpuSlice`: how a CPU twin sees a slice parameter or a shared-memory array.

use std::fmt;
use std::marker::PhantomData;

use crate::core::element::RmwOp;
use crate::core::scalar::Scalar;
use crate::core::value::{zero, Value};
use crate::cpu::place::CpuPlace;
use crate::cpu::racecheck::AccessKind;
use crate::cpu::thread::ThreadCtx;
use crate::cpu::twin_thread::{racing, ThreadView};

/// Checked-mode violation kind: index out of bounds.
pub(crate) const FAIL_INDEX: u32 = 1;

/// A slice of global or shared memory as a CPU twin sees it: a pointer, a length, and whether
/// the kernel may write it. Every access is bounds-checked (a failure is reported through
/// [`ThreadCtx::fail`], as checked mode does on a GPU) and atomic, so racing threads are
/// defined behaviour. Valid for `'a`: the launch (global memory) or the block (shared memory).
pub struct CpuSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    /// `len` when the kernel may write (`&mut [T]`, shared memory), else 0: one comparison
    /// both bounds-checks a write and refuses writes to `&[T]`.
    write_len: usize,
    marker: PhantomData<&'a [T]>,
}

impl<T> Clone for CpuSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for CpuSlice<'_, T> {}

// SAFETY: a CpuSlice is a shared view whose every access is atomic (Element), so using it from
// several threads at once is as sound as sharing `&[AtomicU32]`; `T: Sync` covers the values.
unsafe impl<T: Sync> Send for CpuSlice<'_, T> {}
// SAFETY: as for Send.
unsafe impl<T: Sync> Sync for CpuSlice<'_, T> {}

impl<T> fmt::Debug for CpuSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuSlice")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("writable", &(self.write_len == self.len))
            .finish()
    }
}

impl<'a, T: Value> CpuSlice<'a, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads (and writes, when `writable`) of `len` elements of `T`,
    /// aligned to `align_of::<T>()` (and every scalar leaf to its size), for `'a`, holding valid `T`s, and every other access to the
    /// memory during `'a` must be atomic or through another `CpuSlice`, or a plain read of
    /// memory that nothing writes during `'a` (`CpuReadSlice`).
    pub(crate) unsafe fn from_raw(ptr: *mut T, len: usize, writable: bool) -> Self {
        CpuSlice {
            ptr,
            len,
            write_len: if writable { len } else { 0 },
            marker: PhantomData,
        }
    }

    /// A view of `len` elements at `ptr` of which the first `write_len` (0 or `len`) may be
    /// written.
    ///
    /// # Safety
    /// As for `from_raw`, with writes allowed when `write_len` is nonzero; `write_len` must be
    /// 0 or `len`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw_parts(ptr: *mut T, len: usize, write_len: usize) -> Self {
        CpuSlice {
            ptr,
            len,
            write_len,
            marker: PhantomData,
        }
    }

    /// An empty slice, for arguments that could not be provided (the reason is reported).
    pub(crate) fn empty() -> Self {
        CpuSlice {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            write_len: 0,
            marker: PhantomData,
        }
    }

    /// The address of element `index`, naming it to the race checker.
    pub(crate) fn addr(&self, index: usize) -> usize {
        (self.ptr as usize).wrapping_add(index.wrapping_mul(std::mem::size_of::<T>()))
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`; out of bounds, reports the violation for source `line` and returns
    /// zero.
    #[inline(always)]
    pub fn get<V: ThreadView + ?Sized>(&self, index: usize, t: &V, line: u32) -> T {
        if index < self.len {
            // SAFETY: in bounds of memory valid for 'a (from_raw's contract).
            let p = unsafe { self.ptr.add(index) };
            if let Some(race) = racing(t) {
                // SAFETY: as below.
                return race.access(t.ctx(), p as usize, AccessKind::Read, line, || unsafe {
                    T::__load(p)
                });
            }
            // SAFETY: in bounds of memory valid for 'a; accessed atomically.
            unsafe { T::__load(p) }
        } else {
            out_of_bounds(index, self.len, t.ctx(), line);
            zero()
        }
    }

    /// Stores `value` at `index`; out of bounds, reports the violation and stores nothing.
    #[inline(always)]
    pub fn set<V: ThreadView + ?Sized>(&self, index: usize, value: T, t: &V, line: u32) {
        if index < self.write_len {
            // SAFETY: in bounds of memory valid for writes (write_len is 0 unless writable).
            let p = unsafe { self.ptr.add(index) };
            if let Some(race) = racing(t) {
                // SAFETY: as below.
                race.access(t.ctx(), p as usize, AccessKind::Write, line, || unsafe {
                    T::__store(p, value)
                });
                return;
            }
            // SAFETY: as above.
            unsafe { T::__store(p, value) }
        } else {
            refused_write::<T>(index, self.len, t.ctx(), line);
        }
    }

    /// Elements `start..end` (`&x[start..end]`, `writable` for `&mut`); a range outside the
    /// slice, or a writable part of a read-only slice, reports the violation for `line` and
    /// gives an empty slice.
    #[inline(always)]
    pub fn sub<V: ThreadView + ?Sized>(
        &self,
        start: usize,
        end: usize,
        writable: bool,
        t: &V,
        line: u32,
    ) -> CpuSlice<'a, T> {
        if end > self.len {
            out_of_bounds(end, self.len, t.ctx(), line);
            return Self::empty();
        }
        if start > end {
            out_of_bounds(start, end, t.ctx(), line);
            return Self::empty();
        }
        if writable && self.write_len == 0 && end > start {
            refused_write::<T>(start, self.len, t.ctx(), line);
            return Self::empty();
        }
        let len = end - start;
        // SAFETY: start..end lies within this slice's memory (checked above), so the part is
        // valid for 'a under the same contract; writes stay allowed only where they were.
        unsafe {
            CpuSlice::from_raw_parts(
                self.ptr.add(start),
                len,
                if writable && self.write_len != 0 {
                    len
                } else {
                    0
                },
            )
        }
    }

    /// Elements `start..end` of a kernel's local array or array field (`&cell.items[..n]`), read
    /// only; a range outside it reports the violation for `line` and gives an empty slice.
    #[inline(always)]
    pub fn part_of<V: ThreadView + ?Sized>(
        items: &'a [T],
        start: usize,
        end: usize,
        t: &V,
        line: u32,
    ) -> Self {
        // SAFETY: the shared borrow keeps the elements valid, aligned and unwritten for 'a, and
        // the view allows no writes.
        let whole = unsafe { Self::from_raw(items.as_ptr().cast_mut(), items.len(), false) };
        whole.sub(start, end, false, t, line)
    }

    /// Elements `start..end` of a kernel's local array or array field, writable
    /// (`&mut local[a..b]`); a range outside it reports the violation for `line` and gives an
    /// empty slice.
    #[inline(always)]
    pub fn part_of_mut<V: ThreadView + ?Sized>(
        items: &'a mut [T],
        start: usize,
        end: usize,
        t: &V,
        line: u32,
    ) -> Self {
        // SAFETY: the exclusive borrow keeps the elements valid and aligned for 'a and lets
        // nothing but this view (and its copies) reach them meanwhile.
        let whole = unsafe { Self::from_raw(items.as_mut_ptr(), items.len(), true) };
        whole.sub(start, end, true, t, line)
    }

    /// Row `row` of this slice read as rows of `cols` elements: a row of a shared array whose
    /// rows take their length from a const generic, which the CPU twin holds as a value. Out
    /// of bounds, reports index `row` against the rows there are for source `line` and gives an
    /// empty slice.
    #[inline(always)]
    pub fn row_of<V: ThreadView + ?Sized>(
        &self,
        row: usize,
        cols: usize,
        t: &V,
        line: u32,
    ) -> CpuSlice<'a, T> {
        let rows = self.len.checked_div(cols).unwrap_or(0);
        if row >= rows {
            out_of_bounds(row, rows, t.ctx(), line);
            return Self::empty();
        }
        self.sub(row * cols, row * cols + cols, self.write_len != 0, t, line)
    }

    /// Element `index` as a place, to read or write a part of it (a field, an element of an
    /// array) without touching the rest, which other threads may write meanwhile. Out of
    /// bounds, reports the violation for source `line` and returns a place that reads zeros
    /// and ignores writes.
    #[inline(always)]
    pub fn place<V: ThreadView + ?Sized>(&self, index: usize, t: &V, line: u32) -> CpuPlace<'a, T> {
        if index < self.len {
            // SAFETY: in bounds of memory valid for 'a, writable when index < write_len
            // (from_raw's contract); a place accesses it atomically, as the slice does.
            unsafe { CpuPlace::new(self.ptr.add(index), index, index < self.write_len) }
        } else {
            out_of_bounds(index, self.len, t.ctx(), line);
            CpuPlace::absent(index)
        }
    }
}

impl<'a, T: Scalar> CpuSlice<'a, T> {
    /// Elements `index..index + 2` (one access on a GPU, where `index` must be even); out of
    /// bounds, reports index `index + 1` and returns zeros.
    #[inline(always)]
    pub fn load2<V: ThreadView + ?Sized>(&self, index: usize, t: &V, line: u32) -> [T; 2] {
        self.load_lanes(index, t, line)
    }

    /// Stores `value` to elements `index..index + 2`; out of bounds, reports index
    /// `index + 1` and stores nothing.
    #[inline(always)]
    pub fn store2<V: ThreadView + ?Sized>(&self, index: usize, value: [T; 2], t: &V, line: u32) {
        self.store_lanes(index, value, t, line);
    }

    /// Elements `index..index + 4` (one 16-byte load on a GPU, where `index` must be a
    /// multiple of 4); out of bounds, reports index `index + 3` and returns zeros.
    #[inline(always)]
    pub fn load4<V: ThreadView + ?Sized>(&self, index: usize, t: &V, line: u32) -> [T; 4] {
        self.load_lanes(index, t, line)
    }

    /// Stores `value` to elements `index..index + 4`; out of bounds, reports index
    /// `index + 3` and stores nothing.
    #[inline(always)]
    pub fn store4<V: ThreadView + ?Sized>(&self, index: usize, value: [T; 4], t: &V, line: u32) {
        self.store_lanes(index, value, t, line);
    }

    /// Elements `index..index + N` as one vector access; under the race checker, element by
    /// element, so each word is checked.
    #[inline(always)]
    fn load_lanes<const N: usize, V: ThreadView + ?Sized>(
        &self,
        index: usize,
        t: &V,
        line: u32,
    ) -> [T; N] {
        let Some(p) = self.vector_start(index, N, self.len, t, line) else {
            return [T::from_bits(0); N];
        };
        if racing(t).is_some() {
            return std::array::from_fn(|k| self.get(index + k, t, line));
        }
        // SAFETY: `vector_start` checked that all N elements are in bounds.
        std::array::from_fn(|k| unsafe { T::load(p.add(k)) })
    }

    /// Stores `value` to elements `index..index + N` as one vector access; under the race
    /// checker, element by element.
    #[inline(always)]
    fn store_lanes<const N: usize, V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: [T; N],
        t: &V,
        line: u32,
    ) {
        let Some(p) = self.vector_start(index, N, self.write_len, t, line) else {
            return;
        };
        let racing = racing(t).is_some();
        for (k, v) in value.into_iter().enumerate() {
            if racing {
                self.set(index + k, v, t, line);
            } else {
                // SAFETY: `vector_start` checked all N elements against the writable length.
                unsafe { T::store(p.add(k), v) }
            }
        }
    }

    /// `atomic_load`: a relaxed atomic read, as every element read is here.
    #[inline]
    pub fn atomic_load<V: ThreadView + ?Sized>(&self, index: usize, t: &V, line: u32) -> T {
        match racing(t) {
            Some(race) if index < self.len => {
                // SAFETY: in bounds of memory valid for 'a; accessed atomically.
                let p = unsafe { self.ptr.add(index) };
                // SAFETY: as above.
                race.access(
                    t.ctx(),
                    p as usize,
                    AccessKind::AtomicRead,
                    line,
                    || unsafe { T::load(p) },
                )
            }
            _ => self.get(index, t, line),
        }
    }

    /// `atomic_add`: returns the old value (integers wrap).
    #[inline]
    pub fn atomic_add<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Add, index, value, t, line)
    }

    /// `atomic_sub`: returns the old value (integers wrap).
    #[inline]
    pub fn atomic_sub<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Sub, index, value, t, line)
    }

    /// `atomic_min`: returns the old value; a NaN operand is ignored, as by `f32::min`.
    #[inline]
    pub fn atomic_min<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Min, index, value, t, line)
    }

    /// `atomic_max`: returns the old value; a NaN operand is ignored, as by `f32::max`.
    #[inline]
    pub fn atomic_max<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Max, index, value, t, line)
    }

    /// `atomic_exchange`: stores `value`, returns the old value.
    #[inline]
    pub fn atomic_exchange<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Exchange, index, value, t, line)
    }

    /// `atomic_and` (integers and bool): returns the old value.
    #[inline]
    pub fn atomic_and<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::And, index, value, t, line)
    }

    /// `atomic_or` (integers and bool): returns the old value.
    #[inline]
    pub fn atomic_or<V: ThreadView + ?Sized>(&self, index: usize, value: T, t: &V, line: u32) -> T {
        self.rmw(RmwOp::Or, index, value, t, line)
    }

    /// `atomic_xor` (integers and bool): returns the old value.
    #[inline]
    pub fn atomic_xor<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        self.rmw(RmwOp::Xor, index, value, t, line)
    }

    /// `atomic_compare_exchange`: stores `new` if the element equals `current` (by bits, as
    /// CUDA's `atomicCAS`); returns the old value either way.
    #[inline]
    pub fn atomic_compare_exchange<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        current: T,
        new: T,
        t: &V,
        line: u32,
    ) -> T {
        if index < self.write_len {
            // SAFETY: in bounds of writable memory; atomic.
            let p = unsafe { self.ptr.add(index) };
            if let Some(race) = racing(t) {
                // SAFETY: as above.
                return race.access(
                    t.ctx(),
                    p as usize,
                    AccessKind::AtomicWrite,
                    line,
                    || unsafe { T::compare_exchange(p, current, new) },
                );
            }
            // SAFETY: as above.
            unsafe { T::compare_exchange(p, current, new) }
        } else {
            refused_write::<T>(index, self.len, t.ctx(), line);
            T::from_bits(0)
        }
    }

    #[inline(always)]
    fn rmw<V: ThreadView + ?Sized>(
        &self,
        op: RmwOp,
        index: usize,
        value: T,
        t: &V,
        line: u32,
    ) -> T {
        if index < self.write_len {
            // SAFETY: in bounds of writable memory; atomic.
            let p = unsafe { self.ptr.add(index) };
            // SAFETY: as above.
            let rmw = || unsafe { T::rmw(p, op, value) };
            let old = match racing(t) {
                Some(race) => race.access(t.ctx(), p as usize, AccessKind::AtomicWrite, line, rmw),
                None => rmw(),
            };
            match old {
                Some(old) => old,
                None => {
                    t.ctx().contract_error(format!(
                        "{} on {} elements: the operation is not defined for the type",
                        op.method(),
                        T::TYPE
                    ));
                    // SAFETY: as above.
                    unsafe { T::load(p) }
                }
            }
        } else {
            refused_write::<T>(index, self.len, t.ctx(), line);
            T::from_bits(0)
        }
    }

    /// The first of `lanes` (2 or 4) elements, if `index..index + lanes` is within `limit` and
    /// aligned as the GPU's vector access needs; reports the failure otherwise.
    #[inline(always)]
    fn vector_start<V: ThreadView + ?Sized>(
        &self,
        index: usize,
        lanes: usize,
        limit: usize,
        t: &V,
        line: u32,
    ) -> Option<*mut T> {
        let last = index.wrapping_add(lanes - 1);
        if index < limit && last < limit && last > index {
            // SAFETY: all the elements are in bounds.
            let p = unsafe { self.ptr.add(index) };
            let bytes = lanes * std::mem::size_of::<T>();
            if bytes <= 16 && !(p as usize).is_multiple_of(bytes) {
                t.ctx().contract_error(format!(
                    "load{lanes}/store{lanes} at element {index} (line {line}) is not \
                     {bytes}-byte aligned; on a GPU this vector access faults: use an index \
                     that is a multiple of {lanes}"
                ));
                return None;
            }
            Some(p)
        } else if limit < self.len && last < self.len && last > index {
            refused_write::<T>(index, self.len, t.ctx(), line);
            None
        } else {
            t.ctx().fail(FAIL_INDEX, line, last as u64, self.len as u64);
            None
        }
    }
}

// The failure paths take plain values, not `&self`: a `&self` would force the caller's slice
// out of registers onto the stack on the hot path.

/// A read out of bounds.
#[cold]
#[inline(never)]
pub(crate) fn out_of_bounds(index: usize, len: usize, t: &ThreadCtx, line: u32) {
    t.fail(FAIL_INDEX, line, index as u64, len as u64);
}

/// A write that failed its check: out of bounds, or to a read-only slice.
#[cold]
#[inline(never)]
pub(crate) fn refused_write<T: Value>(index: usize, len: usize, t: &ThreadCtx, line: u32) {
    if index < len {
        t.contract_error(format!(
            "line {line} writes element {index} of a read-only slice (`&[{}]`); the twin must \
             only write `&mut` slices and shared memory",
            T::ELEM
        ));
    } else {
        t.fail(FAIL_INDEX, line, index as u64, len as u64);
    }
}
