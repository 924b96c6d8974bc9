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
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Usize,
    Isize,
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
    /// Whether the concrete type `scalar` satisfies the bound.
    pub fn admits(self, scalar: Scalar) -> bool {
        match self {
            Bound::Float => scalar.is_float() || scalar.is_half(),
            Bound::Integer => scalar.is_int(),
            Bound::Number => scalar.is_number(),
        }
    }

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
    /// The value of a `const B: bool` parameter.
    Bool(BoolArg),
    /// A closure, whose type only the compilers downstream can name.
    Closure,
}

/// The value of a `const B: bool` parameter: `true`, `false`, or the caller's own `const B: bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolArg {
    Known(bool),
    Param(&'static str),
}

impl BoolArg {
    /// The value as C++ writes it: const parameters are `unsigned long long` there, 0 or 1 for a
    /// `bool` (the runtime spells every const template argument as an integer).
    pub fn cuda(self) -> String {
        match self {
            BoolArg::Known(value) => format!("{}ull", u8::from(value)),
            BoolArg::Param(name) => name.to_string(),
        }
    }

    /// The value as Rust writes it, in the CPU twin.
    pub fn rust(self) -> String {
        match self {
            BoolArg::Known(value) => value.to_string(),
            BoolArg::Param(name) => name.to_string(),
        }
    }
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

/// The most bytes of `#[constant]` tables one kernel takes: CUDA's portable limit on a kernel's
/// parameters is 4 KiB, and the other parameters need some of it.
pub const MAX_CONSTANT_BYTES: u64 = 4000;

/// The length of an array or shared memory: a number, a kernel's const parameter, or
/// arithmetic over those and constants from outside the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Len {
    Known(u64),
    Param(&'static str),
    /// `{ BLOCK * BLOCK }`, `TILE`, `{ N + 1 }`: known only to rustc or at instantiation.
    Expr(&'static LenExpr),
}

/// A length that the macro cannot fold to a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LenExpr {
    Known(u64),
    Param(&'static str),
    Outer(OuterConst),
    Binary(LenOp, &'static LenExpr, &'static LenExpr),
}

/// The operators of length arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LenOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl LenOp {
    /// The operator as written in both Rust and C++.
    pub fn symbol(self) -> &'static str {
        match self {
            LenOp::Add => "+",
            LenOp::Sub => "-",
            LenOp::Mul => "*",
            LenOp::Div => "/",
            LenOp::Rem => "%",
        }
    }
}

/// A use of a constant defined outside the kernel (`TILE`, `consts::TILE`): the macro sees
/// only its path, so its value reaches the CUDA source through rustc (see `emit/outer.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OuterConst {
    /// The function whose code names it.
    pub function: &'static str,
    /// Its position among that function's outer constants.
    pub index: u32,
    /// The path as written, for messages.
    pub name: &'static str,
}

/// Marks where the host splices an outer constant's value into the CUDA source.
pub const OUTER_MARK: char = '\u{1}';

impl OuterConst {
    /// The placeholder the host replaces with the constant's C++ literal.
    pub fn cuda(self) -> String {
        format!(
            "{OUTER_MARK}{}{OUTER_MARK}{}{OUTER_MARK}",
            self.function, self.index
        )
    }

    /// The C++ name of the file-scope array that holds a table constant's values.
    pub fn cuda_table(self) -> String {
        format!("rs_table_{}_{}", self.function, self.index)
    }

    /// A table constant's length as C++ computes it, a constant expression.
    pub fn cuda_table_len(self) -> String {
        let table = self.cuda_table();
        format!("((unsigned long long)(sizeof({table}) / sizeof({table}[0])))")
    }

    /// The host module's `usize` copy of a table constant's length.
    pub fn twin_len(self) -> String {
        format!("{}_LEN", self.twin())
    }

