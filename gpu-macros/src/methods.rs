//! The methods on numbers that kernels may call, with their signatures and CUDA spellings.
//!
//! One table serves the type checker (what a method takes and returns) and the CUDA emitter
//! (what it becomes), so the two cannot disagree.

use crate::types::Scalar;

/// Which receivers a method accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    Float,
    /// `f32` only: CUDA's fast approximate intrinsics.
    F32,
    /// `f16` and `bf16`, with the `half` crate's methods.
    Half,
    Int,
    SignedInt,
    /// A concrete integer type (not a type parameter): Rust's methods of every integer.
    KnownInt,
    /// A concrete unsigned integer type.
    KnownUnsigned,
    /// `u8`: a byte's ASCII tests.
    Byte,
    Number,
    /// A type parameter (`T: Number`), whatever its bound.
    Generic,
}

/// The type of each extra argument.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ArgTy {
    /// Same type as the receiver.
    Same,
    I32,
    U32,
}

/// The result type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RetTy {
    Same,
    Bool,
    U32,
    F32,
    F64,
    /// The unsigned integer of the same width: `f32::to_bits` gives a `u32`.
    Bits,
    U64,
    /// The unsigned integer of the receiver's width: `i32::abs_diff` gives a `u32`.
    Unsigned,
}

