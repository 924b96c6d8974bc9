//! The types kernels keep in memory: scalars, arrays of values and `#[device]` structs, and
//! the tag a launch checks an element or a by-value argument against.

use std::fmt;

use crate::core::element::Element;
use crate::core::scalar::{Scalar, ScalarType};

/// What a launch checks an element or by-value argument against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// A scalar.
    Scalar(ScalarType),
    /// An array or a `#[device]` struct.
    Value(ValueType),
}

impl ElemType {
    /// The Rust spelling, e.g. `"f32"`, `"[f32; 3]"` or `"Body"`.
    pub const fn name(self) -> &'static str {
        match self {
            ElemType::Scalar(ty) => ty.rust_name(),
            ElemType::Value(ty) => ty.name,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An array or a `#[device]` struct as a launch sees it: its name and C layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueType {
    /// The Rust spelling: the struct's name, or `[T; N]` for arrays.
    pub name: &'static str,
    /// `size_of`, the same on the host and the device.
    pub size: usize,
    /// `align_of`, the same on the host and the device.
    pub align: usize,
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A type kernels keep in memory: scalars, arrays of values, `#[device]` structs.
///
/// `#[device]` implements it for a `#[repr(C)]` struct through [`crate::__device_struct!`];
/// there is no need to implement it by hand.
///
/// # Safety
/// An implementation promises, for the type and every type it contains:
/// - all-zero bytes are a valid value (zeroed buffers and shared memory start so), and every
///   bit pattern a kernel can write into its leaves is valid (as for the scalars: `bool`
///   leaves hold 0 or 1, which generated kernels guarantee);
/// - it has no pointers, references or `Drop`, and one layout on the host and the device
///   (`#[repr(C)]`, checked by the layout assertions `#[device]` emits);
/// - `__load` and `__store` touch exactly the bytes of the value's leaves, each through
///   relaxed atomics, so racing kernels stay defined behaviour;
/// - `ELEM` describes the type: [`ElemType::Scalar`] only for the scalars themselves (the
///   blanket implementation), and a [`ValueType`] with the type's own size and alignment.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be kept in kernel memory",
    label = "not a scalar, an array of values or a `#[device]` struct",
    note = "kernels keep scalars, arrays of them and `#[device] #[repr(C)]` structs in memory; \
            mark the struct `#[device]` (with `#[repr(C)]` and `#[derive(Clone, Copy)]`)"
)]
pub unsafe trait Value: Copy + Send + Sync + 'static {
    /// The runtime tag of this type.
    const ELEM: ElemType;

    /// Reads the value at `ptr` leaf by leaf, each with a relaxed atomic load.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of one `Self` and aligned to its alignment,
    /// and every other access to it while the call runs must be atomic too (another `__load`
    /// or `__store`, or an atomic operation on one leaf).
    #[doc(hidden)]
    unsafe fn __load(ptr: *mut Self) -> Self;

    /// Writes `value` at `ptr` leaf by leaf, each with a relaxed atomic store.
    ///
    /// # Safety
    /// As for [`Value::__load`].
    #[doc(hidden)]
    unsafe fn __store(ptr: *mut Self, value: Self);
}

// SAFETY: the scalars are plain primitives (zero is `false`, 0 or +0.0); `Element` loads and
// stores them whole, atomically.
unsafe impl<T: Scalar> Value for T {
    const ELEM: ElemType = ElemType::Scalar(T::TYPE);

    #[inline(always)]
    unsafe fn __load(ptr: *mut Self) -> Self {
        // SAFETY: the caller upholds `Value::__load`'s contract, which is `Element`'s.
        unsafe { <T as Element>::load(ptr) }
    }

    #[inline(always)]
    unsafe fn __store(ptr: *mut Self, value: Self) {
        // SAFETY: as for `__load`.
        unsafe { <T as Element>::store(ptr, value) }
    }
}

// SAFETY: an array is its elements one after another, each a `Value` (zero valid, no
// pointers, one layout); it is loaded and stored element by element through their own
// `__load`/`__store`.
unsafe impl<T: Value, const N: usize> Value for [T; N] {
    const ELEM: ElemType = ElemType::Value(ValueType {
        name: ArrayName::<T, N>::NAME,
        size: std::mem::size_of::<[T; N]>(),
        align: std::mem::align_of::<[T; N]>(),
    });

    #[inline(always)]
    unsafe fn __load(ptr: *mut Self) -> Self {
        let first = ptr.cast::<T>();
        // SAFETY: element `i < N` of a valid array is valid and aligned (the caller's
        // contract for the whole array).
        std::array::from_fn(|i| unsafe { T::__load(first.add(i)) })
    }

    #[inline(always)]
    unsafe fn __store(ptr: *mut Self, value: Self) {
        let first = ptr.cast::<T>();
        for (i, v) in value.into_iter().enumerate() {
            // SAFETY: as for `__load`.
            unsafe { T::__store(first.add(i), v) }
        }
    }
}