    /// The name of the host module's typed copy of the constant, which the CPU twin reads.
    pub fn twin(self) -> String {
        format!("__GPU_CONST_{}_{}", self.function, self.index)
    }
}

/// The name of a `#[device]` struct's associated copy of the constant `path` (as written, no
/// spaces) that one of its fields' array lengths names.
pub fn field_length_copy(path: &str) -> String {
    format!("__GPU_LEN_{}", path.replace("::", "__"))
}

impl Len {
    /// Whether two lengths are the same, a constant from outside named by one path being the
    /// same wherever it is named (a struct's field and a method of it record it apart).
    pub fn same(self, other: Len) -> bool {
        match (self, other) {
            (Len::Expr(a), Len::Expr(b)) => a.same(b),
            _ => self == other,
        }
    }

    /// The length as a C++ `unsigned long long` expression.
    pub fn cuda(self) -> String {
        match self {
            Len::Known(n) => format!("{n}ull"),
            Len::Param(name) => name.to_string(),
            Len::Expr(expr) => expr.render(&|outer| outer.cuda(), "ull"),
        }
    }

    /// The length as Rust code in the CPU twin.
    pub fn rust(self) -> String {
        match self {
            Len::Known(n) => n.to_string(),
            Len::Param(name) => name.to_string(),
            Len::Expr(expr) => expr.render(&|outer| outer.twin(), "usize"),
        }
    }

    /// The length as written in Rust, for messages.
    pub fn describe(self) -> String {
        match self {
            Len::Known(n) => n.to_string(),
            Len::Param(name) => name.to_string(),
            Len::Expr(expr) => expr.render(&|outer| outer.name.to_string(), ""),
        }
    }

    /// Whether the length is known only when a generic kernel is instantiated.
    pub fn needs_instantiation(self) -> bool {
        match self {
            Len::Known(_) => false,
            Len::Param(_) => true,
            Len::Expr(expr) => expr.mentions_param(),
        }
    }
}

impl LenExpr {
    fn same(&self, other: &LenExpr) -> bool {
        match (self, other) {
            (LenExpr::Outer(a), LenExpr::Outer(b)) => a.name == b.name,
            (LenExpr::Binary(op, l, r), LenExpr::Binary(op2, l2, r2)) => {
                op == op2 && l.same(l2) && r.same(r2)
            }
            _ => self == other,
        }
    }

    fn render(&self, outer: &dyn Fn(OuterConst) -> String, suffix: &str) -> String {
        match self {
            LenExpr::Known(n) => format!("{n}{suffix}"),
            LenExpr::Param(name) => name.to_string(),
            LenExpr::Outer(constant) => outer(*constant),
            LenExpr::Binary(op, lhs, rhs) => format!(
                "({} {} {})",
                lhs.render(outer, suffix),
                op.symbol(),
                rhs.render(outer, suffix)
            ),
        }
    }

    fn mentions_param(&self) -> bool {
        match self {
            LenExpr::Known(_) | LenExpr::Outer(_) => false,
            LenExpr::Param(_) => true,
            LenExpr::Binary(_, lhs, rhs) => lhs.mentions_param() || rhs.mentions_param(),
        }
    }
}

