//! Expressions, with Rust's semantics where C++ differs: wrapping signed arithmetic, masked
//! shifts, saturating float-to-int casts.

use super::constants::constant;
use super::{cuda_type, strip_outer_parens, Emitter};
use crate::ir::*;
use crate::methods::{self, Cuda, Method, RetTy};
use crate::types::{GenericArg, Scalar, Ty};

/// A float literal in C++: always with a point or exponent, `f` for `f32`.
fn float_literal(digits: &str, scalar: Scalar) -> String {
    let mut text = digits.to_string();
    if !text.contains(['.', 'e', 'E']) {
        text.push_str(".0");
    }
    if scalar == Scalar::F32 {
        text.push('f');
    }
    text
}

/// Whether C++ promotes `scalar` to `int` in arithmetic: a small integer, or a type parameter
/// that may be one.
fn promotes(scalar: Scalar) -> bool {
    scalar.is_small_int() || (scalar.bound().is_some() && !scalar.is_float())
}

impl<'a> Emitter<'a> {
    /// The C++ code of an expression; compound expressions come parenthesised so they can be
    /// embedded anywhere without precedence surprises.
    pub(super) fn expr(&mut self, id: ExprId) -> String {
        if let Some(code) = self.widened(id) {
            return code;
        }
        let kernel = self.kernel;
        match &kernel.expr(id).kind {
            ExprKind::Lit(lit) => self.literal(lit, self.types.scalar(id)),
            ExprKind::Local(local) => self.name(*local).to_string(),
            ExprKind::Binary { op, lhs, rhs } => match self.types.expr(*lhs) {
                user @ (Ty::Struct(_) | Ty::Enum(_)) => self.user_binary(*op, *lhs, *rhs, user),
                // `==` / `!=` of arrays and tuples, element by element (`rs_arr`'s and
                // `rs_tupleN`'s operators).
                Ty::Array { .. } | Ty::Tuple(_) => {
                    let (l, r) = (self.value(*lhs), self.value(*rhs));
                    format!("({l} {} {r})", op.symbol())
                }
                _ => self.binary(*op, *lhs, *rhs),
            },
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } if matches!(self.types.expr(*operand), Ty::Struct(_)) => {
                let name = method_name(&self.types.expr(*operand).describe(), "neg");
                self.user_call(&name, &[*operand])
            }
            ExprKind::Unary { op, operand } => {
                let scalar = self.types.scalar(id);
                let inner = self.expr(*operand);
                match op {
                    UnOp::Neg
                        if scalar.is_signed_int()
                            || (scalar.bound().is_some() && !scalar.is_float()) =>
                    {
                        format!("{}({inner})", self.use_helper("rs_wrapping_neg"))
                    }
                    UnOp::Neg => format!("(-{inner})"),
                    UnOp::Not if scalar == Scalar::Bool => format!("(!{inner})"),
                    UnOp::Not if promotes(scalar) => {
                        format!("(({})(~{inner}))", cuda_type(scalar))
                    }
                    UnOp::Not => format!("(~{inner})"),
                }
            }
            ExprKind::Cast { expr, to } => {
                // An enum converts as its `repr` integer, which it is in C++.
                let from = match self.types.expr(*expr) {
                    Ty::Enum(def) => def.0.repr,
                    _ => self.types.scalar(*expr),
                };
                if let Some(code) = self.narrow_cast(*expr, *to) {
                    return code;
                }
                let inner = self.expr(*expr);
                if let Some(convert) = self.without_nan_test(*expr, from, *to) {
                    return format!("{convert}({})", strip_outer_parens(&inner));
                }
                self.cast(inner, from, *to)
            }
            ExprKind::Index { base, index } => {
                let checked = self.checked_index(*base, *index, self.kernel.expr(id).span);
                match self.table_name(*base) {
                    Some(table) => match self.types.expr(id) {
                        Ty::Scalar(Scalar::F32) => format!("__uint_as_float({table}[{checked}])"),
                        Ty::Scalar(Scalar::F64) => {
                            format!("__longlong_as_double((long long){table}[{checked}])")
                        }
                        _ => format!("{table}[{checked}]"),
                    },
                    None => format!("{}[{checked}]", self.expr(*base)),
                }
            }
            ExprKind::Len(base)
                if matches!(self.types.expr(*base), Ty::Struct(_) | Ty::Enum(_)) =>
            {
                let name = method_name(&self.types.expr(*base).describe(), "len");
                self.user_call(&name, &[*base])
            }
            ExprKind::Len(base) => self.length_of(*base),
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if matches!(self.types.expr(*receiver), Ty::Struct(_) | Ty::Enum(_)) => {
                let name = method_name(&self.types.expr(*receiver).describe(), method);
                let all: Vec<ExprId> = std::iter::once(*receiver)
                    .chain(args.iter().copied())
                    .collect();
                self.user_call(&name, &all)
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } => {
                let scalar = self.types.scalar(*receiver);
                let method = methods::lookup(method, scalar).expect("checked method");
                if scalar.is_small_int() {
                    return self.small_int_method(method, *receiver, args);
                }
                let mut call_args = vec![strip_outer_parens(&self.expr(*receiver)).to_string()];
                for arg in args {
                    call_args.push(strip_outer_parens(&self.expr(*arg)).to_string());
                }
                if method.takes_line() {
                    call_args.push(self.kernel.expr(id).span.line().to_string());
                }
                let func = match method.cuda {
                    Cuda::Func(f32_name, f64_name) => {
                        // CUDA overloads the double-named functions for float, which is what a
                        // generic kernel needs.
                        if scalar == Scalar::F64 || scalar.bound().is_some() {
                            f64_name
                        } else {
                            f32_name
                        }
                    }
                    Cuda::IntFunc(narrow, wide) => {
                        if scalar.bits() == 64 {
                            wide
                        } else {
                            narrow
                        }
                    }
                    Cuda::Helper(name) => self.use_helper(name),
                    Cuda::HelperIn(function, block) => {
                        self.use_helper(block);
                        function
                    }
                };
                // A libdevice function on a type parameter computes in `float` or `double`; an
                // `f16`/`bf16` instantiation rounds back to `T`, as the `half` crate does.
                if let (Cuda::Func(..), Scalar::Generic(generic), methods::RetTy::Same) =
                    (method.cuda, scalar, method.ret)
                {
                    return format!("(({})({func}({})))", generic.name, call_args.join(", "));
                }
                format!("{func}({})", call_args.join(", "))
            }
            ExprKind::Builtin(_) => unreachable!("checked: builtins are read through an axis"),
            ExprKind::Call { name, args, .. } => {
                // Template arguments always explicit: deduction cannot see through a result
                // type or an `f16` the caller converts.
                let template = match self.types.calls.get(&id) {
                    Some(generic_args) => {
                        let written: Vec<String> = generic_args
                            .iter()
                            .filter_map(|arg| match arg {
                                GenericArg::Type(scalar) => Some(cuda_type(*scalar).to_string()),
                                GenericArg::Const(len) => Some(len.cuda()),
                                GenericArg::Bool(value) => Some(value.cuda()),
                                GenericArg::Closure => None,
                            })
                            .collect();
                        if written.is_empty() {
                            String::new()
                        } else {
                            format!("<{}>", written.join(", "))
                        }
                    }
                    None => String::new(),
                };
                self.user_call(&format!("{name}{template}"), args)
            }
            ExprKind::Closure { params, body, .. } => self.closure(id, params, body),
            ExprKind::CallClosure { callee, args } => {
                let callee = self.expr(*callee);
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| strip_outer_parens(&self.expr(*arg)).to_string())
                    .collect();
                format!("{callee}({})", args.join(", "))
            }
            ExprKind::SubSlice { .. } => {
                unreachable!("checked: sub-slices are call arguments or `let` values")
            }
            ExprKind::Field { base, name, .. } => self.field(*base, name),
            ExprKind::StructLit { ty, fields } => self.struct_literal(Ty::Struct(*ty), fields),
            ExprKind::AssocCall { ty, name, args, .. } => {
                self.user_call(&method_name(&ty.describe(), name), args)
            }
            ExprKind::Variant { ty, name } => self.variant(*ty, name),
            ExprKind::Ref { expr, .. } | ExprKind::Deref(expr) => self.expr(*expr),
            ExprKind::Tuple { elems } => {
                if let Some(pair) = self.sin_cos(elems) {
                    return pair;
                }
                let values: Vec<String> = elems.iter().map(|e| self.value(*e)).collect();
                format!(
                    "{}{{{}}}",
                    super::cuda_ty(self.types.expr(id)),
                    values.join(", ")
                )
            }
            ExprKind::TupleField { base, index } => format!("{}._{index}", self.expr(*base)),
            ExprKind::ArrayRepeat { value, len } => {
                let value = self.value(*value);
                let elem = self.types.expr(id).element().expect("an array");
                format!(
                    "rs_arr_fill<{}, {}>({value})",
                    super::cuda_ty(elem),
                    len.cuda()
                )
            }
            ExprKind::ArrayList { elems } => {
                let values: Vec<String> = elems.iter().map(|e| self.value(*e)).collect();
                format!(
                    "{}{{{{{}}}}}",
                    super::cuda_ty(self.types.expr(id)),
                    values.join(", ")
                )
            }
            ExprKind::Const { ty, name } => constant(*ty, name),
            // A `const B: bool` is 0 or 1 in an `unsigned long long` template parameter.
            ExprKind::GenericConst(name) if self.types.expr(id) == Ty::Scalar(Scalar::Bool) => {
                format!("({name} != 0ull)")
            }
            ExprKind::GenericConst(name) => name.to_string(),
            ExprKind::Outer(constant) => constant.cuda(),
            ExprKind::Convert { expr, to } => {
                let inner = self.expr(*expr);
                format!("{}({})", cuda_type(*to), strip_outer_parens(&inner))
            }
            ExprKind::FromBits { bits, to } => {
                let inner = self.expr(*bits);
                if let Scalar::Generic(generic) = to {
                    self.use_helper("rs_bits64");
                    format!(
                        "rs_from_bits64<{}>({})",
                        generic.name,
                        strip_outer_parens(&inner)
                    )
                } else if *to == Scalar::F32 {
                    format!("__uint_as_float({})", strip_outer_parens(&inner))
                } else {
                    format!(
                        "__longlong_as_double((long long)({}))",
                        strip_outer_parens(&inner)
                    )
                }
            }
            ExprKind::Intrinsic { op, args } => self.intrinsic(*op, id, args, None),
            ExprKind::SharedArray { .. }
            | ExprKind::DynamicShared { .. }
            | ExprKind::Match { .. } => {
                unreachable!("checked: constructors only initialise a `let`")
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let cond = self.expr(*cond);
                let then_value = self.value(*then_value);
                let else_value = self.value(*else_value);
                format!("({cond} ? {then_value} : {else_value})")
            }
        }
    }

    /// `0 <= x` or `x >= 0` of an unsigned `x` (`(0..n).contains(&i)` compares so): always
    /// true, which CUDA warns of as a pointless comparison, so it is written as `true` after
    /// `x` is evaluated.
    fn unsigned_at_least_zero(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> Option<String> {
        let is_zero = |id: ExprId| {
            matches!(
                self.kernel.expr(id).kind,
                ExprKind::Lit(Lit::Int { value: 0, .. })
            )
        };
        let value = match op {
            BinOp::Le if is_zero(lhs) => rhs,
            BinOp::Ge if is_zero(rhs) => lhs,
            _ => return None,
        };
        let scalar = self.types.scalar(value);
        if !scalar.is_int() || scalar.is_signed_int() || scalar.bound().is_some() {
            return None;
        }
        let code = self.expr(value);
        Some(format!("((void){code}, true)"))
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> String {
        let scalar = self.types.scalar(lhs);
        // A small integer's `+`, `-` and `*` wrap at its width: a chain of them computes in
        // `unsigned int`, whose low bits are the same whatever lies above them, and converts
        // once, where the value leaves the chain; converted at every step, each costs a sign
        // or zero extension (the Sobel port's gradient: a third of its instructions).
        if scalar.is_small_int() && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
            let l = self.small_ring(lhs, scalar);
            let r = self.small_ring(rhs, scalar);
            return format!("(({})({l} {} {r}))", cuda_type(scalar), op.symbol());
        }
        if let Some(code) = self.narrow_comparison(op, lhs, rhs) {
            return code;
        }
        if let Some(code) = self.unsigned_at_least_zero(op, lhs, rhs) {
            return code;
        }
        let l = self.expr(lhs);
        let r = self.expr(rhs);
        match op {
            BinOp::Div | BinOp::Rem if scalar.is_int() => {
                // Both live in the `rs_div` helper.
                self.use_helper("rs_div");
                let helper = if op == BinOp::Div { "rs_div" } else { "rs_rem" };
                let line = self.kernel.expr(rhs).span.line();
                format!(
                    "{helper}({}, {}, {line})",
                    strip_outer_parens(&l),
                    strip_outer_parens(&r)
                )
            }
            // The helpers return their operands' type, so a small integer's sum wraps at its
            // own width.
            BinOp::Add | BinOp::Sub | BinOp::Mul
                if scalar.is_signed_int()
                    || scalar.is_small_int()
                    || (scalar.bound().is_some() && !scalar.is_float()) =>
            {
                let helper = match op {
                    BinOp::Add => "rs_wrapping_add",
                    BinOp::Sub => "rs_wrapping_sub",
                    _ => "rs_wrapping_mul",
                };
                let helper = self.use_helper(helper);
                format!(
                    "{helper}({}, {})",
                    strip_outer_parens(&l),
                    strip_outer_parens(&r)
                )
            }
            BinOp::Rem if scalar.is_half() => {
                let ty = cuda_type(scalar);
                format!("{ty}(fmodf((float)({l}), (float)({r})))")
            }
            BinOp::Rem if scalar.is_float() => {
                let func = if scalar == Scalar::F64 {
                    "fmod"
                } else {
                    "fmodf"
                };
                format!(
                    "{func}({}, {})",
                    strip_outer_parens(&l),
                    strip_outer_parens(&r)
                )
            }
            BinOp::Shl | BinOp::Shr if scalar.bound().is_some() => {
                let ty = cuda_type(scalar);
                let amount =
                    format!("((unsigned int)({r}) & (unsigned int)(sizeof({ty}) * 8 - 1))");
                // `T` may be narrower than `int`, which the shift would promote to.
                format!("(({ty})({l} {} {amount}))", op.symbol())
            }
            BinOp::Shl | BinOp::Shr => {
                // Rust masks the shift amount to the width (release semantics); C++ leaves an
                // oversized shift undefined.
                let mask = scalar.bits() - 1;
                let amount = format!("((unsigned int)({r}) & {mask}u)");
                if op == BinOp::Shl && scalar.is_signed_int() {
                    let unsigned = if scalar.bits() == 64 {
                        "unsigned long long"
                    } else {
                        "unsigned int"
                    };
                    format!("(({})(({unsigned}){l} << {amount}))", cuda_type(scalar))
                } else if scalar.is_small_int() {
                    format!("(({})({l} {} {amount}))", cuda_type(scalar), op.symbol())
                } else {
                    format!("({l} {} {amount})", op.symbol())
                }
            }
            // `&`, `|` and `^` of values narrower than `int` are promoted; the result is
            // converted back so it has the operands' type wherever it is used.
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor if promotes(scalar) => {
                format!("(({})({l} {} {r}))", cuda_type(scalar), op.symbol())
            }
            _ => format!("({l} {} {r})", op.symbol()),
        }
    }

    /// A method on an integer narrower than `int`: the bit counts see the value's own width
    /// (zero-extended, so a negative `i8` has 8 bits, not 32), and results of the receiver's
    /// type are converted back from the `int` the helpers' overloads promote to.
    fn small_int_method(&mut self, method: &Method, receiver: ExprId, args: &[ExprId]) -> String {
        let scalar = self.types.scalar(receiver);
        let ty = cuda_type(scalar);
        let bits = scalar.bits();
        let value = self.expr(receiver);
        let unsigned = if bits == 8 {
            "unsigned char"
        } else {
            "unsigned short"
        };
        let widened = format!("((unsigned int)({unsigned}){value})");
        match method.name {
            "count_ones" => format!("((unsigned int)__popc({widened}))"),
            "leading_zeros" => format!("((unsigned int)__clz({widened}) - {}u)", 32 - bits),
            // The bit above the value's width stops the count at `bits` for zero.
            "trailing_zeros" => {
                let helper = self.use_helper("rs_trailing_zeros");
                format!("{helper}({widened} | {}u)", 1u32 << bits)
            }
            _ => {
                let mut call_args = vec![strip_outer_parens(&value).to_string()];
                for arg in args {
                    call_args.push(strip_outer_parens(&self.expr(*arg)).to_string());
                }
                let func = match method.cuda {
                    Cuda::Helper(name) => self.use_helper(name),
                    Cuda::HelperIn(function, block) => {
                        self.use_helper(block);
                        function
                    }
                    Cuda::Func(name, _) | Cuda::IntFunc(name, _) => name,
                };
                if method.takes_line() {
                    call_args.push(self.kernel.expr(receiver).span.line().to_string());
                }
                let call = format!("{func}({})", call_args.join(", "));
                match method.ret {
                    RetTy::Same => format!("(({ty}){call})"),
                    RetTy::Unsigned => format!("(({unsigned}){call})"),
                    RetTy::Bool
                    | RetTy::U32
                    | RetTy::F32
                    | RetTy::F64
                    | RetTy::Bits
                    | RetTy::U64 => call,
                }
            }
        }
    }

    /// A small integer operand of `+`, `-` or `*` as `unsigned int`: a chain of those
    /// operations left unconverted, anything else widened.
    fn small_ring(&mut self, id: ExprId, scalar: Scalar) -> String {
        if let ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul),
            lhs,
            rhs,
        } = self.kernel.expr(id).kind
        {
            if self.types.scalar(lhs) == scalar {
                let l = self.small_ring(lhs, scalar);
                let r = self.small_ring(rhs, scalar);
                return format!("({l} {} {r})", op.symbol());
            }
        }
        format!("((unsigned int)({}))", strip_outer_parens(&self.expr(id)))
    }

    /// The conversion intrinsic of float `expr` to integer type `to` where `expr` cannot be
    /// NaN: the intrinsics saturate as Rust's `as` does, and only NaN needs the helpers' test.
    pub(super) fn without_nan_test(
        &self,
        expr: ExprId,
        from: Scalar,
        to: Scalar,
    ) -> Option<&'static str> {
        if !self.ranges.never_nan(self.kernel, expr) {
            return None;
        }
        Some(match (from, to) {
            (Scalar::F32, Scalar::U32) => "__float2uint_rz",
            (Scalar::F32, Scalar::I32) => "__float2int_rz",
            (Scalar::F32, Scalar::U64 | Scalar::Usize) => "__float2ull_rz",
            (Scalar::F32, Scalar::I64 | Scalar::Isize) => "__float2ll_rz",
            (Scalar::F64, Scalar::U32) => "__double2uint_rz",
            (Scalar::F64, Scalar::I32) => "__double2int_rz",
            (Scalar::F64, Scalar::U64 | Scalar::Usize) => "__double2ull_rz",
            (Scalar::F64, Scalar::I64 | Scalar::Isize) => "__double2ll_rz",
            _ => return None,
        })
    }

    fn cast(&mut self, inner: String, from: Scalar, to: Scalar) -> String {
        if from == to {
            return inner;
        }
        if from.bound().is_some() || to.bound().is_some() {
            return format!("(({}){inner})", cuda_type(to));
        }
        if from.is_float() && to.is_int() {
            // Rust's `as` saturates and maps NaN to 0; the conversion intrinsics saturate, and
            // the helper handles NaN (PTX turns it into 2^63 for 64-bit targets).
            let helper = match to {
                Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => "rs_as_small",
                Scalar::I32 => "rs_as_i32",
                Scalar::U32 => "rs_as_u32",
                Scalar::I64 | Scalar::Isize => "rs_as_i64",
                _ => "rs_as_u64",
            };
            if to.is_small_int() {
                // Clamped in `float`/`double` to the target's range (exact there), then
                // converted by `int`: the same saturation and NaN rule as the wide casts.
                let helper = self.use_helper(helper);
                let ty = cuda_type(to);
                return format!("(({ty}){helper}<{ty}>({}))", strip_outer_parens(&inner));
            }
            let helper = self.use_helper(helper);
            return format!("{helper}({})", strip_outer_parens(&inner));
        }
        format!("(({}){inner})", cuda_type(to))
    }

    fn literal(&self, lit: &Lit, scalar: Scalar) -> String {
        if let Scalar::Generic(generic) = scalar {
            // The literal takes the instantiation's type.
            let text = match lit {
                Lit::Int { value, .. } => value.to_string(),
                Lit::Float { digits, .. } => float_literal(digits, Scalar::F64),
                Lit::Bool(b) => b.to_string(),
            };
            return format!("(({}){text})", generic.name);
        }
        match lit {
            Lit::Bool(b) => b.to_string(),
            Lit::Int { value, .. } => match scalar {
                Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => {
                    format!("(({}){value})", cuda_type(scalar))
                }
                Scalar::I32 => value.to_string(),
                Scalar::U32 => format!("{value}u"),
                Scalar::I64 | Scalar::Isize => format!("{value}ll"),
                Scalar::U64 | Scalar::Usize => format!("{value}ull"),
                _ => unreachable!("checked: integer literal of type {scalar:?}"),
            },
            Lit::Float { digits, .. } => float_literal(digits, scalar),
        }
    }
}
