//! How the CPU backend touches one element of each scalar type: every load and store is a
//! relaxed atomic access of the element's bits, so kernels that race (as GPU kernels may) are
//! defined behaviour here too; on x86 and ARM a relaxed load or store is a plain move.

use std::sync::atomic::{
    AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicU16, AtomicU32,
    AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use half::{bf16, f16};

/// Relaxed for plain loads and stores (CUDA's weak accesses).
const PLAIN: Ordering = Ordering::Relaxed;
/// Read-modify-writes: CUDA's atomics are relaxed, but SeqCst costs nothing more on x86 and
/// keeps hand-rolled flag protocols (atomic + fence) correct on weaker hosts.
const RMW: Ordering = Ordering::SeqCst;

/// A read-modify-write operation of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwOp {
    /// `atomic_add` (wrapping for integers).
    Add,
    /// `atomic_sub` (wrapping for integers).
    Sub,
    /// `atomic_min` (a NaN operand is ignored, as by `f32::min`).
    Min,
    /// `atomic_max` (a NaN operand is ignored, as by `f32::max`).
    Max,
    /// `atomic_exchange`.
    Exchange,
    /// `atomic_and`.
    And,
    /// `atomic_or`.
    Or,
    /// `atomic_xor`.
    Xor,
}

impl RmwOp {
    /// The kernel-language method name.
    pub fn method(self) -> &'static str {
        match self {
            RmwOp::Add => "atomic_add",
            RmwOp::Sub => "atomic_sub",
            RmwOp::Min => "atomic_min",
            RmwOp::Max => "atomic_max",
            RmwOp::Exchange => "atomic_exchange",
            RmwOp::And => "atomic_and",
            RmwOp::Or => "atomic_or",
            RmwOp::Xor => "atomic_xor",
        }
    }
}

/// Atomic element access for one scalar type; a supertrait of [`crate::Scalar`], so sealed.
///
/// # Safety of the methods
/// Every `ptr` must be valid for reads and writes of one `Self`, aligned to `size_of::<Self>()`
/// (host buffers and shared memory are 64-byte aligned, so every element is), and every other
/// access to it while the call runs must be atomic too.
pub trait Element: Copy + Send + Sync + 'static {
    /// A relaxed atomic load.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn load(ptr: *mut Self) -> Self;

    /// A relaxed atomic store.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn store(ptr: *mut Self, value: Self);

    /// Applies `op` atomically and returns the old value; `None` (and nothing written) when
    /// the operation is not defined for the type (bitwise ops on floats, arithmetic on bool).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn rmw(ptr: *mut Self, op: RmwOp, value: Self) -> Option<Self>;

    /// Compare-and-swap by bits (as CUDA's `atomicCAS`); returns the old value.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn compare_exchange(ptr: *mut Self, current: Self, new: Self) -> Self;

    /// The value's bits, zero-extended (shuffles move these).
    fn to_bits(self) -> u64;

    /// The value from the low bits of `bits` (`bool`: any nonzero is `true`).
    fn from_bits(bits: u64) -> Self;
}

/// Loops a compare-and-swap on `atomic` until `f(old)` is stored; returns the old bits.
macro_rules! cas_loop {
    ($atomic:expr, $from:expr, $to:expr, $f:expr) => {{
        let atomic = $atomic;
        let mut old = atomic.load(PLAIN);
        loop {
            let new = $to($f($from(old)));
            match atomic.compare_exchange_weak(old, new, RMW, PLAIN) {
                Ok(previous) => break previous,
                Err(actual) => old = actual,
            }
        }
    }};
}

macro_rules! integer_element {
    ($($ty:ty => $atomic:ty, $unsigned:ty;)*) => {$(
        impl Element for $ty {
            #[inline(always)]
            unsafe fn load(ptr: *mut Self) -> Self {
                // SAFETY: the caller upholds the trait's contract (valid, aligned, atomic).
                unsafe { <$atomic>::from_ptr(ptr) }.load(PLAIN)
            }

            #[inline(always)]
            unsafe fn store(ptr: *mut Self, value: Self) {
                // SAFETY: as for `load`.
                unsafe { <$atomic>::from_ptr(ptr) }.store(value, PLAIN)
            }

            #[inline]
            unsafe fn rmw(ptr: *mut Self, op: RmwOp, value: Self) -> Option<Self> {
                // SAFETY: as for `load`.
                let atomic = unsafe { <$atomic>::from_ptr(ptr) };
                Some(match op {
                    RmwOp::Add => atomic.fetch_add(value, RMW),
                    RmwOp::Sub => atomic.fetch_sub(value, RMW),
                    RmwOp::Min => atomic.fetch_min(value, RMW),
                    RmwOp::Max => atomic.fetch_max(value, RMW),
                    RmwOp::Exchange => atomic.swap(value, RMW),
                    RmwOp::And => atomic.fetch_and(value, RMW),
                    RmwOp::Or => atomic.fetch_or(value, RMW),
                    RmwOp::Xor => atomic.fetch_xor(value, RMW),
                })
            }

            #[inline]
            unsafe fn compare_exchange(ptr: *mut Self, current: Self, new: Self) -> Self {
                // SAFETY: as for `load`.
                let atomic = unsafe { <$atomic>::from_ptr(ptr) };
                match atomic.compare_exchange(current, new, RMW, PLAIN) {
                    Ok(old) | Err(old) => old,
                }
            }

            #[inline(always)]
            fn to_bits(self) -> u64 {
                self as $unsigned as u64
            }

            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $unsigned as $ty
            }
        }
    )*};
}