impl Scalar {
    /// The size in bytes; `None` for a generic parameter.
    pub fn size_bytes(self) -> Option<u32> {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => Some(1),
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => Some(2),
            Scalar::I32 | Scalar::U32 | Scalar::F32 => Some(4),
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::Isize | Scalar::F64 => Some(8),
            Scalar::Generic(_) => None,
        }
    }

    /// Every scalar, in the order messages list them.
    pub const ALL: [Scalar; 15] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::Isize,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::Bf16,
    ];

    /// The type's name as written in Rust.
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::Isize => "isize",
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

    /// The variant name of `gpu_dsl_runtime::ScalarType` for this type.
    pub fn runtime_variant(self) -> &'static str {
        match self {
            Scalar::Bool => "Bool",
            Scalar::I8 => "I8",
            Scalar::U8 => "U8",
            Scalar::I16 => "I16",
            Scalar::U16 => "U16",
            Scalar::I32 => "I32",
            Scalar::U32 => "U32",
            Scalar::I64 => "I64",
            Scalar::U64 => "U64",
            Scalar::Usize => "Usize",
            Scalar::Isize => "Isize",
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
            Scalar::I8
                | Scalar::U8
                | Scalar::I16
                | Scalar::U16
                | Scalar::I32
                | Scalar::U32
                | Scalar::I64
                | Scalar::U64
                | Scalar::Usize
                | Scalar::Isize
        ) || self.bound() == Some(Bound::Integer)
    }

    /// A signed integer type known here; a generic one's signedness is known only in C++.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::Isize
        )
    }

    /// An integer narrower than C++'s `int` (`i8`, `u8`, `i16`, `u16`): C++ promotes it to
    /// `int` in arithmetic, so the CUDA code converts each result back to wrap as Rust does.
    pub fn is_small_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16)
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
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 8,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 16,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::Isize | Scalar::F64 => 64,
            Scalar::Generic(_) => unreachable!("a generic type's width is known only in C++"),
        }
    }
}

/// A type of a value in a kernel.
///
/// `Copy`, so the checker can hand types around freely: element types are interned
/// (`Ty::interned`), as names are, for the few milliseconds a macro runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(Scalar),
    Slice {
        elem: &'static Ty,
        mutable: bool,
    },
    /// `thread_idx()` and friends: three `u32` components.
    Dim3,
    /// `global_idx()` and friends: three `usize` components.
    Index3,
    /// A local array in registers, `[T; N]`.
    Array {
        elem: &'static Ty,
        len: Len,
    },
    /// Block-shared memory: `shared_array::<T, N>()` (`len` known) or `dynamic_shared::<T>()`.
    Shared {
        elem: &'static Ty,
        len: Option<Len>,
    },
    /// A `#[device]` struct.
    Struct(StructRef),
    /// A fieldless `#[device]` enum.
    Enum(EnumRef),
    /// `(A, B, ...)`, two or more elements.
    Tuple(&'static [Ty]),
    /// A closure value: `|x: f32| x * s`, or a parameter `op: F` with `F: Fn(..)`.
    Closure(ClosureTy),
    /// A kernel parameter `&TensorMap<T>`: a tensor-map descriptor that `tma_load_2d` reads.
    TensorMap(Scalar),
    Unit,
}

/// A `#[device]` struct: its fields in declaration order, laid out as C lays them out
/// (`#[repr(C)]`).
#[derive(Debug)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<(String, Ty)>,
    /// `#[derive(PartialEq)]`: `==` and `!=` compare field by field.
    pub partial_eq: bool,
    /// The path the kernel names it by, as Rust source (`Body`, `physics::Body`).
    pub path: String,
    /// The alignment `#[repr(align(N))]` asks for, beyond its fields' (`None`: theirs).
    pub align: Option<u64>,
}