/// How the call is written in CUDA C++.
#[derive(Clone, Copy)]
pub enum Cuda {
    /// A libdevice function, `f32` name then `f64` name: `sqrtf(x)` / `sqrt(x)`.
    Func(&'static str, &'static str),
    /// A helper from the generated prelude, overloaded on the receiver type.
    Helper(&'static str),
    /// A function defined inside another helper's block: (function, block).
    HelperIn(&'static str, &'static str),
    /// An integer intrinsic: 32-bit name then 64-bit name.
    IntFunc(&'static str, &'static str),
}

/// One method of the table.
pub struct Method {
    pub name: &'static str,
    pub receiver: Receiver,
    pub args: &'static [ArgTy],
    pub ret: RetTy,
    pub cuda: Cuda,
}

const fn float(
    name: &'static str,
    args: &'static [ArgTy],
    f32_name: &'static str,
    f64_name: &'static str,
) -> Method {
    Method {
        name,
        receiver: Receiver::Float,
        args,
        ret: RetTy::Same,
        cuda: Cuda::Func(f32_name, f64_name),
    }
}

const NONE: &[ArgTy] = &[];
const ONE: &[ArgTy] = &[ArgTy::Same];
const TWO: &[ArgTy] = &[ArgTy::Same, ArgTy::Same];

const fn fast(name: &'static str, args: &'static [ArgTy], cuda: &'static str) -> Method {
    Method {
        name,
        receiver: Receiver::F32,
        args,
        ret: RetTy::Same,
        cuda: Cuda::Func(cuda, cuda),
    }
}

const fn half(name: &'static str, ret: RetTy, cuda: Cuda) -> Method {
    Method {
        name,
        receiver: Receiver::Half,
        args: NONE,
        ret,
        cuda,
    }
}

/// Every method kernels may call on numbers.
pub const METHODS: &[Method] = &[
    // First, so `T: Float` finds it before the concrete floats' entry: a type parameter's bits
    // zero-extended to `u64` whatever its width, undone by `T::from_bits`, so generic code can
    // pack a value beside other bits in one word.
    Method {
        name: "to_bits",
        receiver: Receiver::Generic,
        args: NONE,
        ret: RetTy::U64,
        cuda: Cuda::Helper("rs_bits64"),
    },
    Method {
        name: "to_bits",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bits,
        cuda: Cuda::Helper("rs_bits"),
    },
    half("to_f32", RetTy::F32, Cuda::HelperIn("rs_to_f32", "rs_half")),
    half("to_f64", RetTy::F64, Cuda::HelperIn("rs_to_f64", "rs_half")),
    // The half overloads live with the types; these blocks add the float ones beside them.
    half("is_nan", RetTy::Bool, Cuda::Helper("rs_is_nan")),
    half("is_infinite", RetTy::Bool, Cuda::Helper("rs_is_infinite")),
    half("is_finite", RetTy::Bool, Cuda::Helper("rs_is_finite")),
    Method {
        name: "min",
        receiver: Receiver::Half,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_min"),
    },
    Method {
        name: "max",
        receiver: Receiver::Half,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_max"),
    },
    // CUDA's fast approximations (the hardware's special-function unit), chosen explicitly.
    fast("fast_exp", NONE, "__expf"),
    fast("fast_exp10", NONE, "__exp10f"),
    fast("fast_ln", NONE, "__logf"),
    fast("fast_log2", NONE, "__log2f"),
    fast("fast_log10", NONE, "__log10f"),
    fast("fast_sin", NONE, "__sinf"),
    fast("fast_cos", NONE, "__cosf"),
    fast("fast_tan", NONE, "__tanf"),
    fast("fast_powf", ONE, "__powf"),
    fast("fast_div", ONE, "__fdividef"),
    Method {
        name: "fast_tanh",
        receiver: Receiver::F32,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_fast_tanh"),
    },
    float("sqrt", NONE, "sqrtf", "sqrt"),
    float("cbrt", NONE, "cbrtf", "cbrt"),
    float("exp", NONE, "expf", "exp"),
    float("exp2", NONE, "exp2f", "exp2"),
    float("exp_m1", NONE, "expm1f", "expm1"),
    float("ln", NONE, "logf", "log"),
    float("log2", NONE, "log2f", "log2"),
    float("log10", NONE, "log10f", "log10"),
    float("ln_1p", NONE, "log1pf", "log1p"),
    float("sin", NONE, "sinf", "sin"),
    float("cos", NONE, "cosf", "cos"),
    float("tan", NONE, "tanf", "tan"),
    float("asin", NONE, "asinf", "asin"),
    float("acos", NONE, "acosf", "acos"),
    float("atan", NONE, "atanf", "atan"),
    float("atan2", ONE, "atan2f", "atan2"),
    float("sinh", NONE, "sinhf", "sinh"),
    float("cosh", NONE, "coshf", "cosh"),
    float("tanh", NONE, "tanhf", "tanh"),
    float("asinh", NONE, "asinhf", "asinh"),
    float("acosh", NONE, "acoshf", "acosh"),
    float("atanh", NONE, "atanhf", "atanh"),
    float("hypot", ONE, "hypotf", "hypot"),
    // `self.ln() / base.ln()`, as Rust computes it.
    Method {
        name: "log",
        receiver: Receiver::Float,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_log", "rs_float_euclid"),
    },
    Method {
        name: "rem_euclid",
        receiver: Receiver::Float,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_rem_euclid_float", "rs_float_euclid"),
    },
    Method {
        name: "div_euclid",
        receiver: Receiver::Float,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_div_euclid_float", "rs_float_euclid"),
    },
    float("powf", ONE, "powf", "pow"),
    float("floor", NONE, "floorf", "floor"),
    float("ceil", NONE, "ceilf", "ceil"),
    float("round", NONE, "roundf", "round"),
    float("trunc", NONE, "truncf", "trunc"),
    float("mul_add", TWO, "fmaf", "fma"),
    float("copysign", ONE, "copysignf", "copysign"),
    // CUDA's reciprocal square root; not in std, but what GPU code reaches for.
    float("rsqrt", NONE, "rsqrtf", "rsqrt"),
    Method {
        name: "powi",
        receiver: Receiver::Float,
        args: &[ArgTy::I32],
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_powi"),
    },
    Method {
        name: "fract",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_fract"),
    },
    Method {
        name: "recip",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_recip"),
    },
    Method {
        name: "signum",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_signum"),
    },
    Method {
        name: "is_nan",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bool,
        cuda: Cuda::Helper("rs_is_nan"),
    },
    Method {
        name: "is_infinite",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bool,
        cuda: Cuda::Helper("rs_is_infinite"),
    },
    Method {
        name: "is_finite",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bool,
        cuda: Cuda::Helper("rs_is_finite"),
    },
    Method {
        name: "is_sign_negative",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bool,
        cuda: Cuda::HelperIn("rs_is_sign_negative", "rs_is_sign"),
    },
    Method {
        name: "is_sign_positive",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Bool,
        cuda: Cuda::HelperIn("rs_is_sign_positive", "rs_is_sign"),
    },
    Method {
        name: "to_degrees",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_to_degrees"),
    },
    Method {
        name: "to_radians",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_to_radians"),
    },
    // f32::min/max ignore a NaN operand, exactly as fminf/fmaxf do.
    Method {
        name: "min",
        receiver: Receiver::Float,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Func("fminf", "fmin"),
    },
    Method {
        name: "max",
        receiver: Receiver::Float,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Func("fmaxf", "fmax"),
    },
    Method {
        name: "min",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_min"),
    },
    Method {
        name: "max",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_max"),
    },
    // Last, so concrete types and the Float/Integer bounds find their own above: this serves
    // `T: Number` (its `float`/`double` overloads of `rs_min`/`rs_max` ignore NaN as Rust does).
    Method {
        name: "min",
        receiver: Receiver::Number,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_min"),
    },
    Method {
        name: "max",
        receiver: Receiver::Number,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_max"),
    },
    Method {
        name: "clamp",
        receiver: Receiver::Number,
        args: TWO,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_clamp"),
    },
    Method {
        name: "abs",
        receiver: Receiver::Float,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Func("fabsf", "fabs"),
    },
    Method {
        name: "abs",
        receiver: Receiver::SignedInt,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_wrapping_abs"),
    },
    Method {
        name: "pow",
        receiver: Receiver::Int,
        args: &[ArgTy::U32],
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_wrapping_pow"),
    },
    Method {
        name: "wrapping_add",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_wrapping_add"),
    },
    Method {
        name: "wrapping_sub",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_wrapping_sub"),
    },
    Method {
        name: "wrapping_mul",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_wrapping_mul"),
    },
    Method {
        name: "saturating_add",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::Helper("rs_saturating_add"),
    },
    Method {
        name: "saturating_sub",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_saturating_sub", "rs_saturating_add"),
    },
    Method {
        name: "saturating_mul",
        receiver: Receiver::Int,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_saturating_mul", "rs_saturating_add"),
    },
    Method {
        name: "count_ones",
        receiver: Receiver::Int,
        args: NONE,
        ret: RetTy::U32,
        cuda: Cuda::IntFunc("__popc", "__popcll"),
    },
    Method {
        name: "leading_zeros",
        receiver: Receiver::Int,
        args: NONE,
        ret: RetTy::U32,
        cuda: Cuda::IntFunc("__clz", "__clzll"),
    },
    Method {
        name: "trailing_zeros",
        receiver: Receiver::Int,
        args: NONE,
        ret: RetTy::U32,
        cuda: Cuda::Helper("rs_trailing_zeros"),
    },
    bits("rem_euclid", Receiver::KnownInt, ONE, RetTy::Same),
    bits("div_euclid", Receiver::KnownInt, ONE, RetTy::Same),
    bits("div_ceil", Receiver::KnownUnsigned, ONE, RetTy::Same),
    bits("unsigned_abs", Receiver::SignedInt, NONE, RetTy::Unsigned),
    bits("count_zeros", Receiver::KnownInt, NONE, RetTy::U32),
    bits("leading_ones", Receiver::KnownInt, NONE, RetTy::U32),
    bits("trailing_ones", Receiver::KnownInt, NONE, RetTy::U32),
    bits("abs_diff", Receiver::KnownInt, ONE, RetTy::Unsigned),
    bits(
        "rotate_left",
        Receiver::KnownInt,
        &[ArgTy::U32],
        RetTy::Same,
    ),
    bits(
        "rotate_right",
        Receiver::KnownInt,
        &[ArgTy::U32],
        RetTy::Same,
    ),
    bits(
        "wrapping_shl",
        Receiver::KnownInt,
        &[ArgTy::U32],
        RetTy::Same,
    ),
    bits(
        "wrapping_shr",
        Receiver::KnownInt,
        &[ArgTy::U32],
        RetTy::Same,
    ),
    bits("wrapping_neg", Receiver::KnownInt, NONE, RetTy::Same),
    bits("reverse_bits", Receiver::KnownInt, NONE, RetTy::Same),
    bits("swap_bytes", Receiver::KnownInt, NONE, RetTy::Same),
    bits("signum", Receiver::SignedInt, NONE, RetTy::Same),
    bits(
        "is_power_of_two",
        Receiver::KnownUnsigned,
        NONE,
        RetTy::Bool,
    ),
    bits(
        "next_power_of_two",
        Receiver::KnownUnsigned,
        NONE,
        RetTy::Same,
    ),
    Method {
        name: "ilog2",
        receiver: Receiver::KnownInt,
        args: NONE,
        ret: RetTy::U32,
        cuda: Cuda::HelperIn("rs_ilog2", "rs_int_roots"),
    },
    Method {
        name: "ilog10",
        receiver: Receiver::KnownInt,
        args: NONE,
        ret: RetTy::U32,
        cuda: Cuda::HelperIn("rs_ilog10", "rs_int_roots"),
    },
    Method {
        name: "isqrt",
        receiver: Receiver::KnownUnsigned,
        args: NONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_isqrt", "rs_int_roots"),
    },
    ascii("is_ascii_digit", RetTy::Bool),
    ascii("is_ascii_alphabetic", RetTy::Bool),
    ascii("is_ascii_alphanumeric", RetTy::Bool),
    ascii("is_ascii_whitespace", RetTy::Bool),
    ascii("is_ascii_uppercase", RetTy::Bool),
    ascii("is_ascii_lowercase", RetTy::Bool),
    ascii("to_ascii_uppercase", RetTy::Same),
    ascii("to_ascii_lowercase", RetTy::Same),
    Method {
        name: "is_multiple_of",
        receiver: Receiver::KnownUnsigned,
        args: ONE,
        ret: RetTy::Bool,
        cuda: Cuda::HelperIn("rs_is_multiple_of", "rs_int_multiples"),
    },
    Method {
        name: "next_multiple_of",
        receiver: Receiver::KnownUnsigned,
        args: ONE,
        ret: RetTy::Same,
        cuda: Cuda::HelperIn("rs_next_multiple_of", "rs_int_multiples"),
    },
];

/// A byte's ASCII method, computed by the `rs_ascii` helper's function `rs_<name>`.
const fn ascii(name: &'static str, ret: RetTy) -> Method {
    Method {
        name,
        receiver: Receiver::Byte,
        args: NONE,
        ret,
        cuda: Cuda::HelperIn(
            match name.as_bytes() {
                b"is_ascii_digit" => "rs_is_ascii_digit",
                b"is_ascii_alphabetic" => "rs_is_ascii_alphabetic",
                b"is_ascii_alphanumeric" => "rs_is_ascii_alphanumeric",
                b"is_ascii_whitespace" => "rs_is_ascii_whitespace",
                b"is_ascii_uppercase" => "rs_is_ascii_uppercase",
                b"is_ascii_lowercase" => "rs_is_ascii_lowercase",
                b"to_ascii_uppercase" => "rs_to_ascii_uppercase",
                _ => "rs_to_ascii_lowercase",
            },
            "rs_ascii",
        ),
    }
}

/// An integer method computed by the `rs_int_bits` helper's function `rs_<name>`, templated
/// on the receiver's C++ type so every width takes the same path.
const fn bits(
    name: &'static str,
    receiver: Receiver,
    args: &'static [ArgTy],
    ret: RetTy,
) -> Method {
    Method {
        name,
        receiver,
        args,
        ret,
        cuda: Cuda::HelperIn(
            match name.as_bytes() {
                b"rem_euclid" => "rs_rem_euclid",
                b"div_euclid" => "rs_div_euclid",
                b"div_ceil" => "rs_div_ceil",
                b"unsigned_abs" => "rs_unsigned_abs",
                b"count_zeros" => "rs_count_zeros",
                b"leading_ones" => "rs_leading_ones",
                b"trailing_ones" => "rs_trailing_ones",
                b"abs_diff" => "rs_abs_diff",
                b"rotate_left" => "rs_rotate_left",
                b"rotate_right" => "rs_rotate_right",
                b"wrapping_shl" => "rs_wrapping_shl",
                b"wrapping_shr" => "rs_wrapping_shr",
                b"wrapping_neg" => "rs_wrapping_neg_bits",
                b"reverse_bits" => "rs_reverse_bits",
                b"swap_bytes" => "rs_swap_bytes",
                b"signum" => "rs_int_signum",
                b"is_power_of_two" => "rs_is_power_of_two",
                _ => "rs_next_power_of_two",
            },
            "rs_int_bits",
        ),
    }
}

impl Method {
    /// Whether the CUDA call takes the call's line last, for a checked-mode report (a
    /// remainder by zero).
    pub fn takes_line(&self) -> bool {
        matches!(
            self.name,
            "rem_euclid" | "div_euclid" | "div_ceil" | "next_multiple_of" | "ilog2" | "ilog10"
        ) && self.receiver != Receiver::Float
    }
}

impl Receiver {
    pub fn accepts(self, scalar: Scalar) -> bool {
        match self {
            Receiver::Float => scalar.is_float(),
            Receiver::F32 => scalar == Scalar::F32,
            Receiver::Half => scalar.is_half(),
            Receiver::Int => scalar.is_int(),
            Receiver::SignedInt => scalar.is_signed_int(),
            Receiver::KnownInt => scalar.is_int() && scalar.bound().is_none(),
            Receiver::KnownUnsigned => {
                scalar.is_int() && scalar.bound().is_none() && !scalar.is_signed_int()
            }
            Receiver::Byte => scalar == Scalar::U8,
            Receiver::Number => scalar.is_number(),
            Receiver::Generic => matches!(scalar, Scalar::Generic(_)),
        }
    }
}

/// The method `name` callable on `receiver`.
pub fn lookup(name: &str, receiver: Scalar) -> Option<&'static Method> {
    METHODS
        .iter()
        .find(|m| m.name == name && m.receiver.accepts(receiver))
}

/// The names of the methods available on `receiver`, for messages.
pub fn names_for(receiver: Scalar) -> String {
    let mut names: Vec<&str> = Vec::new();
    for method in METHODS.iter().filter(|m| m.receiver.accepts(receiver)) {
        // A name can have entries for several receivers (`min` for floats and for numbers).
        if !names.contains(&method.name) {
            names.push(method.name);
        }
    }
    names.join(", ")
}
