//! `#[device]` types in C++: struct definitions with their layout asserted, field access,
//! struct literals, calls of methods and operators, enum variants, and arrays as values
//! (`rs_arr<T, N>`, so they can be fields, arguments and results as in Rust).

use super::{cuda_ty, strip_outer_parens, Emitter};
use crate::check::operator_function;
use crate::ir::*;
use crate::types::{Scalar, Ty};
use std::fmt::Write;

/// A field's C++ name: its Rust name, moved aside where C++ reserves it.
pub fn field_name(name: &str) -> String {
    // A tuple struct's fields, by position: `_0`, as the tuples' are.
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else if super::RESERVED.contains(&name) || name.starts_with("rs_") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The C++ definitions of `program`'s structs, in order, each with `static_assert`s that its
/// size and alignment, and each field's, are what C's layout rules give: with every field's size
/// and alignment fixed, those rules fix every offset, the ones `#[repr(C)]` gives the Rust struct
/// (asserted there by the runtime's `__device_struct!`). Not `offsetof`: NVRTC has no standard
/// headers, and not every NVRTC knows `__builtin_offsetof`.
pub fn struct_definitions(program: &Program) -> String {
    let mut out = String::new();
    for def in &program.structs {
        let def = def.0;
        // `#[repr(align(16))]` is C++'s `alignas(16)`: a `float4`-like struct moves in one
        // 16-byte access.
        match def.align {
            Some(align) => {
                let _ = writeln!(out, "struct alignas({align}) {} {{", def.name);
            }
            None => {
                let _ = writeln!(out, "struct {} {{", def.name);
            }
        }
        for (name, ty) in &def.fields {
            let _ = writeln!(out, "    {} {};", cuda_ty(*ty), field_name(name));
        }
        let _ = writeln!(out, "}};");
        if let Some((size, align, offsets)) = def.layout() {
            let name = &def.name;
            let _ = writeln!(
                out,
                "static_assert(sizeof({name}) == {size} && alignof({name}) == {align}, \
                 \"{name}: the C++ layout differs from #[repr(C)]\");"
            );
            for ((field, ty), offset) in def.fields.iter().zip(offsets) {
                let Some((field_size, field_align)) = ty.c_layout() else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "static_assert(sizeof({0}) == {field_size} && alignof({0}) == {field_align}, \
                     \"{name}::{field} (at byte {offset}): the C++ field differs from #[repr(C)]\");",
                    cuda_ty(*ty)
                );
            }
        }
        if def.partial_eq {
            let compare: Vec<String> = def
                .fields
                .iter()
                .map(|(f, _)| {
                    let f = field_name(f);
                    format!("a.{f} == b.{f}")
                })
                .collect();
            let _ = writeln!(
                out,
                "__device__ __forceinline__ bool operator==(const {0}& a, const {0}& b) {{ return {1}; }}\n\
                 __device__ __forceinline__ bool operator!=(const {0}& a, const {0}& b) {{ return !(a == b); }}",
                def.name,
                compare.join(" && ")
            );
        }
        out.push('\n');
    }
    out
}