integer_element! {
    i8 => AtomicI8, u8;
    u8 => AtomicU8, u8;
    i16 => AtomicI16, u16;
    u16 => AtomicU16, u16;
    i32 => AtomicI32, u32;
    u32 => AtomicU32, u32;
    i64 => AtomicI64, u64;
    u64 => AtomicU64, u64;
    usize => AtomicUsize, usize;
    isize => AtomicIsize, usize;
}

macro_rules! float_element {
    ($($ty:ty => $atomic:ty, $bits:ty, $from_bits:expr, $to_bits:expr;)*) => {$(
        impl Element for $ty {
            #[inline(always)]
            unsafe fn load(ptr: *mut Self) -> Self {
                // SAFETY: the caller upholds the trait's contract; the float and its bits
                // integer have the same size and alignment on every 64-bit host.
                $from_bits(unsafe { <$atomic>::from_ptr(ptr.cast::<$bits>()) }.load(PLAIN))
            }

            #[inline(always)]
            unsafe fn store(ptr: *mut Self, value: Self) {
                // SAFETY: as for `load`.
                unsafe { <$atomic>::from_ptr(ptr.cast::<$bits>()) }.store($to_bits(value), PLAIN)
            }

            #[inline]
            unsafe fn rmw(ptr: *mut Self, op: RmwOp, value: Self) -> Option<Self> {
                // SAFETY: as for `load`.
                let atomic = unsafe { <$atomic>::from_ptr(ptr.cast::<$bits>()) };
                let old = match op {
                    RmwOp::Add => cas_loop!(atomic, $from_bits, $to_bits, |old: $ty| old + value),
                    RmwOp::Sub => cas_loop!(atomic, $from_bits, $to_bits, |old: $ty| old - value),
                    RmwOp::Min => cas_loop!(atomic, $from_bits, $to_bits, |old: $ty| old.min(value)),
                    RmwOp::Max => cas_loop!(atomic, $from_bits, $to_bits, |old: $ty| old.max(value)),
                    RmwOp::Exchange => atomic.swap($to_bits(value), RMW),
                    RmwOp::And | RmwOp::Or | RmwOp::Xor => return None,
                };
                Some($from_bits(old))
            }

            #[inline]
            unsafe fn compare_exchange(ptr: *mut Self, current: Self, new: Self) -> Self {
                // SAFETY: as for `load`.
                let atomic = unsafe { <$atomic>::from_ptr(ptr.cast::<$bits>()) };
                match atomic.compare_exchange($to_bits(current), $to_bits(new), RMW, PLAIN) {
                    Ok(old) | Err(old) => $from_bits(old),
                }
            }

            #[inline(always)]
            fn to_bits(self) -> u64 {
                u64::from($to_bits(self))
            }

            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                $from_bits(bits as $bits)
            }
        }
    )*};
}

float_element! {
    f32 => AtomicU32, u32, f32::from_bits, f32::to_bits;
    f64 => AtomicU64, u64, f64::from_bits, f64::to_bits;
    f16 => AtomicU16, u16, f16::from_bits, f16::to_bits;
    bf16 => AtomicU16, u16, bf16::from_bits, bf16::to_bits;
}

impl Element for bool {
    #[inline(always)]
    unsafe fn load(ptr: *mut Self) -> Self {
        // SAFETY: the caller upholds the trait's contract.
        unsafe { AtomicBool::from_ptr(ptr) }.load(PLAIN)
    }

    #[inline(always)]
    unsafe fn store(ptr: *mut Self, value: Self) {
        // SAFETY: as for `load`.
        unsafe { AtomicBool::from_ptr(ptr) }.store(value, PLAIN)
    }