impl StructDef {
    /// The constants from outside that the fields' array lengths name (`[u32; MAX]`), each once.
    pub fn length_constants(&self) -> Vec<OuterConst> {
        fn in_expr(expr: &LenExpr, out: &mut Vec<OuterConst>) {
            match expr {
                LenExpr::Outer(constant) => out.push(*constant),
                LenExpr::Binary(_, lhs, rhs) => {
                    in_expr(lhs, out);
                    in_expr(rhs, out);
                }
                LenExpr::Known(_) | LenExpr::Param(_) => {}
            }
        }
        fn in_type(ty: Ty, out: &mut Vec<OuterConst>) {
            match ty {
                Ty::Array { elem, len } => {
                    if let Len::Expr(expr) = len {
                        in_expr(expr, out);
                    }
                    in_type(*elem, out);
                }
                Ty::Tuple(elems) => elems.iter().for_each(|elem| in_type(*elem, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (_, ty) in &self.fields {
            in_type(*ty, &mut out);
        }
        out.retain(|constant| constant.function == self.name);
        out.sort_by_key(|constant| constant.index);
        out.dedup_by_key(|constant| constant.index);
        out
    }

    /// C's layout of the struct (see [`struct_layout`]), raised to `#[repr(align(N))]`'s.
    pub fn layout(&self) -> Option<(u64, u64, Vec<u64>)> {
        let (size, align, offsets) = struct_layout(self.fields.iter().map(|(_, ty)| *ty))?;
        let align = align.max(self.align.unwrap_or(1));
        Some((size.div_ceil(align) * align, align, offsets))
    }

    /// The type of field `name`.
    pub fn field(&self, name: &str) -> Option<Ty> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, ty)| *ty)
    }
}

/// A handle to a struct definition, compared by name: a program has one type of each name.
#[derive(Clone, Copy, Debug)]
pub struct StructRef(pub &'static StructDef);

impl PartialEq for StructRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for StructRef {}

impl std::hash::Hash for StructRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

/// A fieldless `#[device]` enum, represented on both sides by its `repr` integer.
#[derive(Debug)]
pub struct EnumDef {
    pub name: String,
    /// Variant names with their discriminants.
    pub variants: Vec<(String, u64)>,
    /// The `#[repr(..)]` integer type.
    pub repr: Scalar,
    /// `#[derive(PartialEq)]`.
    pub partial_eq: bool,
    /// The path the kernel names it by, as Rust source.
    pub path: String,
}

impl EnumDef {
    /// The discriminant of variant `name`.
    pub fn variant(&self, name: &str) -> Option<u64> {
        self.variants
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| *value)
    }
}

/// A handle to an enum definition, compared by name.
#[derive(Clone, Copy, Debug)]
pub struct EnumRef(pub &'static EnumDef);

impl PartialEq for EnumRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for EnumRef {}

impl std::hash::Hash for EnumRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl Ty {
    /// The length of a shared array's rows where a const generic gives it: the CPU twin, which
    /// holds const generics as values, holds such an array flat (rows of it as slices).
    pub fn flat_rows(self) -> Option<Len> {
        match self {
            Ty::Shared {
                elem: Ty::Array { len, .. },
                ..
            } if len.needs_instantiation() => Some(*len),
            _ => None,
        }
    }

    /// This type with a `'static` lifetime, allocated once per distinct type.
    pub fn interned(self) -> &'static Ty {
        thread_local! {
            static TYPES: std::cell::RefCell<std::collections::HashMap<Ty, &'static Ty>> =
                std::cell::RefCell::default();
        }
        TYPES.with(|types| {
            *types
                .borrow_mut()
                .entry(self)
                .or_insert_with(|| Box::leak(Box::new(self)))
        })
    }

    /// A tuple of these element types, interned.
    pub fn tuple(elems: Vec<Ty>) -> Ty {
        thread_local! {
            static TUPLES: std::cell::RefCell<std::collections::HashMap<Vec<Ty>, &'static [Ty]>> =
                std::cell::RefCell::default();
        }
        TUPLES.with(|tuples| {
            let mut tuples = tuples.borrow_mut();
            let elems: &'static [Ty] = match tuples.get(&elems) {
                Some(interned) => interned,
                None => {
                    let interned: &'static [Ty] = Box::leak(elems.clone().into_boxed_slice());
                    tuples.insert(elems, interned);
                    interned
                }
            };
            Ty::Tuple(elems)
        })
    }