impl Emitter<'_> {
    /// `id` as a C++ value: an array becomes an `rs_arr` (a C array cannot be copied).
    pub(super) fn value(&mut self, id: ExprId) -> String {
        let code = self.expr(id);
        match self.types.expr(id) {
            Ty::Array { .. } => format!("rs_arr_of({})", strip_outer_parens(&code)),
            _ => strip_outer_parens(&code).to_string(),
        }
    }

    /// `x.sin_cos()`, which the parser writes as `(x.sin(), x.cos())` of one value read twice:
    /// one `sincosf`, which reduces the angle once. Apart, the sine's and the cosine's
    /// reductions (and their slow paths for large angles) were each paid: a Monte Carlo
    /// pricer's Box-Muller pairs ran at 0.90 x its CUDA C twin on an H100, 1.01 x as one call.
    pub(super) fn sin_cos(&mut self, elems: &[ExprId]) -> Option<String> {
        let part = |id: &ExprId, name: &str| match &self.kernel.expr(*id).kind {
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == name && args.is_empty() => Some(*receiver),
            _ => None,
        };
        let [sin, cos] = elems else {
            return None;
        };
        let (sin, cos) = (part(sin, "sin")?, part(cos, "cos")?);
        if !matches!(self.types.expr(sin), Ty::Scalar(Scalar::F32 | Scalar::F64)) {
            return None;
        }
        let angle = self.value(sin);
        if sin != cos && self.value(cos) != angle {
            return None;
        }
        let helper = self.use_helper("rs_sin_cos");
        Some(format!("{helper}({angle})"))
    }

    /// `base.name`.
    pub(super) fn field(&mut self, base: ExprId, name: &str) -> String {
        if let ExprKind::Builtin(builtin) = self.kernel.expr(base).kind {
            return builtin.cuda(name);
        }
        let base = self.expr(base);
        format!("{base}.{}", field_name(name))
    }

    /// `Body { .. }`: C++ aggregate initialisation, fields in declaration order.
    pub(super) fn struct_literal(&mut self, ty: Ty, fields: &[(String, ExprId)]) -> String {
        let Ty::Struct(def) = ty else {
            unreachable!("checked: a struct literal's type is a struct")
        };
        let mut values = Vec::new();
        for (name, _) in &def.0.fields {
            let (_, value) = fields
                .iter()
                .find(|(n, _)| n == name)
                .expect("checked: every field is given");
            values.push(self.value(*value));
        }
        format!("{}{{{}}}", def.0.name, values.join(", "))
    }

    /// A call of the device function `name` whose parameters are `params`, with `args`
    /// (`receiver` first, for a method).
    pub(super) fn user_call(&mut self, name: &str, args: &[ExprId]) -> String {
        let mut code = Vec::new();
        for arg in args {
            code.push(self.argument(*arg));
        }
        format!("{name}({})", code.join(", "))
    }

    /// One argument of a device function call.
    pub(super) fn argument(&mut self, arg: ExprId) -> String {
        // `&x` of a slice is the slice, as Rust's deref coercion makes it.
        let arg = match &self.kernel.expr(arg).kind {
            ExprKind::Ref { expr, .. }
                if matches!(self.types.expr(*expr), Ty::Slice { .. } | Ty::Shared { .. }) =>
            {
                *expr
            }
            _ => arg,
        };
        match (self.types.expr(arg), &self.kernel.expr(arg).kind) {
            (_, ExprKind::SubSlice { .. }) => {
                let (pointer, len) = self.sub_slice(arg);
                return format!("{pointer}, {len}");
            }
            (Ty::Shared { len: Some(len), .. }, ExprKind::Local(local)) => {
                return format!("{}, {}", self.name(*local), len.cuda());
            }
            (Ty::Slice { .. } | Ty::Shared { .. }, ExprKind::Local(local)) => {
                return format!("{}, {}", self.name(*local), self.len_name(*local));
            }
            _ => {}
        }
        match &self.kernel.expr(arg).kind {
            // A C++ reference parameter binds to the place itself.
            ExprKind::Ref { expr, .. } => {
                let code = self.expr(*expr);
                strip_outer_parens(&code).to_string()
            }
            _ => self.value(arg),
        }
    }

    /// `&x[a..b]` as a pointer and a length (checked to lie within `x` in checked mode). The
    /// bounds are evaluated twice: the checker allows only side-effect-free ones here.
    pub(super) fn sub_slice(&mut self, id: ExprId) -> (String, String) {
        let ExprKind::SubSlice {
            base,
            start,
            end,
            inclusive,
            ..
        } = &self.kernel.expr(id).kind
        else {
            unreachable!("a sub-slice")
        };
        let base_len = self.length_of(*base);
        let base_code = match self.types.expr(*base) {
            // A C array decays to its pointer; an `rs_arr` (a field) is reached through its
            // first element.
            Ty::Array { .. } => format!("&({})[0]", strip_outer_parens(&self.expr(*base))),
            _ => self.expr(*base),
        };
        let start = match start {
            Some(start) => self.expr(*start),
            None => "0ull".to_string(),
        };
        let end = match end {
            Some(end) if *inclusive => format!("({} + 1ull)", self.expr(*end)),
            Some(end) => self.expr(*end),
            None => base_len.clone(),
        };
        self.use_helper("rs_sub_len");
        let line = self.kernel.expr(id).span.line();
        (
            format!("({base_code} + {start})"),
            format!("rs_sub_len({start}, {end}, {base_len}, {line})"),
        )
    }

    /// `lhs op rhs` on a `#[device]` type.
    pub(super) fn user_binary(
        &mut self,
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
        lhs_ty: Ty,
    ) -> String {
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            let l = self.expr(lhs);
            let r = self.expr(rhs);
            return format!("({l} {} {r})", op.symbol());
        }
        let method = op.operator_method().expect("checked: an operator trait");
        let function = operator_function(self.program, lhs_ty, method, self.types.expr(rhs))
            .expect("checked: the operator is implemented");
        self.user_call(&function, &[lhs, rhs])
    }

    /// `place op= value` on a `#[device]` type.
    pub(super) fn user_compound(&mut self, op: BinOp, place: ExprId, value: ExprId) -> String {
        let ty = self.types.expr(place);
        let method = format!(
            "{}_assign",
            op.operator_method().expect("checked: an operator trait")
        );
        let function = operator_function(self.program, ty, &method, self.types.expr(value))
            .expect("checked: the operator is implemented");
        let place = self.expr(place);
        let value = self.value(value);
        format!("{function}({}, {value})", strip_outer_parens(&place))
    }

    /// The integer a variant of a `#[device]` enum stands for.
    pub(super) fn variant(&self, ty: crate::types::EnumRef, name: &str) -> String {
        let value = ty.0.variant(name).expect("checked: the variant exists");
        format!("(({}){value})", cuda_ty(Ty::Enum(ty)))
    }
}
