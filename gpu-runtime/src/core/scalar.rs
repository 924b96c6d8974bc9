//! The element and parameter types a kernel can use, and their CUDA spellings.

use std::fmt;

use half::{bf16, f16};

use crate::core::element::Element;

// Kernels take `usize` as `unsigned long long`; CUDA hosts are 64-bit, and a 32-bit host would
// silently disagree with the device about every usize buffer.
const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "gpu-runtime needs a 64-bit host: kernels pass usize as unsigned long long"
);

/// The scalar types of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `bool` (C++ `bool`, one byte).
    Bool,
    /// `i8` (`signed char`).
    I8,
    /// `u8` (`unsigned char`).
    U8,
    /// `i16` (`short`).
    I16,
    /// `u16` (`unsigned short`).
    U16,
    /// `i32` (`int`).
    I32,
    /// `u32` (`unsigned int`).
    U32,
    /// `i64` (`long long`).
    I64,
    /// `u64` (`unsigned long long`).
    U64,
    /// `usize` (`unsigned long long`).
    Usize,
    /// `isize` (`long long`).
    Isize,
    /// `f32` (`float`).
    F32,
    /// `f64` (`double`).
    F64,
    /// `half::f16` (`__half`).
    F16,
    /// `half::bf16` (`__nv_bfloat16`).
    Bf16,
}

impl ScalarType {
    /// Every scalar type, in declaration order.
    pub const ALL: [ScalarType; 15] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::Usize,
        ScalarType::Isize,
        ScalarType::F32,
        ScalarType::F64,
        ScalarType::F16,
        ScalarType::Bf16,
    ];

    /// Size in bytes, on the host and the device alike.
    pub const fn size(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::Bf16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64
            | ScalarType::U64
            | ScalarType::Usize
            | ScalarType::Isize
            | ScalarType::F64 => 8,
        }
    }

    /// The Rust spelling, e.g. `"f32"` or `"f16"`.
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::Usize => "usize",
            ScalarType::Isize => "isize",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::F16 => "f16",
            ScalarType::Bf16 => "bf16",
        }
    }

    /// The CUDA C++ spelling used in kernel signatures.
    pub const fn cuda_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "signed char",
            ScalarType::U8 => "unsigned char",
            ScalarType::I16 => "short",
            ScalarType::U16 => "unsigned short",
            ScalarType::I32 => "int",
            ScalarType::U32 => "unsigned int",
            ScalarType::I64 | ScalarType::Isize => "long long",
            ScalarType::U64 | ScalarType::Usize => "unsigned long long",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
            ScalarType::F16 => "__half",
            ScalarType::Bf16 => "__nv_bfloat16",
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Scalar types a kernel can take or store. Sealed.
///
/// A kernel must store only `0` or `1` in `bool` elements (generated kernels always do), since
/// any other byte is not a valid Rust `bool` once copied back.
pub trait Scalar: Copy + Send + Sync + 'static + sealed::Sealed + Element {
    /// The runtime tag of this type.
    const TYPE: ScalarType;

    /// Erases the type for launch-argument storage; only the runtime calls this.
    #[doc(hidden)]
    fn __into_value(self) -> ScalarValue;
}

/// A launch-time scalar with its type erased; stored until the launch is submitted.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    F16(f16),
    Bf16(bf16),
}

macro_rules! impl_scalar {
    ($($ty:ty => $tag:ident, $variant:ident $(as $cast:ty)?;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl Scalar for $ty {
            const TYPE: ScalarType = ScalarType::$tag;
            fn __into_value(self) -> ScalarValue {
                ScalarValue::$variant(self $(as $cast)?)
            }
        }
    )*};
}

impl_scalar! {
    bool => Bool, Bool;
    i8 => I8, I8;
    u8 => U8, U8;
    i16 => I16, I16;
    u16 => U16, U16;
    i32 => I32, I32;
    u32 => U32, U32;
    i64 => I64, I64;
    u64 => U64, U64;
    usize => Usize, U64 as u64;
    isize => Isize, I64 as i64;
    f32 => F32, F32;
    f64 => F64, F64;
    f16 => F16, F16;
    bf16 => Bf16, Bf16;
}

/// Numeric scalar types (every [`Scalar`] but `bool`): the bound generated launchers put on a
/// type parameter used in arithmetic. Sealed through [`Scalar`].
pub trait Number: Scalar {}

/// Floating-point scalar types: `f32`, `f64`, `f16`, `bf16`. Sealed through [`Scalar`].
pub trait Float: Number {}

/// Integer scalar types: `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64`, `u64`, `usize`,
/// `isize`. Sealed through [`Scalar`].
pub trait Integer: Number {}

macro_rules! impl_markers {
    ($trait:ident: $($ty:ty),*) => {$(impl $trait for $ty {})*};
}

impl_markers!(Number: f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64, usize, isize);
impl_markers!(Float: f32, f64, f16, bf16);
impl_markers!(Integer: i8, u8, i16, u16, i32, u32, i64, u64, usize, isize);

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Scalar>() {
        assert_eq!(T::TYPE.size(), std::mem::size_of::<T>(), "{}", T::TYPE);
    }

    #[test]
    fn sizes_match_rust_layout() {
        check::<bool>();
        check::<i8>();
        check::<u8>();
        check::<i16>();
        check::<u16>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
        check::<usize>();
        check::<isize>();
        check::<f32>();
        check::<f64>();
        check::<f16>();
        check::<bf16>();
    }

    #[test]
    fn marker_traits_partition_the_numbers() {
        fn float<T: Float>() -> ScalarType {
            T::TYPE
        }
        fn integer<T: Integer>() -> ScalarType {
            T::TYPE
        }
        let floats = [
            float::<f32>(),
            float::<f64>(),
            float::<f16>(),
            float::<bf16>(),
        ];
        let ints = [
            integer::<i8>(),
            integer::<u8>(),
            integer::<i16>(),
            integer::<u16>(),
            integer::<i32>(),
            integer::<u32>(),
            integer::<i64>(),
            integer::<u64>(),
            integer::<usize>(),
            integer::<isize>(),
        ];
        assert_eq!(floats.len() + ints.len() + 1, ScalarType::ALL.len());
    }

    #[test]
    fn names() {
        assert_eq!(ScalarType::F32.to_string(), "f32");
        assert_eq!(ScalarType::Usize.cuda_name(), "unsigned long long");
        assert_eq!(ScalarType::Isize.cuda_name(), "long long");
        assert_eq!(ScalarType::ALL.len(), 15);
        assert_eq!(ScalarType::I8.cuda_name(), "signed char");
        assert_eq!(7usize.__into_value(), ScalarValue::U64(7));
        assert_eq!((-7isize).__into_value(), ScalarValue::I64(-7));
    }
}