    /// The scalar this type is, if it is one.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Ty::Scalar(scalar) => Some(scalar),
            _ => None,
        }
    }

    /// The bytes of one element of a `#[constant]` table: a number, or a row of them.
    pub fn table_element_bytes(self) -> u64 {
        match self {
            Ty::Array {
                elem,
                len: Len::Known(len),
            } => len.saturating_mul(elem.table_element_bytes()),
            other => other
                .scalar()
                .and_then(Scalar::size_bytes)
                .map_or(1, u64::from),
        }
    }

    /// The element type of something indexable: a slice, an array or shared memory.
    pub fn element(self) -> Option<Ty> {
        match self {
            Ty::Slice { elem, .. } | Ty::Array { elem, .. } | Ty::Shared { elem, .. } => {
                Some(*elem)
            }
            _ => None,
        }
    }

    /// The element type of something indexable, when that is a scalar.
    pub fn scalar_element(self) -> Option<Scalar> {
        self.element().and_then(Ty::scalar)
    }

    /// The type as a Rust user would write it, for messages.
    pub fn describe(self) -> String {
        match self {
            Ty::Scalar(s) => s.rust_name().to_string(),
            Ty::Slice { elem, mutable } => {
                format!(
                    "&{}[{}]",
                    if mutable { "mut " } else { "" },
                    elem.describe()
                )
            }
            Ty::Dim3 => "Dim3".to_string(),
            Ty::Index3 => "Index3".to_string(),
            Ty::Array { elem, len } => format!("[{}; {}]", elem.describe(), len.describe()),
            Ty::Shared { elem, .. } => format!("shared [{}]", elem.describe()),
            Ty::Struct(def) => def.0.name.clone(),
            Ty::Enum(def) => def.0.name.clone(),
            Ty::Tuple(elems) => format!(
                "({})",
                elems
                    .iter()
                    .map(|t| t.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Ty::Closure(_) => "closure".to_string(),
            Ty::TensorMap(elem) => format!("&TensorMap<{}>", elem.rust_name()),
            Ty::Unit => "()".to_string(),
        }
    }
}

impl Ty {
    /// Whether two types are the same, their arrays' lengths compared by [`Len::same`].
    pub fn same(self, other: Ty) -> bool {
        match (self, other) {
            (Ty::Array { elem, len }, Ty::Array { elem: e2, len: l2 }) => {
                len.same(l2) && elem.same(*e2)
            }
            (Ty::Tuple(a), Ty::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(*y))
            }
            _ => self == other,
        }
    }

    /// Size and alignment in bytes under C's layout rules (`#[repr(C)]`), for a concrete type.
    pub fn c_layout(self) -> Option<(u64, u64)> {
        match self {
            Ty::Scalar(scalar) => scalar.size_bytes().map(|s| (u64::from(s), u64::from(s))),
            Ty::Array {
                elem,
                len: Len::Known(n),
            } => elem.c_layout().map(|(size, align)| (size * n, align)),
            Ty::Struct(def) => def.0.layout().map(|(size, align, _)| (size, align)),
            Ty::Enum(def) => def.0.repr.c_layout_scalar(),
            Ty::Tuple(_)
            | Ty::Closure(_)
            | Ty::TensorMap(_)
            | Ty::Array { .. }
            | Ty::Slice { .. }
            | Ty::Shared { .. }
            | Ty::Dim3
            | Ty::Index3
            | Ty::Unit => None,
        }
    }
}

impl Scalar {
    fn c_layout_scalar(self) -> Option<(u64, u64)> {
        self.size_bytes().map(|s| (u64::from(s), u64::from(s)))
    }
}

/// C's layout of a struct with fields of these types: its size, alignment and each field's
/// offset.
pub fn struct_layout(fields: impl IntoIterator<Item = Ty>) -> Option<(u64, u64, Vec<u64>)> {
    let (mut offset, mut align) = (0u64, 1u64);
    let mut offsets = Vec::new();
    for ty in fields {
        let (size, field_align) = ty.c_layout()?;
        offset = offset.div_ceil(field_align) * field_align;
        offsets.push(offset);
        offset += size;
        align = align.max(field_align);
    }
    Some((offset.div_ceil(align) * align, align, offsets))
}
