//! Expressions, with Rust's semantics where C++ differs: wrapping signed arithmetic, masked
//! shifts, saturating float-to-int casts.

use super::constants::constant;
use super::{cuda_type, strip_outer_parens, Emitter};
use crate::ir::*;
use crate::methods::{self, Cuda};
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

impl<'a> Emitter<'a> {
    /// The C++ code of an expression; compound expressions come parenthesised so they can be
    /// embedded anywhere without precedence surprises.
    pub(super) fn expr(&mut self, id: ExprId) -> String {
        let kernel = self.kernel;
        match &kernel.expr(id).kind {
            ExprKind::Lit(lit) => self.literal(lit, self.types.scalar(id)),
            ExprKind::Local(local) => self.name(*local).to_string(),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
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
                    UnOp::Not => format!("(~{inner})"),
                }
            }
            ExprKind::Cast { expr, to } => {
                let from = self.types.scalar(*expr);
                let inner = self.expr(*expr);
                self.cast(inner, from, *to)
            }
            ExprKind::Index { base, index } => {
                let checked = self.checked_index(*base, *index, self.kernel.expr(id).span);
                let base = self.expr(*base);
                format!("{base}[{checked}]")
            }
            ExprKind::Len(base) => self.length_of(*base),
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } => {
                let scalar = self.types.scalar(*receiver);
                let method = methods::lookup(method, scalar).expect("checked method");
                let mut call_args = vec![strip_outer_parens(&self.expr(*receiver)).to_string()];
                for arg in args {
                    call_args.push(strip_outer_parens(&self.expr(*arg)).to_string());
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
                let mut code_args = Vec::new();
                for arg in args {
                    match (self.types.expr(*arg), &kernel.expr(*arg).kind) {
                        (Ty::Shared { len: Some(len), .. }, ExprKind::Local(local)) => {
                            code_args.push(self.name(*local).to_string());
                            code_args.push(len.cuda());
                        }
                        (Ty::Slice { .. } | Ty::Shared { .. }, ExprKind::Local(local)) => {
                            code_args.push(self.name(*local).to_string());
                            code_args.push(self.len_name(*local).to_string());
                        }
                        _ => code_args.push(strip_outer_parens(&self.expr(*arg)).to_string()),
                    }
                }
                // Template arguments always explicit: deduction cannot see through a result
                // type or an `f16` the caller converts.
                let template = match self.types.calls.get(&id) {
                    Some(generic_args) => {
                        let written: Vec<String> = generic_args
                            .iter()
                            .filter_map(|arg| match arg {
                                GenericArg::Type(scalar) => Some(cuda_type(*scalar).to_string()),
                                GenericArg::Const(len) => Some(len.cuda()),
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
                format!("{name}{template}({})", code_args.join(", "))
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
            ExprKind::Axis { base, axis } => {
                let ExprKind::Builtin(builtin) = kernel.expr(*base).kind else {
                    unreachable!("checked: axes are read from builtins");
                };
                builtin.cuda(axis.name())
            }
            ExprKind::Const { ty, name } => constant(*ty, name),
            ExprKind::GenericConst(name) => name.to_string(),
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
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayList { .. }
            | ExprKind::Match { .. } => {
                unreachable!("checked: constructors only initialise a `let`")
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let cond = self.expr(*cond);
                let then_value = self.expr(*then_value);
                let else_value = self.expr(*else_value);
                format!("({cond} ? {then_value} : {else_value})")
            }
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> String {
        let scalar = self.types.scalar(lhs);
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
            BinOp::Add | BinOp::Sub | BinOp::Mul
                if scalar.is_signed_int() || (scalar.bound().is_some() && !scalar.is_float()) =>
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
                let amount = format!(
                    "((unsigned int)({r}) & (unsigned int)(sizeof({}) * 8 - 1))",
                    cuda_type(scalar)
                );
                format!("({l} {} {amount})", op.symbol())
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
                } else {
                    format!("({l} {} {amount})", op.symbol())
                }
            }
            _ => format!("({l} {} {r})", op.symbol()),
        }
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
                Scalar::I32 => "rs_as_i32",
                Scalar::U32 => "rs_as_u32",
                Scalar::I64 => "rs_as_i64",
                _ => "rs_as_u64",
            };
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
                Scalar::I32 => value.to_string(),
                Scalar::U32 => format!("{value}u"),
                Scalar::I64 => format!("{value}ll"),
                Scalar::U64 | Scalar::Usize => format!("{value}ull"),
                _ => unreachable!("checked: integer literal of type {scalar:?}"),
            },
            Lit::Float { digits, .. } => float_literal(digits, scalar),
        }
    }
}
