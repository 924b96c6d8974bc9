//! `CpuOwnedSlice` and `CpuReadSlice`: plain (non-atomic, so vectorizable) views of slice
//! parameters, for a block twin's owned loop (`ThreadCtx::__each_owned_thread`).
//!
//! Every `CpuSlice` access is a relaxed atomic, which LLVM does not vectorize: saxpy's block
//! loop over them ran at 0.43-0.59 x a plain loop per core. Plain accesses are sound only
//! where no other thread of the launch touches the element while it is accessed, and each
//! view here checks that for itself rather than trusting the macro's proof:
//!
//! - A `CpuOwnedSlice` (a `&mut [T]` parameter) gives element `i` only to the thread whose
//!   global x index is `i`, and only in the owned loop, which runs only one-dimensional launches
//!   without the race checker: there that index names one thread of the whole launch. The
//!   launch's arguments hand the parameter out either as owned views or as `CpuSlice`s, never
//!   both (`CpuArgs::slice_owned`), so no other access to the element exists.
//! - A `CpuReadSlice` is a `&[T]` parameter: nothing writes it during the launch (its
//!   `CpuSlice`s refuse writes and atomics, the host's buffer is borrowed by the launch, and a
//!   `&mut` argument is another buffer), so any thread may load any element plainly.
//!
//! In the owned loop the twin's `i < y.len()` and the views' checks fold away for the threads
//! whose index is below every length the twin names, so the loop is plain loads and stores.

use std::marker::PhantomData;

use crate::core::scalar::Scalar;
use crate::cpu::slice::out_of_bounds;
use crate::cpu::twin_thread::{ThreadView, TwinThread};

/// A `&mut [T]` parameter whose elements each belong to one thread: the one whose global x
/// index is the element's. Valid for `'a`, the launch.
pub struct CpuOwnedSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    marker: PhantomData<&'a mut [T]>,
}

impl<T> Clone for CpuOwnedSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for CpuOwnedSlice<'_, T> {}

impl<T: Scalar> CpuOwnedSlice<'_, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` aligned `T`s for the view's lifetime,
    /// and during it every access to that memory must go through `CpuOwnedSlice`s (which touch
    /// element `i` only from the thread whose global x index is `i`, in the owned loop).
    pub(crate) unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        CpuOwnedSlice {
            ptr,
            len,
            marker: PhantomData,
        }
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

    /// Element `index`, which must be `t`'s own; otherwise reports the violation for source
    /// `line` (out of bounds, or another thread's element) and returns zero.
    #[inline(always)]
    pub fn get(&self, index: usize, t: &TwinThread<'_>, line: u32) -> T {
        if t.owns(index) && index < self.len {
            // SAFETY: in bounds of memory valid for the view (from_raw's contract); `t` is the
            // thread of a one-dimensional launch whose global x index is `index`, running in
            // the owned loop, so no other thread of the launch reads or writes this element,
            // and this thread's own accesses are ordered by program order.
            unsafe { self.ptr.add(index).read() }
        } else {
            not_owned(index, self.len, t, line);
            T::from_bits(0)
        }
    }

    /// Stores `value` at `index`, which must be `t`'s own; otherwise reports the violation
    /// and stores nothing.
    #[inline(always)]
    pub fn set(&self, index: usize, value: T, t: &TwinThread<'_>, line: u32) {
        if t.owns(index) && index < self.len {
            // SAFETY: as in `get`: the element is in bounds and `t`'s alone.
            unsafe { self.ptr.add(index).write(value) }
        } else {
            not_owned(index, self.len, t, line);
        }
    }
}

/// An access to an owned slice that failed its check: out of bounds, or not the thread's own
/// element (which the macro's proof rules out; a twin that breaks it fails the launch).
#[cold]
#[inline(never)]
fn not_owned(index: usize, len: usize, t: &TwinThread<'_>, line: u32) {
    if index >= len {
        out_of_bounds(index, len, t.ctx(), line);
    } else {
        t.ctx().contract_error(format!(
            "line {line} accesses element {index} of an owned slice from a thread that does \
             not own it; regenerate the twin with the matching #[kernel] macro"
        ));
    }
}

/// A `&[T]` parameter, which no thread writes during the launch, read with plain loads.
/// Valid for `'a`, the launch.
pub struct CpuReadSlice<'a, T> {
    ptr: *const T,
    len: usize,
    marker: PhantomData<&'a [T]>,
}

impl<T> Clone for CpuReadSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for CpuReadSlice<'_, T> {}

impl<T: Scalar> CpuReadSlice<'_, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `len` aligned `T`s for the view's lifetime, and
    /// nothing may write that memory during it.
    pub(crate) unsafe fn from_raw(ptr: *const T, len: usize) -> Self {
        CpuReadSlice {
            ptr,
            len,
            marker: PhantomData,
        }
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
            // SAFETY: in bounds of memory valid for reads that nothing writes while the view
            // lives (from_raw's contract), so a plain load races with nothing.
            unsafe { self.ptr.add(index).read() }
        } else {
            out_of_bounds(index, self.len, t.ctx(), line);
            T::from_bits(0)
        }
    }
}
