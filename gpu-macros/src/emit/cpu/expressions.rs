//! The twin's expressions: literals, operators with Rust's release semantics (wrapping,
//! checked division recorded as a kernel panic), casts, methods of numbers, calls and constants.

use super::{suffix, CpuCall, Twin};
use crate::check::FLOAT_CONSTANTS;
use crate::ir::*;
use crate::types::{GenericArg, Len, Scalar, Ty};
use std::fmt::Write;

impl Twin<'_> {
    pub(super) fn literal(&self, lit: &Lit, scalar: Scalar) -> String {
        let generic = matches!(scalar, Scalar::Generic(_));
        let scalar = self.concrete(scalar);
        // A literal of a type parameter instantiated with a half type: Rust has no suffix.
        if scalar.is_half() {
            let value = match lit {
                Lit::Int { value, .. } => format!("{value}f64"),
                Lit::Float { digits, .. } => format!("{digits}f64"),
                Lit::Bool(b) => b.to_string(),
            };
            return format!("{}::from_f64({value})", self.rust_type(scalar));
        }
        match lit {
            Lit::Bool(b) => b.to_string(),
            // A type parameter's literal may not fit a small integer it is instantiated with;
            // the CUDA code truncates it (`(T)300`), and so does `as`.
            Lit::Int { value, .. } if generic && scalar.is_small_int() => {
                format!("({value}u64 as {})", scalar.rust_name())
            }
            Lit::Int { value, .. } => format!("{value}{}", scalar.rust_name()),
            Lit::Float { digits, .. } => {
                let mut text = digits.clone();
                if !text.contains(['.', 'e', 'E']) {
                    text.push_str(".0");
                }
                format!("{text}{}", scalar.rust_name())
            }
        }
    }

    pub(super) fn expr(&mut self, id: ExprId) -> String {
        let function = self.function;
        let loc = function.expr(id).span;
        let line = loc.line();
        match &function.expr(id).kind {
            ExprKind::Lit(lit) => self.literal(lit, self.scalar_of(id)),
            ExprKind::Local(local) => self.local_name(*local),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } if matches!(self.types.expr(*operand), Ty::Struct(_)) => {
                let name = method_name(&self.types.expr(*operand).describe(), "neg");
                self.user_call(&name, &[*operand])
            }
            ExprKind::Unary { op, operand } => {
                let scalar = self.scalar_of(id);
                let inner = self.expr(*operand);
                match op {
                    UnOp::Neg if scalar.is_int() => format!("({inner}).wrapping_neg()"),
                    UnOp::Neg => format!("(-{inner})"),
                    UnOp::Not => format!("(!{inner})"),
                }
            }
            ExprKind::Cast { expr, to } => {
                let inner = self.expr(*expr);
                // Only a type parameter instantiated with `f16`/`bf16` casts a half type here
                // (the checker rejects `as` on them): through `f64`, exact for every `f16`.
                let from = self.scalar_of(*expr);
                let to_scalar = self.concrete(*to);
                let inner = if from.is_half() {
                    format!("({inner}).to_f64()")
                } else {
                    inner
                };
                if to_scalar.is_half() {
                    format!("{}::from_f64(({inner}) as f64)", self.rust_type(to_scalar))
                } else {
                    format!("(({inner}) as {})", self.rust_type(*to))
                }
            }
            ExprKind::FromBits { bits, to } => {
                let ty = self.rust_type(*to);
                let bits = self.expr(*bits);
                if matches!(to, Scalar::Generic(_)) {
                    format!("{}::cpu::from_bits::<{ty}>({bits})", self.rt)
                } else {
                    format!("{ty}::from_bits({bits})")
                }
            }
            ExprKind::Convert { expr, to } => {
                let inner = self.expr(*expr);
                if to.is_half() {
                    let from = self.scalar_of(*expr);
                    format!(
                        "{}::from_{}({inner})",
                        self.rust_type(*to),
                        from.rust_name()
                    )
                } else {
                    inner
                }
            }
            ExprKind::Index { base, .. } if self.memory_place(*base).is_some() => {
                let place = self.memory_place(id).expect("a part of memory");
                let line = self.function.expr(id).span.line();
                format!("{place}.read(__t, {line})")
            }
            // An outer constant's table: the host module's typed copy, a `&[T]`.
            ExprKind::Index { base, index }
                if matches!(self.function.expr(*base).kind,
                    ExprKind::Outer(c) if self.function.outer[c.index as usize].table) =>
            {
                let table = self.expr(*base);
                let index = self.expr(*index);
                format!("{table}[__gpu_idx({index}, {table}.len(), __t, {line})]")
            }
            ExprKind::Index { base, index } => match self.types.expr(*base) {
                Ty::Array { len, .. } => {
                    let base_code = self.expr(*base);
                    let index = self.array_index(*index, len, loc);
                    format!("{base_code}[{index}]")
                }
                _ => {
                    let base_code = self.expr(*base);
                    let index = self.expr(*index);
                    format!("{base_code}.get({index}, __t, {line})")
                }
            },
            ExprKind::Len(base)
                if matches!(self.types.expr(*base), Ty::Struct(_) | Ty::Enum(_)) =>
            {
                let name = method_name(&self.types.expr(*base).describe(), "len");
                self.user_call(&name, &[*base])
            }
            ExprKind::Len(base) => match self.types.expr(*base) {
                Ty::Array {
                    len: Len::Known(n), ..
                } => format!("{n}usize"),
                _ => format!("{}.len()", self.expr(*base)),
            },
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
            } => self.method(*receiver, method, args),
            ExprKind::Builtin(_) => unreachable!("checked: builtins are read through an axis"),
            ExprKind::Field { base, name, .. } => self.field(id, *base, name),
            ExprKind::StructLit { ty, fields } => self.struct_literal(Ty::Struct(*ty), fields),
            ExprKind::AssocCall { ty, name, args, .. } => {
                self.user_call(&method_name(&ty.describe(), name), args)
            }
            ExprKind::Variant { ty, name } => {
                let value = ty.0.variant(name).expect("checked: the variant exists");
                format!("{value}{}", self.rust_type(ty.0.repr))
            }
            ExprKind::Ref { expr, mutable } => {
                let inner = self.expr(*expr);
                if *mutable {
                    format!("&mut {inner}")
                } else {
                    format!("&{inner}")
                }
            }
            // A loop's copy of an element is the value itself.
            ExprKind::Deref(inner) if matches!(self.function.expr(*inner).kind, ExprKind::Local(l) if self.function.local(l).element) => {
                self.expr(*inner)
            }
            ExprKind::Deref(inner) => format!("(*{})", self.expr(*inner)),
            ExprKind::SubSlice {
                base,
                start,
                end,
                inclusive,
                mutable,
            } => {
                let array = matches!(self.types.expr(*base), Ty::Array { .. });
                let base = self.expr(*base);
                let start = start.map_or("0usize".to_string(), |s| self.expr(s));
                let end = match end {
                    Some(end) if *inclusive => format!("({} + 1)", self.expr(*end)),
                    Some(end) => self.expr(*end),
                    None => format!("{base}.len()"),
                };
                match (array, mutable) {
                    // A local array or an array field is a Rust array in the twin.
                    (true, false) => format!(
                        "{rt}::cpu::CpuSlice::part_of(&{base}[..], {start}, {end}, __t, {line})",
                        rt = self.rt
                    ),
                    (true, true) => format!(
                        "{rt}::cpu::CpuSlice::part_of_mut(&mut {base}[..], {start}, {end}, __t, {line})",
                        rt = self.rt
                    ),
                    (false, _) => format!("{base}.sub({start}, {end}, {mutable}, __t, {line})"),
                }
            }
            ExprKind::Tuple { elems } => {
                let elems: Vec<String> = elems.iter().map(|e| self.expr(*e)).collect();
                format!("({})", elems.join(", "))
            }
            ExprKind::Call { name, args, .. } => {
                let mut all = Vec::new();
                let mut substitution = Vec::new();
                for (i, arg) in self.types.calls.get(&id).into_iter().flatten().enumerate() {
                    match arg {
                        GenericArg::Type(scalar) => {
                            substitution.push((i as u8, self.concrete(*scalar)));
                        }
                        GenericArg::Const(Len::Known(n)) => all.push(format!("{n}usize")),
                        GenericArg::Const(Len::Param(name)) => all.push(name.to_string()),
                        GenericArg::Const(len @ Len::Expr(_)) => all.push(len.rust()),
                        GenericArg::Bool(value) => all.push(value.rust()),
                        // Rust infers the closure's type from the argument.
                        GenericArg::Closure => {}
                    }
                }
                let twin_name = format!("{name}{}", suffix(&substitution));
                let code = self.call_named(name, &twin_name, all, args);
                self.wanted.push((name.clone(), substitution));
                code
            }
            ExprKind::TupleField { base, index } => format!("{}.{index}", self.expr(*base)),
            ExprKind::Const { ty, name } => self.constant(*ty, name),
            ExprKind::GenericConst(name) => name.to_string(),
            ExprKind::Outer(constant) => constant.twin(),
            ExprKind::Closure { params, body, .. } => {
                // `move` copies the captures, `__t` (a reference) among them, so intrinsics in
                // the body reach the thread's context.
                let params: Vec<String> = params
                    .iter()
                    .map(|p| {
                        let ty = match self.types.local(*p) {
                            Ty::Scalar(s) => self.rust_type(s),
                            other => unreachable!(
                                "checked: closure parameters are scalars, found {other:?}"
                            ),
                        };
                        format!("{}: {ty}", function.local(*p).name)
                    })
                    .collect();
                let ret = match self.types.closure_rets.get(&id) {
                    Some(Ty::Scalar(s)) => format!(" -> {}", self.rust_type(*s)),
                    _ => String::new(),
                };
                let body = self.block(body);
                format!("(move |{}|{ret} {body})", params.join(", "))
            }
            ExprKind::CallClosure { callee, args } => {
                let callee = self.expr(*callee);
                let args: Vec<String> = args.iter().map(|a| self.expr(*a)).collect();
                format!("({callee})({})", args.join(", "))
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.expr(*cond),
                self.expr(*then_value),
                self.expr(*else_value)
            ),
            ExprKind::Intrinsic { op, args } => {
                self.needs_sync |= op.synchronizes();
                let mut call = CpuCall {
                    twin: self,
                    args,
                    line,
                };
                op.cpu(&mut call)
            }
            ExprKind::SharedArray { elem, len } => {
                // Each instantiation of a generic device function has its own array, as each
                // C++ template instance has; the kernel's bodies are alternatives and share.
                let instance = if self.index == 0 {
                    Vec::new()
                } else {
                    self.subst.to_vec()
                };
                let slot = self
                    .slots
                    .borrow_mut()
                    .slot(self.index, id.0 as usize, instance);
                let name = self.binding.take().unwrap_or_default();
                // Rows whose length is a const generic, which the twin holds as a value and
                // so cannot put in a type: the array is held flat (`Ty::flat_rows`).
                let (elem, len) = match (self.types.expr(id).flat_rows(), elem) {
                    (Some(row), Ty::Array { elem, .. }) => {
                        (*elem, format!("({}) * ({})", len.rust(), row.rust()))
                    }
                    _ => (elem, len.rust()),
                };
                format!(
                    "__t.shared_array_named::<{}>({slot}, {len}, {name:?})",
                    self.rust_ty(*elem)
                )
            }
            ExprKind::DynamicShared { elem } => {
                format!("__t.dynamic_shared::<{}>()", self.rust_ty(*elem))
            }
            ExprKind::ArrayRepeat { value, len } => match len {
                Len::Known(n) => format!("[{}; {n}]", self.expr(*value)),
                // A length known only at launch: on the heap, indexed the same way.
                Len::Param(name) => format!("vec![{}; {name}]", self.expr(*value)),
                Len::Expr(_) if len.needs_instantiation() => {
                    format!("vec![{}; {}]", self.expr(*value), len.rust())
                }
                Len::Expr(_) => format!("[{}; {}]", self.expr(*value), len.rust()),
            },
            ExprKind::ArrayList { elems } => {
                let items: Vec<String> = elems.iter().map(|e| self.expr(*e)).collect();
                format!("[{}]", items.join(", "))
            }
            ExprKind::Match { scrutinee, arms } => {
                let catch_all = self.enum_catch_all(*scrutinee, arms.iter().map(|(p, _)| p));
                let scrutinee = self.expr(*scrutinee);
                let mut code = format!("match {scrutinee} {{ ");
                for (i, (patterns, value)) in arms.iter().enumerate() {
                    let pattern = if Some(i) == catch_all {
                        "_".to_string()
                    } else {
                        self.patterns(patterns)
                    };
                    let _ = write!(code, "{pattern} => {}, ", self.expr(*value));
                }
                code.push('}');
                code
            }
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> String {
        if let user @ (Ty::Struct(_) | Ty::Enum(_)) = self.types.expr(lhs) {
            return self.user_binary(op, lhs, rhs, user);
        }
        // `==` / `!=` of arrays and tuples: Rust's own.
        if let Ty::Array { .. } | Ty::Tuple(_) = self.types.expr(lhs) {
            let (l, r) = (self.expr(lhs), self.expr(rhs));
            return format!("({l} {} {r})", op.symbol());
        }
        let scalar = self.scalar_of(lhs);
        let line = self.function.expr(rhs).span.line();
        let l = self.expr(lhs);
        let r = self.expr(rhs);
        if scalar.is_int() {
            let method = match op {
                BinOp::Add => Some("wrapping_add"),
                BinOp::Sub => Some("wrapping_sub"),
                BinOp::Mul => Some("wrapping_mul"),
                _ => None,
            };
            if let Some(method) = method {
                return format!("({l}).{method}({r})");
            }
            match op {
                BinOp::Div | BinOp::Rem => {
                    let (checked, wrapping) = if op == BinOp::Div {
                        ("checked_div", "wrapping_div")
                    } else {
                        ("checked_rem", "wrapping_rem")
                    };
                    return format!(
                        "{{ let (__a, __b) = ({l}, {r}); if __b == 0 {{ __t.fail(2, {line}, __a as u64, 0); 0 }} \
                         else {{ if __a.{checked}(__b).is_none() {{ __t.fail(3, {line}, __a as u64, __b as u64); }} \
                         __a.{wrapping}(__b) }} }}"
                    );
                }
                BinOp::Shl => return format!("({l}).wrapping_shl(({r}) as u32)"),
                BinOp::Shr => return format!("({l}).wrapping_shr(({r}) as u32)"),
                _ => {}
            }
        }
        format!("({l} {} {r})", op.symbol())
    }

    pub(super) fn method(&mut self, receiver: ExprId, method: &str, args: &[ExprId]) -> String {
        let written = self.types.scalar(receiver);
        let generic = matches!(written, Scalar::Generic(_));
        let scalar = self.scalar_of(receiver);
        let r = self.expr(receiver);
        let args: Vec<String> = args.iter().map(|a| self.expr(*a)).collect();
        let entry = crate::methods::lookup(method, written);
        // Rust panics at a logarithm of a value below 1: reported as the GPU's checked mode
        // reports it (kind 5), 0 in its place.
        if matches!(method, "ilog2" | "ilog10") && !generic {
            let line = self.function.expr(receiver).span.line();
            return format!(
                "{{ let __v = {r}; if __v <= 0 {{ __t.fail(5, {line}, 0, 0); 0 }} else {{ \
                 __v.{method}() }} }}"
            );
        }
        if let (true, true, Some(entry)) = (generic && method != "to_bits", scalar.is_half(), entry)
        {
            // The `half` types lack the float methods: a type parameter instantiated with one
            // computes in `f32` and rounds back, as the CUDA code does.
            let r = format!("({r}).to_f32()");
            let args: Vec<String> = args
                .iter()
                .zip(entry.args)
                .map(|(arg, ty)| match ty {
                    crate::methods::ArgTy::Same => format!("({arg}).to_f32()"),
                    crate::methods::ArgTy::I32 | crate::methods::ArgTy::U32 => arg.clone(),
                })
                .collect();
            let code = self.method_code(method, r, &args, Scalar::F32, false);
            return match entry.ret {
                crate::methods::RetTy::Same => {
                    format!("{}::from_f32({code})", self.rust_type(scalar))
                }
                crate::methods::RetTy::Bool
                | crate::methods::RetTy::U32
                | crate::methods::RetTy::F32
                | crate::methods::RetTy::F64
                | crate::methods::RetTy::Bits
                | crate::methods::RetTy::U64
                | crate::methods::RetTy::Unsigned => code,
            };
        }
        self.method_code(method, r, &args, scalar, generic)
    }

    /// A method call on a receiver of the concrete `scalar`, its code `r` and `args` written.
    pub(super) fn method_code(
        &self,
        method: &str,
        r: String,
        args: &[String],
        scalar: Scalar,
        generic: bool,
    ) -> String {
        let ty = self.rust_type(scalar);
        match method {
            // Not the concrete type's own `to_bits`: a type parameter's are always a `u64`.
            "to_bits" if generic => format!("{}::cpu::to_bits::<{ty}>({r})", self.rt),
            "abs" if scalar.is_int() => format!("({r}).wrapping_abs()"),
            // Release Rust: `MIN.rem_euclid(-1)` wraps to 0 and an overflowing power of two is
            // 0; a zero divisor still panics.
            "rem_euclid" if scalar.is_int() => format!("({r}).wrapping_rem_euclid({})", args[0]),
            "div_euclid" if scalar.is_int() => format!("({r}).wrapping_div_euclid({})", args[0]),
            "next_power_of_two" => format!("({r}).checked_next_power_of_two().unwrap_or(0)"),
            "next_multiple_of" => format!(
                "{{ let (__a, __b) = ({r}, {}); match __a % __b {{ 0 => __a, __r => \
                 __a.wrapping_add(__b - __r) }} }}",
                args[0]
            ),
            "pow" => format!("({r}).wrapping_pow({})", args[0]),
            "clamp" => format!(
                "{{ let (__v, __lo, __hi) = ({r}, {}, {}); if __v < __lo {{ __lo }} else if __v > __hi {{ __hi }} else {{ __v }} }}",
                args[0], args[1]
            ),
            "rsqrt" => format!("(1.0 as {ty} / ({r}).sqrt())"),
            "fast_div" => format!("({r} / {})", args[0]),
            "fast_exp10" => format!("(10.0f32).powf({r})"),
            name if name.starts_with("fast_") => {
                let std_name = match &name["fast_".len()..] {
                    "exp" => "exp",
                    "ln" => "ln",
                    "log2" => "log2",
                    "log10" => "log10",
                    "sin" => "sin",
                    "cos" => "cos",
                    "tan" => "tan",
                    "tanh" => "tanh",
                    "powf" => "powf",
                    other => unreachable!("checked fast method {other}"),
                };
                format!("({r}).{std_name}({})", args.join(", "))
            }
            _ => format!("({r}).{method}({})", args.join(", ")),
        }
    }

    pub(super) fn constant(&self, ty: Scalar, name: &str) -> String {
        let ty_name = self.rust_type(ty);
        let is_math_constant = ty.is_float()
            && FLOAT_CONSTANTS.contains(&name)
            && !matches!(
                name,
                "MAX" | "MIN" | "MIN_POSITIVE" | "EPSILON" | "INFINITY" | "NEG_INFINITY" | "NAN"
            );
        if is_math_constant {
            format!("::core::{ty_name}::consts::{name}")
        } else {
            format!("{ty_name}::{name}")
        }
    }
}
