//! The type vocabulary of the kernel language: scalars, generic parameters' bounds, lengths
//! and the types of values.
//!
//! A leaf that imports nothing of this crate: the IR ([`crate::ir`]) names intrinsics, and the
//! intrinsics' signatures ([`crate::intrinsics`]) name types, so the types live here and the
//! two form no cycle.

/// A scalar type of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I32,
    U32,
    I64,
    U64,
    Usize,
    F32,
    F64,
    /// `half::f16`.
    F16,
    /// `half::bf16`.
    Bf16,
    /// A generic kernel's type parameter.
    Generic(Generic),
}

/// A type parameter of a generic kernel: `T: Float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Generic {
    /// Its position among the kernel's generic parameters (types and consts together).
    pub index: u8,
    pub bound: Bound,
    /// Its name, which is also its C++ template parameter's name.
    pub name: &'static str,
}

/// What a type parameter promises, as the runtime's marker traits of the same names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    Float,
    Integer,
    Number,
}

impl Bound {
    pub fn rust_name(self) -> &'static str {
        match self {
            Bound::Float => "Float",
            Bound::Integer => "Integer",
            Bound::Number => "Number",
        }
    }
}

/// A generic argument of a device function call: a type, or a const parameter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericArg {
    Type(Scalar),
    Const(Len),
    /// A closure, whose type only the compilers downstream can name.
    Closure,
}

/// A device function's closure parameter: `F: Fn(A, B) -> R`, the types the function's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClosureBound {
    /// Its position among the function's generic parameters.
    pub index: u8,
    pub name: &'static str,
    pub params: Vec<Scalar>,
    /// `None` for `Fn(A)` without a result.
    pub ret: Option<Scalar>,
}

/// Where a closure's type comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClosureTy {
    /// A device function's parameter `op: F`: the generic parameter at this index.
    Bound(u8),
    /// A closure written in the function: its expression's index.
    Expr(u32),
}

/// The length of an array or shared memory: a number, or a kernel's const parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Len {
    Known(u64),
    Param(&'static str),
}

impl Len {
    /// The length as a C++ `unsigned long long` expression.
    pub fn cuda(self) -> String {
        match self {
            Len::Known(n) => format!("{n}ull"),
            Len::Param(name) => name.to_string(),
        }
    }

    /// The length as written in Rust, for messages.
    pub fn describe(self) -> String {
        match self {
            Len::Known(n) => n.to_string(),
            Len::Param(name) => name.to_string(),
        }
    }
}

impl Scalar {
    /// The size in bytes; `None` for a generic parameter.
    pub fn size_bytes(self) -> Option<u32> {
        match self {
            Scalar::Bool => Some(1),
            Scalar::F16 | Scalar::Bf16 => Some(2),
            Scalar::I32 | Scalar::U32 | Scalar::F32 => Some(4),
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => Some(8),
            Scalar::Generic(_) => None,
        }
    }

    /// Every scalar, in the order messages list them.
    pub const ALL: [Scalar; 10] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::Bf16,
    ];

    /// The type's name as written in Rust.
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "f16",
            Scalar::Bf16 => "bf16",
            Scalar::Generic(generic) => generic.name,
        }
    }

    /// Looks a Rust type name up.
    pub fn from_rust_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.rust_name() == name)
    }

    /// The variant name of `gpu_runtime::ScalarType` for this type.
    pub fn runtime_variant(self) -> &'static str {
        match self {
            Scalar::Bool => "Bool",
            Scalar::I32 => "I32",
            Scalar::U32 => "U32",
            Scalar::I64 => "I64",
            Scalar::U64 => "U64",
            Scalar::Usize => "Usize",
            Scalar::F32 => "F32",
            Scalar::F64 => "F64",
            Scalar::F16 => "F16",
            Scalar::Bf16 => "Bf16",
            Scalar::Generic(_) => unreachable!("generic parameters have no runtime type"),
        }
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::Usize
        ) || self.bound() == Some(Bound::Integer)
    }

    /// A signed integer type known here; a generic one's signedness is known only in C++.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64) || self.bound() == Some(Bound::Float)
    }

    /// A number type (not `bool`).
    pub fn is_number(self) -> bool {
        self != Scalar::Bool
    }

    /// `f16` or `bf16`: floats that, as in the `half` crate, convert only explicitly.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::Bf16)
    }

    /// The bound of a generic parameter.
    pub fn bound(self) -> Option<Bound> {
        match self {
            Scalar::Generic(generic) => Some(generic.bound),
            _ => None,
        }
    }

    /// Width in bits of a concrete type.
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 8,
            Scalar::F16 | Scalar::Bf16 => 16,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => 64,
            Scalar::Generic(_) => unreachable!("a generic type's width is known only in C++"),
        }
    }
}

/// A type of a value in a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Scalar(Scalar),
    Slice {
        elem: Scalar,
        mutable: bool,
    },
    /// `thread_idx()` and friends: three `u32` components.
    Dim3,
    /// `global_idx()` and friends: three `usize` components.
    Index3,
    /// A local array in registers, `[T; N]`.
    Array {
        elem: Scalar,
        len: Len,
    },
    /// Block-shared memory: `shared_array::<T, N>()` (`len` known) or `dynamic_shared::<T>()`.
    Shared {
        elem: Scalar,
        len: Option<Len>,
    },
    /// A closure value: `|x: f32| x * s`, or a parameter `op: F` with `F: Fn(..)`.
    Closure(ClosureTy),
    Unit,
}

impl Ty {
    /// The element type of something indexable: a slice, an array or shared memory.
    pub fn element(self) -> Option<Scalar> {
        match self {
            Ty::Slice { elem, .. } | Ty::Array { elem, .. } | Ty::Shared { elem, .. } => Some(elem),
            _ => None,
        }
    }

    /// The type as a Rust user would write it, for messages.
    pub fn describe(self) -> String {
        match self {
            Ty::Scalar(s) => s.rust_name().to_string(),
            Ty::Slice { elem, mutable } => {
                format!(
                    "&{}[{}]",
                    if mutable { "mut " } else { "" },
                    elem.rust_name()
                )
            }
            Ty::Dim3 => "Dim3".to_string(),
            Ty::Index3 => "Index3".to_string(),
            Ty::Array { elem, len } => format!("[{}; {}]", elem.rust_name(), len.describe()),
            Ty::Shared { elem, .. } => format!("shared [{}]", elem.rust_name()),
            Ty::Closure(_) => "closure".to_string(),
            Ty::Unit => "()".to_string(),
        }
    }
}