/// A by-value launch argument with its type erased: the bytes both backends read.
pub(crate) trait ValueBytes {
    /// The value's type.
    fn elem(&self) -> ElemType;
    /// The value's first byte; at least one byte is readable there (as `MaybeUninit<u8>`:
    /// padding is uninitialised), followed by the rest of the value.
    fn as_ptr(&self) -> *const u8;
    /// A scalar's bits, zero-extended as [`Element::to_bits`] gives them; 0 for other values.
    fn scalar_bits(&self) -> u64;
}

/// A value kept for a launch; the extra byte gives even a zero-sized value an address with a
/// byte behind it, as a kernel parameter needs.
#[repr(C)]
pub(crate) struct StoredValue<T> {
    value: T,
    nonempty: u8,
}

impl<T: Value> StoredValue<T> {
    /// `value`, boxed for a launch.
    pub(crate) fn boxed(value: T) -> Box<dyn ValueBytes> {
        Box::new(StoredValue { value, nonempty: 0 })
    }
}

impl<T: Value> ValueBytes for StoredValue<T> {
    fn elem(&self) -> ElemType {
        T::ELEM
    }

    fn as_ptr(&self) -> *const u8 {
        // repr(C): the value is at offset 0, and `nonempty` follows it within the struct.
        (self as *const Self).cast::<u8>()
    }

    fn scalar_bits(&self) -> u64 {
        match T::ELEM {
            ElemType::Scalar(ty) => {
                let mut bytes = [0u8; 8];
                let size = ty.size().min(8);
                // SAFETY: a scalar has no padding, so its `size` bytes are initialised; `bytes`
                // has room for them.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.as_ptr(), bytes.as_mut_ptr(), size);
                }
                // The bytes of the value are its bits in memory order; place them as the low
                // bits of a u64 on either endianness.
                if cfg!(target_endian = "little") {
                    u64::from_le_bytes(bytes)
                } else {
                    u64::from_be_bytes(bytes) >> (64 - 8 * size as u32)
                }
            }
            ElemType::Value(_) => 0,
        }
    }
}

/// An all-zero `T`: what an out-of-bounds read returns after reporting the failure.
#[inline(always)]
pub(crate) fn zero<T: Value>() -> T {
    // SAFETY: all-zero bytes are a valid value of every `Value` (the trait's contract).
    unsafe { std::mem::zeroed() }
}

/// Longest array name spelled out; a longer one (deeply nested arrays of long struct names)
/// is named `[array]`, which launches still tell apart by size and alignment.
const NAME_CAP: usize = 96;

/// `[T; N]`'s name, built at compile time so that [`ValueType::name`] stays a `&'static str`.
struct ArrayName<T, const N: usize>(std::marker::PhantomData<T>);

impl<T: Value, const N: usize> ArrayName<T, N> {
    const SPELLED: ([u8; NAME_CAP], usize) = spell_array(T::ELEM.name(), N);
    const BYTES: &'static [u8; NAME_CAP] = &Self::SPELLED.0;
    const NAME: &'static str = match Self::SPELLED.1 {
        0 => "[array]",
        len => match std::str::from_utf8(Self::BYTES.split_at(len).0) {
            Ok(name) => name,
            Err(_) => "[array]",
        },
    };
}

/// `[elem; n]` in a fixed buffer, with its length; length 0 when it does not fit.
const fn spell_array(elem: &str, n: usize) -> ([u8; NAME_CAP], usize) {
    let mut out = [0u8; NAME_CAP];
    let mut digits = [0u8; 20];
    let mut count = 0;
    let mut rest = n;
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let elem = elem.as_bytes();
    let len = elem.len() + count + 4;
    if len > NAME_CAP {
        return (out, 0);
    }
    out[0] = b'[';
    let mut i = 0;
    while i < elem.len() {
        out[1 + i] = elem[i];
        i += 1;
    }
    out[1 + elem.len()] = b';';
    out[2 + elem.len()] = b' ';
    let mut d = 0;
    while d < count {
        out[3 + elem.len() + d] = digits[count - 1 - d];
        d += 1;
    }
    out[len - 1] = b']';
    (out, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_named_as_rust_spells_them() {
        assert_eq!(<[f32; 3]>::ELEM.name(), "[f32; 3]");
        assert_eq!(<[[u32; 33]; 1024]>::ELEM.to_string(), "[[u32; 33]; 1024]");
        assert_eq!(<[i64; 0]>::ELEM.name(), "[i64; 0]");
        assert_eq!(f32::ELEM, ElemType::Scalar(ScalarType::F32));
        let ElemType::Value(ty) = <[[f64; 2]; 5]>::ELEM else {
            panic!("an array is a value type");
        };
        assert_eq!((ty.size, ty.align), (80, 8));
        let long = spell_array(&"x".repeat(NAME_CAP), 2);
        assert_eq!(long.1, 0, "a name that does not fit is not truncated");
    }

    #[test]
    fn arrays_load_and_store_every_element() {
        let mut cell = [[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
        // SAFETY: a local, aligned and accessed by nothing else.
        let read = unsafe { Value::__load(&mut cell) };
        assert_eq!(read, cell);
        let written = [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]];
        // SAFETY: as above.
        unsafe { Value::__store(&mut cell, written) };
        assert_eq!(cell, written);
        assert_eq!(zero::<[u32; 4]>(), [0; 4]);
    }
}