    #[inline]
    unsafe fn rmw(ptr: *mut Self, op: RmwOp, value: Self) -> Option<Self> {
        // SAFETY: as for `load`.
        let atomic = unsafe { AtomicBool::from_ptr(ptr) };
        Some(match op {
            // false < true: the minimum is "and", the maximum "or".
            RmwOp::Min | RmwOp::And => atomic.fetch_and(value, RMW),
            RmwOp::Max | RmwOp::Or => atomic.fetch_or(value, RMW),
            RmwOp::Xor => atomic.fetch_xor(value, RMW),
            RmwOp::Exchange => atomic.swap(value, RMW),
            RmwOp::Add | RmwOp::Sub => return None,
        })
    }

    #[inline]
    unsafe fn compare_exchange(ptr: *mut Self, current: Self, new: Self) -> Self {
        // SAFETY: as for `load`.
        let atomic = unsafe { AtomicBool::from_ptr(ptr) };
        match atomic.compare_exchange(current, new, RMW, PLAIN) {
            Ok(old) | Err(old) => old,
        }
    }

    #[inline(always)]
    fn to_bits(self) -> u64 {
        u64::from(self)
    }

    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rmw<T: Element>(start: T, op: RmwOp, value: T) -> (Option<T>, T) {
        let mut cell = start;
        // SAFETY: a local, aligned and accessed by nothing else.
        let old = unsafe { T::rmw(&mut cell, op, value) };
        (old, cell)
    }

    #[test]
    fn integer_operations_wrap_and_return_the_old_value() {
        assert_eq!(rmw(i32::MAX, RmwOp::Add, 1), (Some(i32::MAX), i32::MIN));
        assert_eq!(rmw(0u32, RmwOp::Sub, 1), (Some(0), u32::MAX));
        assert_eq!(rmw(5i64, RmwOp::Min, -3), (Some(5), -3));
        assert_eq!(rmw(5u64, RmwOp::Max, 9), (Some(5), 9));
        assert_eq!(rmw(5usize, RmwOp::Exchange, 7), (Some(5), 7));
        assert_eq!(rmw(0b1100u32, RmwOp::And, 0b1010), (Some(0b1100), 0b1000));
        assert_eq!(rmw(0b1100u32, RmwOp::Or, 0b1010), (Some(0b1100), 0b1110));
        assert_eq!(rmw(0b1100u32, RmwOp::Xor, 0b1010), (Some(0b1100), 0b0110));
    }

    #[test]
    fn float_operations() {
        assert_eq!(rmw(1.5f32, RmwOp::Add, 2.0), (Some(1.5), 3.5));
        assert_eq!(rmw(1.5f64, RmwOp::Sub, 2.0), (Some(1.5), -0.5));
        assert_eq!(rmw(1.0f32, RmwOp::Min, f32::NAN), (Some(1.0), 1.0));
        assert_eq!(rmw(f32::NAN, RmwOp::Max, 2.0).1, 2.0);
        let h = |v: f32| f16::from_f32(v);
        assert_eq!(rmw(h(1.0), RmwOp::Add, h(0.5)), (Some(h(1.0)), h(1.5)));
        let b = |v: f32| bf16::from_f32(v);
        assert_eq!(rmw(b(4.0), RmwOp::Max, b(8.0)), (Some(b(4.0)), b(8.0)));
        assert_eq!(rmw(1.0f32, RmwOp::And, 2.0), (None, 1.0));
        let mut cell = 1.0f32;
        // SAFETY: a local.
        let old = unsafe { f32::compare_exchange(&mut cell, 1.0, 4.0) };
        assert_eq!((old, cell), (1.0, 4.0));
        // SAFETY: a local.
        let old = unsafe { f32::compare_exchange(&mut cell, 1.0, 9.0) };
        assert_eq!((old, cell), (4.0, 4.0), "a failed exchange writes nothing");
    }

    #[test]
    fn bool_operations_and_bits() {
        assert_eq!(rmw(true, RmwOp::Min, false), (Some(true), false));
        assert_eq!(rmw(false, RmwOp::Or, true), (Some(false), true));
        assert_eq!(rmw(true, RmwOp::Add, true), (None, true));
        assert!(bool::from_bits(2));
        assert_eq!((-1i32).to_bits(), 0xffff_ffff);
        assert_eq!(i32::from_bits(0xffff_ffff), -1);
        assert_eq!((-1i8).to_bits(), 0xff);
        assert_eq!(i16::from_bits(0xfffe), -2);
        assert_eq!(rmw(250u8, RmwOp::Add, 10), (Some(250), 4));
        assert_eq!(<f32 as Element>::from_bits(Element::to_bits(2.5f32)), 2.5);
    }
}
