//! The number types' associated constants (`f32::MAX`, `u32::BITS`, `f16::ONE`) and the
//! range of integer literals.

use crate::types::Scalar;

/// The largest literal value `scalar` holds; one more for a negated signed literal (`-128`).
pub(super) fn int_max(scalar: Scalar, negated: bool) -> u128 {
    let max = match scalar {
        Scalar::I8 => i8::MAX as u128,
        Scalar::U8 => u8::MAX as u128,
        Scalar::I16 => i16::MAX as u128,
        Scalar::U16 => u16::MAX as u128,
        Scalar::I32 => i32::MAX as u128,
        Scalar::U32 => u32::MAX as u128,
        Scalar::I64 | Scalar::Isize => i64::MAX as u128,
        Scalar::U64 | Scalar::Usize => u64::MAX as u128,
        _ => u128::MAX,
    };
    if negated && scalar.is_signed_int() {
        max + 1
    } else {
        max
    }
}

/// The type of the associated constant `ty::name`, if the language knows it.
pub(super) fn constant_type(ty: Scalar, name: &str) -> Option<Scalar> {
    let known = if ty.is_half() {
        HALF_CONSTANTS.contains(&name)
    } else if ty.is_int() {
        matches!(name, "MAX" | "MIN" | "BITS")
    } else if ty.is_float() {
        FLOAT_CONSTANTS.contains(&name)
    } else {
        false
    };
    match (known, name) {
        (false, _) => None,
        (true, "BITS") => Some(Scalar::U32),
        (true, _) => Some(ty),
    }
}

/// The `half` crate's constants on `f16` and `bf16`.
const HALF_CONSTANTS: &[&str] = &[
    "ZERO",
    "NEG_ZERO",
    "ONE",
    "NEG_ONE",
    "MAX",
    "MIN",
    "MIN_POSITIVE",
    "EPSILON",
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
];

/// The float constants kernels may name, as in `f32::` and `f32::consts::`.
pub const FLOAT_CONSTANTS: &[&str] = &[
    "MAX",
    "MIN",
    "MIN_POSITIVE",
    "EPSILON",
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
    "PI",
    "TAU",
    "E",
    "SQRT_2",
    "LN_2",
    "LN_10",
    "LOG2_E",
    "LOG10_E",
    "FRAC_1_SQRT_2",
    "FRAC_PI_2",
    "FRAC_PI_3",
    "FRAC_PI_4",
    "FRAC_PI_6",
    "FRAC_PI_8",
    "FRAC_1_PI",
    "FRAC_2_PI",
    "FRAC_2_SQRT_PI",
    "LOG2_10",
    "LOG10_2",
];

pub(super) fn constant_names(ty: Scalar) -> String {
    if ty.is_half() {
        HALF_CONSTANTS.join(", ")
    } else if ty.is_float() {
        FLOAT_CONSTANTS.join(", ")
    } else {
        "MAX, MIN, BITS".to_string()
    }
}
