//! The number types' associated constants as C++ literals.

use super::cuda_type;
use crate::types::Scalar;

/// The C++ value of an associated constant: integers in full, floats in Rust's exact
/// round-trip spelling, and non-finite floats through their bits.
pub(super) fn constant(ty: Scalar, name: &str) -> String {
    match (ty, name) {
        (_, "BITS") => format!("{}u", ty.bits()),
        (Scalar::I8, "MAX") => format!("((signed char){})", i8::MAX),
        (Scalar::I8, "MIN") => format!("((signed char){})", i8::MIN),
        (Scalar::U8, "MAX") => format!("((unsigned char){})", u8::MAX),
        (Scalar::U8, "MIN") => "((unsigned char)0)".to_string(),
        (Scalar::I16, "MAX") => format!("((short){})", i16::MAX),
        (Scalar::I16, "MIN") => format!("((short){})", i16::MIN),
        (Scalar::U16, "MAX") => format!("((unsigned short){})", u16::MAX),
        (Scalar::U16, "MIN") => "((unsigned short)0)".to_string(),
        (Scalar::I32, "MAX") => i32::MAX.to_string(),
        (Scalar::I32, "MIN") => "(-2147483647 - 1)".to_string(),
        (Scalar::U32, "MAX") => format!("{}u", u32::MAX),
        (Scalar::U32, "MIN") => "0u".to_string(),
        (Scalar::I64 | Scalar::Isize, "MAX") => format!("{}ll", i64::MAX),
        (Scalar::I64 | Scalar::Isize, "MIN") => "(-9223372036854775807ll - 1ll)".to_string(),
        (Scalar::U64 | Scalar::Usize, "MAX") => format!("{}ull", u64::MAX),
        (Scalar::U64 | Scalar::Usize, "MIN") => "0ull".to_string(),
        (Scalar::F32, _) => {
            let value = f32_constant(name);
            if value.is_finite() {
                format!("{value:?}f")
            } else {
                format!("__int_as_float(0x{:08x})", value.to_bits())
            }
        }
        (Scalar::F16 | Scalar::Bf16, _) => {
            let bits = half_constant_bits(ty, name);
            format!("{}::from_bits(0x{bits:04x})", cuda_type(ty))
        }
        (Scalar::F64, _) => {
            let value = f64_constant(name);
            if value.is_finite() {
                format!("{value:?}")
            } else {
                format!("__longlong_as_double(0x{:016x}ll)", value.to_bits())
            }
        }
        _ => unreachable!("checked constant {ty:?}::{name}"),
    }
}

/// The bits of the `half` crate's constants (`f16::ONE`, `bf16::EPSILON`, ...).
fn half_constant_bits(ty: Scalar, name: &str) -> u16 {
    let f16 = ty == Scalar::F16;
    match name {
        "ZERO" => 0,
        "NEG_ZERO" => 0x8000,
        "ONE" if f16 => 0x3C00,
        "ONE" => 0x3F80,
        "NEG_ONE" if f16 => 0xBC00,
        "NEG_ONE" => 0xBF80,
        "MAX" if f16 => 0x7BFF,
        "MAX" => 0x7F7F,
        "MIN" if f16 => 0xFBFF,
        "MIN" => 0xFF7F,
        "MIN_POSITIVE" if f16 => 0x0400,
        "MIN_POSITIVE" => 0x0080,
        "EPSILON" if f16 => 0x1400,
        "EPSILON" => 0x3C00,
        "INFINITY" if f16 => 0x7C00,
        "INFINITY" => 0x7F80,
        "NEG_INFINITY" if f16 => 0xFC00,
        "NEG_INFINITY" => 0xFF80,
        "NAN" if f16 => 0x7E00,
        "NAN" => 0x7FC0,
        _ => unreachable!("checked constant {name}"),
    }
}

macro_rules! float_constant {
    ($func:ident, $t:ident) => {
        pub(super) fn $func(name: &str) -> $t {
            use std::$t::consts;
            match name {
                "MAX" => $t::MAX,
                "MIN" => $t::MIN,
                "MIN_POSITIVE" => $t::MIN_POSITIVE,
                "EPSILON" => $t::EPSILON,
                "INFINITY" => $t::INFINITY,
                "NEG_INFINITY" => $t::NEG_INFINITY,
                "NAN" => $t::NAN,
                "PI" => consts::PI,
                "TAU" => consts::TAU,
                "E" => consts::E,
                "SQRT_2" => consts::SQRT_2,
                "LN_2" => consts::LN_2,
                "LN_10" => consts::LN_10,
                "LOG2_E" => consts::LOG2_E,
                "LOG10_E" => consts::LOG10_E,
                "FRAC_1_SQRT_2" => consts::FRAC_1_SQRT_2,
                "FRAC_PI_2" => consts::FRAC_PI_2,
                "FRAC_PI_3" => consts::FRAC_PI_3,
                "FRAC_PI_4" => consts::FRAC_PI_4,
                "FRAC_PI_6" => consts::FRAC_PI_6,
                "FRAC_PI_8" => consts::FRAC_PI_8,
                "FRAC_1_PI" => consts::FRAC_1_PI,
                "FRAC_2_PI" => consts::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => consts::FRAC_2_SQRT_PI,
                "LOG2_10" => consts::LOG2_10,
                "LOG10_2" => consts::LOG10_2,
                _ => unreachable!("checked constant {name}"),
            }
        }
    };
}

float_constant!(f32_constant, f32);
float_constant!(f64_constant, f64);
