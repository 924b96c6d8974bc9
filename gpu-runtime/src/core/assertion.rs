//! `assert!` and `panic!` in kernels: the values a failing GPU thread records, and the message
//! table through which the host formats them with Rust's own formatting.
//!
//! A kernel's format strings are known when the macro runs, so a failing GPU thread records
//! only the assertion's number and the bits and type of each argument (`core/checks.rs` has
//! the slot's layout). The macro generates, beside the kernel, an [`AssertionMessages`]
//! function that `format!`s assertion `id` from those values; the runtime calls it when it
//! reads the slot. The CPU twin formats the message itself, with the same `format!`.

use std::fmt;

use half::{bf16, f16};

use crate::core::scalar::ScalarValue;

/// The most arguments one assertion records (`assert_eq!`'s two operands included).
pub const MAX_ASSERT_ARGS: usize = 8;

/// Formats the message of a kernel's assertion `id` from the values its failing thread
/// recorded: `Some((file, message))`, or `None` for an id or argument list it does not know.
pub type AssertionMessages = fn(id: u32, args: &[PanicArg]) -> Option<(&'static str, String)>;

/// One recorded argument of a failed assertion; formats exactly as the value it holds, with
/// every formatting trait the kernel's format string may ask for.
#[derive(Clone, Copy, PartialEq)]
pub struct PanicArg(pub ScalarValue);

impl PanicArg {
    /// Decodes an argument recorded by a GPU thread: `code` is the slot's 4-bit type code
    /// (1 `bool`, 2 `i32`, 3 `u32`, 4 `i64`, 5 `u64`, 6 `usize`, 7 `f32`, 8 `f64`, 9 `f16`,
    /// 10 `bf16`), `bits` the value's bits, zero- or sign-extended to 64.
    pub(crate) fn decode(code: u32, bits: u64) -> Option<PanicArg> {
        // The truncating casts take back the low bits the device widened.
        let value = match code {
            1 => ScalarValue::Bool(bits != 0),
            2 => ScalarValue::I32(bits as u32 as i32),
            3 => ScalarValue::U32(bits as u32),
            4 => ScalarValue::I64(bits as i64),
            5 | 6 => ScalarValue::U64(bits),
            7 => ScalarValue::F32(f32::from_bits(bits as u32)),
            8 => ScalarValue::F64(f64::from_bits(bits)),
            9 => ScalarValue::F16(f16::from_bits(bits as u16)),
            10 => ScalarValue::Bf16(bf16::from_bits(bits as u16)),
            11 => ScalarValue::I8(bits as u8 as i8),
            12 => ScalarValue::U8(bits as u8),
            13 => ScalarValue::I16(bits as u16 as i16),
            14 => ScalarValue::U16(bits as u16),
            _ => return None,
        };
        Some(PanicArg(value))
    }
}

/// Forwards formatting trait `$trait` to the held value: integers use it, `bool` uses
/// `$bool_trait` and floats `$float_trait`, for the traits those types lack (`{:x}` of a float,
/// `{:e}` of a `bool`), which the macro never asks for.
macro_rules! forward {
    ($trait:ident, bool: $bool_trait:ident, float: $float_trait:ident) => {
        impl fmt::$trait for PanicArg {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    ScalarValue::Bool(v) => fmt::$bool_trait::fmt(&v, f),
                    ScalarValue::I8(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::U8(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::I16(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::U16(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::I32(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::U32(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::I64(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::U64(v) => fmt::$trait::fmt(&v, f),
                    ScalarValue::F32(v) => fmt::$float_trait::fmt(&v, f),
                    ScalarValue::F64(v) => fmt::$float_trait::fmt(&v, f),
                    ScalarValue::F16(v) => fmt::$float_trait::fmt(&v, f),
                    ScalarValue::Bf16(v) => fmt::$float_trait::fmt(&v, f),
                }
            }
        }
    };
}

forward!(LowerHex, bool: Display, float: Display);
forward!(UpperHex, bool: Display, float: Display);
forward!(Octal, bool: Display, float: Display);
forward!(Binary, bool: Display, float: Display);
// `Debug` is the value's own, so `assert_eq!`'s operands print as Rust prints them.
forward!(Display, bool: Display, float: Display);
forward!(Debug, bool: Debug, float: Debug);
forward!(LowerExp, bool: Display, float: LowerExp);
forward!(UpperExp, bool: Display, float: UpperExp);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_values_format_as_rust_values() {
        let arg = |code, bits| PanicArg::decode(code, bits).unwrap();
        assert_eq!(format!("{}", arg(2, (-7i32) as u32 as u64)), "-7");
        assert_eq!(format!("{:x}", arg(3, 255)), "ff");
        assert_eq!(format!("{:>5}", arg(4, (-3i64) as u64)), "   -3");
        assert_eq!(
            format!("{:.3}", arg(7, 1.23456f32.to_bits() as u64)),
            "1.235"
        );
        assert_eq!(format!("{:?}", arg(8, 2.0f64.to_bits())), "2.0");
        assert_eq!(format!("{:e}", arg(8, 1234.5f64.to_bits())), "1.2345e3");
        assert_eq!(format!("{}", arg(1, 1)), "true");
        assert_eq!(
            format!("{}", arg(9, f16::from_f32(0.5).to_bits() as u64)),
            "0.5"
        );
        assert_eq!(format!("{}", arg(6, 113)), "113");
        assert!(PanicArg::decode(0, 0).is_none());
        assert!(PanicArg::decode(15, 0).is_none());
    }
}
