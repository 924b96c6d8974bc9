//! Calls: methods, the number types' associated functions, index and storage functions,
//! intrinsics (their argument shapes read from `intrinsics/`) and `#[device]` functions.

use super::Parser;
use crate::intrinsics::{Arg, Arity, Builtin, Op, Signature};
use crate::ir::*;
use crate::types::{BoolArg, GenericArg, Scalar, Ty};
use quote::ToTokens;
use syn::spanned::Spanned;

impl Parser<'_> {
    pub(super) fn method_call(&mut self, call: &syn::ExprMethodCall) -> Option<ExprKind> {
        if matches!(call.method.to_string().as_str(), "sum" | "product") && call.args.is_empty() {
            self.cx.error_spanned_by(
                call,
                format!(
                    "`{0}` consumes what a `for` loop walks (`x.iter()`, `x[a..b].iter()`, a \
                     range, `.zip(..)`, `.enumerate()`), after `.copied()`, `.map(..)` or \
                     `.filter(..)`: write the loop for anything else",
                    call.method
                ),
            );
            return None;
        }
        if matches!(
            call.method.to_string().as_str(),
            "to_le_bytes" | "to_be_bytes" | "to_ne_bytes"
        ) {
            self.cx.error_spanned_by(
                &call.method,
                format!(
                    "in kernels `{}` gives its bytes to a destructuring `let`, one name a byte: \
                     `let [b0, b1, b2, b3] = x.{0}();`",
                    call.method
                ),
            );
            return None;
        }
        if matches!(
            call.method.to_string().as_str(),
            "max_by" | "min_by" | "max_by_key" | "min_by_key"
        ) {
            self.cx.error_spanned_by(
                &call.method,
                format!(
                    "{}, over a range or a slice's `iter()` and unwrapped at once \
                     (`.unwrap()`, `.unwrap_or(v)`)",
                    super::ordering::USAGE
                ),
            );
            return None;
        }
        if call.method == "reduce" {
            self.cx.error_spanned_by(
                &call.method,
                "`reduce` takes a closure the kernel language cannot pass: for floats write \
                 `x.iter().copied().fold(f32::NEG_INFINITY, f32::max)` (or `f32::INFINITY, \
                 f32::min`), for integers `x.iter().max().unwrap()`, or a `for` loop that keeps \
                 the best element",
            );
            return None;
        }
        if let Some(turbofish) = &call.turbofish {
            self.cx.error_spanned_by(
                turbofish,
                "generic arguments on methods are not supported in kernels",
            );
            return None;
        }
        let method = call.method.to_string();
        if method == "step_by" {
            self.cx.error_spanned_by(
                call,
                "`step_by` is only supported as the iterator of a `for` loop: `for i in (a..b).step_by(s)`",
            );
            return None;
        }
        if method == "sin_cos" && call.args.is_empty() {
            return self.sin_cos(call);
        }
        let receiver = self.expr(&call.receiver);
        let args: Vec<Option<ExprId>> = call.args.iter().map(|arg| self.expr(arg)).collect();
        let receiver = receiver?;
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        if method == "len" && args.is_empty() {
            self.note_table(receiver);
            return Some(ExprKind::Len(receiver));
        }
        if let Some(op) = Op::method(&method, args.len()) {
            if !self.arity(&op.signature(), args.len() + 1, call) {
                return None;
            }
            let args = std::iter::once(receiver).chain(args).collect();
            return Some(ExprKind::Intrinsic { op, args });
        }
        Some(ExprKind::Method {
            receiver,
            method,
            method_span: Loc::of(&call.method),
            args,
            receiver_ty: None,
        })
    }

    /// `x.sin_cos()`: `(x.sin(), x.cos())`, as Rust defines it (and CUDA computes the pair in
    /// one `sincosf`). The receiver is read twice, so it must be free of effects.
    /// A receiver that may have effects (`(TAU * rng.uniform()).sin_cos()`, a `&mut self`
    /// method) is computed once into a hidden variable before the statement, where that is
    /// where Rust computes it.
    fn sin_cos(&mut self, call: &syn::ExprMethodCall) -> Option<ExprKind> {
        let hidden = if is_plain_value(&call.receiver) {
            None
        } else if self.lift {
            Some(self.hidden_value(&call.receiver, None)?)
        } else {
            self.cx.error_spanned_by(
                &call.receiver,
                "`sin_cos` reads its receiver twice, and this one may have effects (a method \
                 of your own) or runs where it cannot be computed first: bind it with `let` \
                 first",
            );
            return None;
        };
        let span = Loc::of(call);
        let mut elems = Vec::new();
        for name in ["sin", "cos"] {
            let receiver = match hidden {
                Some(value) => value,
                None => self.expr(&call.receiver)?,
            };
            elems.push(self.push_expr(
                ExprKind::Method {
                    receiver,
                    method: name.to_string(),
                    method_span: Loc::of(&call.method),
                    args: Vec::new(),
                    receiver_ty: None,
                },
                span,
            ));
        }
        Some(ExprKind::Tuple { elems })
    }

    pub(super) fn call(&mut self, call: &syn::ExprCall) -> Option<ExprKind> {
        if let Some(kind) = self.closure_call(call)? {
            return Some(kind);
        }
        let path = match &*call.func {
            syn::Expr::Path(path) if path.qself.is_none() => &path.path,
            other => {
                self.cx
                    .error_spanned_by(other, "only named functions can be called in kernels");
                return None;
            }
        };
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [name] = segments.as_slice() {
            if let Some(instead) = super::signature::std_type_instead(name) {
                self.cx.error_spanned_by(
                    path,
                    format!("`{name}` is not available in kernels: {instead}"),
                );
                return None;
            }
        }
        if let Some(literal) = self.tuple_struct(path, &call.args) {
            return literal;
        }
        if let [.., module, "swap"] = segments.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            if module == "mem" {
                self.cx.error_spanned_by(
                    path,
                    "`mem::swap` exchanges two variables as a statement: \
                     `core::mem::swap(&mut a, &mut b);`",
                );
                return None;
            }
        }
        // `f32::from_bits(u)`: a float from its bits; `T::from_bits(u)`: a type parameter's
        // value from the low bits of a `u64`.
        if let [.., ty, method] = segments.as_slice() {
            let generic = self.generic_type(ty).map(Scalar::Generic);
            if let (Some(to @ (Scalar::F32 | Scalar::F64 | Scalar::Generic(_))), "from_bits") =
                (generic.or(Scalar::from_rust_name(ty)), method.as_str())
            {
                let [arg] = call.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::from_bits` takes one argument"));
                    return None;
                };
                return Some(ExprKind::FromBits {
                    bits: self.expr(arg)?,
                    to,
                });
            }
        }
        // `f16::from_f32(x)`: the half crate's explicit conversions.
        if let [.., ty, method] = segments.as_slice() {
            if let (Some(to @ (Scalar::F16 | Scalar::Bf16)), "from_f32" | "from_f64") =
                (Scalar::from_rust_name(ty), method.as_str())
            {
                let [arg] = call.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::{method}` takes one argument"));
                    return None;
                };
                let arg = self.expr(arg)?;
                let from = if method == "from_f32" {
                    Scalar::F32
                } else {
                    Scalar::F64
                };
                // The argument's type is checked as a cast from `from`.
                let typed = self.push_expr(
                    ExprKind::Convert {
                        expr: arg,
                        to: from,
                    },
                    Loc::of(&call.args),
                );
                return Some(ExprKind::Convert { expr: typed, to });
            }
        }
        // `std::cmp::min(a, b)` (or `core::`, `cmp::`): `a.min(b)`.
        if let [.., module, function] = segments.as_slice() {
            if module == "cmp" && matches!(function.as_str(), "min" | "max") {
                let [a, b] = call.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx
                        .error_spanned_by(call, format!("`cmp::{function}` takes two arguments"));
                    return None;
                };
                let (a, b) = (self.expr(a), self.expr(b));
                return Some(ExprKind::Method {
                    receiver: a?,
                    method: function.clone(),
                    method_span: Loc::of(path),
                    args: vec![b?],
                    receiver_ty: None,
                });
            }
        }
        // `u64::from(x)`: Rust's lossless conversion, a cast where the checker finds the
        // `From` (`parse` records it); `try_from` returns a `Result`, which kernels lack.
        if let [ty, method] = segments.as_slice() {
            let to = Scalar::from_rust_name(ty).filter(|s| !s.is_half());
            if let (Some(to), "from", 1) = (to, method.as_str(), call.args.len()) {
                let value = self.expr(&call.args[0])?;
                self.conversions.push((value, to, Loc::of(call)));
                return Some(ExprKind::Cast { expr: value, to });
            }
            if Scalar::from_rust_name(ty).is_some()
                && matches!(method.as_str(), "from" | "try_from")
            {
                let hint = if method == "from" {
                    format!("write `x as {ty}`, which is the same where `{ty}::from(x)` exists")
                } else {
                    format!("compare with `{ty}::MIN` and `{ty}::MAX`, then write `x as {ty}`")
                };
                self.cx.error_spanned_by(
                    call,
                    format!("`{ty}::{method}` is not available in kernels: {hint}"),
                );
                return None;
            }
        }
        // `f32::sqrt(x)` and `f32::max(a, b)` are the method forms written as paths.
        if let [ty, method] = segments.as_slice() {
            if Scalar::from_rust_name(ty).is_some() {
                let mut args = call.args.iter();
                let Some(first) = args.next() else {
                    self.cx
                        .error_spanned_by(call, format!("`{ty}::{method}` needs an argument"));
                    return None;
                };
                let receiver = self.expr(first);
                let rest: Vec<Option<ExprId>> = args.map(|arg| self.expr(arg)).collect();
                let receiver = receiver?;
                let rest = rest.into_iter().collect::<Option<Vec<_>>>()?;
                return Some(ExprKind::Method {
                    receiver,
                    method: method.clone(),
                    method_span: Loc::of(path),
                    args: rest,
                    // The path names the receiver's type, as `x.sqrt()` would infer it.
                    receiver_ty: Scalar::from_rust_name(ty),
                });
            }
        }
        // `Body::new(..)`: an associated function of a `#[device]` type.
        if let Some(kind) = self.assoc_path(path, Some(&call.args))? {
            return Some(kind);
        }
        let name = segments.last().cloned().unwrap_or_default();
        if let Some(builtin) = Builtin::ALL.into_iter().find(|b| b.rust_name() == name) {
            if !call.args.is_empty() {
                self.cx
                    .error_spanned_by(&call.args, format!("`{name}()` takes no arguments"));
                return None;
            }
            return Some(ExprKind::Builtin(builtin));
        }
        if let Some(kind) = self.intrinsic_call(&name, path, call)? {
            return Some(kind);
        }
        // Anything else must be a `#[device]` function: its definition is fetched by path.
        let args: Vec<Option<ExprId>> = call.args.iter().map(|arg| self.expr(arg)).collect();
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        let last = path.segments.last()?;
        let mut modules = path.segments.iter().take(path.segments.len() - 1);
        if let Some(segment) = modules.find(|s| !s.arguments.is_none()) {
            self.cx.error_spanned_by(
                segment,
                "generic arguments go on the function's own name: `module::f::<f32>(x)`",
            );
            return None;
        }
        let turbofish = match &last.arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(written) => written
                .args
                .iter()
                .map(|arg| self.generic_arg(arg))
                .collect::<Option<Vec<_>>>()?,
            syn::PathArguments::Parenthesized(written) => {
                self.cx.error_spanned_by(
                    written,
                    "write a device function's generic arguments as `f::<f32>(x)`",
                );
                return None;
            }
        };
        // The macro that hands over the definition is named without the generic arguments.
        let mut bare = path.clone();
        if let Some(segment) = bare.segments.last_mut() {
            segment.arguments = syn::PathArguments::None;
        }
        Some(ExprKind::Call {
            name,
            path: bare.to_token_stream(),
            args,
            turbofish,
        })
    }

    /// One argument of `f::<..>`: a type, a constant (`4`, `N`, `{ 2 * 8 }`), or `_` (`None`)
    /// to leave it to the arguments.
    fn generic_arg(&mut self, arg: &syn::GenericArgument) -> Option<Option<GenericArg>> {
        match arg {
            syn::GenericArgument::Type(syn::Type::Infer(_)) => Some(None),
            syn::GenericArgument::Type(ty) => {
                // `N` parses as a type whether it names a type or a constant.
                let names_constant = match ty {
                    syn::Type::Path(path) if path.qself.is_none() => {
                        path.path.get_ident().is_some_and(|ident| {
                            let name = ident.to_string();
                            self.generic_const(&name).is_some()
                                || self
                                    .lookup(&name)
                                    .is_some_and(|local| self.consts.contains_key(&local))
                        })
                    }
                    _ => false,
                };
                let bool_param = match ty {
                    syn::Type::Path(path) => path
                        .path
                        .get_ident()
                        .and_then(|ident| self.generic_const_typed(&ident.to_string()))
                        .filter(|(_, ty)| *ty == Scalar::Bool),
                    _ => None,
                };
                if let Some((name, _)) = bool_param {
                    Some(Some(GenericArg::Bool(BoolArg::Param(name))))
                } else if names_constant {
                    Some(Some(GenericArg::Const(self.device_const_arg(arg)?)))
                } else {
                    Some(Some(GenericArg::Type(self.scalar_type(ty)?)))
                }
            }
            // `f::<true>` for a `const B: bool`.
            syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(value),
                ..
            })) => Some(Some(GenericArg::Bool(BoolArg::Known(value.value)))),
            syn::GenericArgument::Const(_) => {
                Some(Some(GenericArg::Const(self.device_const_arg(arg)?)))
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "a device function's generic arguments are types (`f32`, `T`) and constants (`4`, `N`)",
                );
                None
            }
        }
    }

    /// A call of a GPU intrinsic, `Some(None)` if `name` is not one.
    fn intrinsic_call(
        &mut self,
        name: &str,
        path: &syn::Path,
        call: &syn::ExprCall,
    ) -> Option<Option<ExprKind>> {
        let op = Op::function(name);
        // Decided before the arguments are parsed: the caller parses a device function's, and
        // parsing them here too would add each to the arena twice (four times a level deeper).
        if op.is_none() && !matches!(name, "shared_array" | "dynamic_shared") {
            return Some(None);
        }
        let generics: Vec<&syn::GenericArgument> = match &path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().collect(),
            _ => Vec::new(),
        };
        let signature = op.map(Op::signature);
        // The arguments the call updates in place, written `&mut acc`.
        let by_mut_ref = |i: usize| {
            signature.as_ref().is_some_and(|signature| {
                matches!(
                    signature.args.get(i),
                    Some(Arg::Fragment {
                        by_mut_ref: true,
                        ..
                    })
                )
            })
        };
        let args: Vec<Option<ExprId>> = call
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| match arg {
                syn::Expr::Reference(r) if by_mut_ref(i) && r.mutability.is_some() => {
                    self.expr(&r.expr)
                }
                _ => self.expr(arg),
            })
            .collect();
        let args = args.into_iter().collect::<Option<Vec<_>>>()?;
        for (i, arg) in call.args.iter().enumerate() {
            if by_mut_ref(i) && !matches!(arg, syn::Expr::Reference(r) if r.mutability.is_some()) {
                self.cx.error_spanned_by(
                    arg,
                    format!("`{name}` takes the accumulator array as `&mut acc`"),
                );
                return None;
            }
        }
        let kind = match (op, signature) {
            (Some(op), Some(signature)) => {
                if !self.arity(&signature, args.len(), call) {
                    return None;
                }
                ExprKind::Intrinsic { op, args }
            }
            (None, _) if name == "shared_array" => {
                let [syn::GenericArgument::Type(elem), len] = generics.as_slice() else {
                    self.cx.error_spanned_by(
                        path,
                        "write `shared_array::<T, N>()`: the element type and the length",
                    );
                    return None;
                };
                let elem = self.value_type(elem)?;
                let len = self.generic_length(len)?;
                ExprKind::SharedArray { elem, len }
            }
            (None, _) if name == "dynamic_shared" => {
                let [syn::GenericArgument::Type(elem)] = generics.as_slice() else {
                    self.cx.error_spanned_by(
                        path,
                        "write `dynamic_shared::<T>()`: its length comes from the launch's shared memory size",
                    );
                    return None;
                };
                ExprKind::DynamicShared {
                    elem: Ty::Scalar(self.scalar_type(elem)?),
                }
            }
            _ => return Some(None),
        };
        if !matches!(
            kind,
            ExprKind::SharedArray { .. } | ExprKind::DynamicShared { .. }
        ) && !generics.is_empty()
        {
            self.cx
                .error_spanned_by(path, format!("`{name}` takes no generic arguments"));
            return None;
        }
        if matches!(
            kind,
            ExprKind::SharedArray { .. } | ExprKind::DynamicShared { .. }
        ) && !call.args.is_empty()
        {
            self.cx
                .error_spanned_by(&call.args, format!("`{name}` takes no arguments"));
            return None;
        }
        Some(Some(kind))
    }

    /// Whether an intrinsic whose arguments the parser counts got `count` of them, reporting
    /// its usage if not.
    fn arity(&self, signature: &Signature, count: usize, call: &impl ToTokens) -> bool {
        match &signature.arity {
            Arity::Usage(usage) if count != signature.args.len() => {
                self.cx.error_spanned_by(call, usage);
                false
            }
            Arity::Usage(_) | Arity::Counted => true,
        }
    }
}

/// `u32::from_le_bytes([r, g, b, a])` as the integer the bytes make, the first lowest
/// (`from_be_bytes`: highest): `(r as u32) | (g as u32) << 8 | ..`; an argument that is no
/// array literal of plain values is bound first.
pub(super) fn from_bytes(call: &syn::ExprCall) -> Option<syn::Expr> {
    let syn::Expr::Path(path) = super::strip_parens(&call.func) else {
        return None;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let [ty, method] = segments.as_slice() else {
        return None;
    };
    let int = Scalar::from_rust_name(ty).filter(|s| s.is_int() && !s.is_small_int())?;
    let big_endian = match method.as_str() {
        "from_le_bytes" | "from_ne_bytes" => false,
        "from_be_bytes" => true,
        _ => return None,
    };
    if call.args.len() != 1 {
        return None;
    }
    let count = (int.bits() / 8) as usize;
    let ty = &path.path.segments[0].ident;
    let arg = &call.args[0];
    let literal = match super::strip_parens(arg) {
        syn::Expr::Array(array)
            if array.elems.len() == count && array.elems.iter().all(is_plain_value) =>
        {
            Some(array.elems.iter().cloned().collect::<Vec<_>>())
        }
        _ => None,
    };
    let bytes: Vec<syn::Expr> = match &literal {
        Some(elems) => elems.clone(),
        None => (0..count)
            .map(|k| syn::parse_quote!(__gpu_bytes[#k]))
            .collect(),
    };
    let terms = bytes.iter().enumerate().map(|(k, byte)| {
        let shift = (8 * if big_endian { count - 1 - k } else { k }) as u32;
        quote::quote!(((#byte) as #ty) << #shift)
    });
    let value = quote::quote!((#(#terms)|*));
    Some(match literal {
        Some(_) => syn::parse_quote!(#value),
        None => syn::parse_quote!({ let __gpu_bytes: [u8; #count] = #arg; #value }),
    })
}

/// The range whose `contains` `call` is: `(a..b).contains(&x)`.
pub(super) fn range_contains(call: &syn::ExprMethodCall) -> Option<&syn::ExprRange> {
    if call.method != "contains" || call.args.len() != 1 {
        return None;
    }
    match super::strip_parens(&call.receiver) {
        syn::Expr::Range(range) if range.start.is_some() || range.end.is_some() => Some(range),
        _ => None,
    }
}

impl Parser<'_> {
    /// `(a..b).contains(&x)`, which clippy asks for instead of `a <= x && x < b`: that
    /// comparison (`x <= b` for `a..=b`; one side for `a..` and `..b`), so `x` is read twice.
    pub(super) fn contains(
        &mut self,
        call: &syn::ExprMethodCall,
        range: &syn::ExprRange,
    ) -> Option<ExprId> {
        let item = match super::strip_parens(&call.args[0]) {
            syn::Expr::Reference(reference) => &*reference.expr,
            other => other,
        };
        if !is_plain_value(item) {
            self.cx.error_spanned_by(
                item,
                "`contains` compares this value with both ends of the range, so it is read \
                 twice: bind it with `let` first",
            );
            return None;
        }
        let at = call.method.span();
        let lower = range
            .start
            .as_ref()
            .map(|start| quote::quote_spanned!(at=> (#start) <= (#item)));
        let upper = range.end.as_ref().map(|end| match range.limits {
            syn::RangeLimits::HalfOpen(_) => quote::quote_spanned!(at=> (#item) < (#end)),
            syn::RangeLimits::Closed(_) => quote::quote_spanned!(at=> (#item) <= (#end)),
        });
        let test: syn::Expr = match (lower, upper) {
            (Some(lower), Some(upper)) => syn::parse_quote_spanned!(at=> (#lower && #upper)),
            (Some(one), None) | (None, Some(one)) => syn::parse_quote_spanned!(at=> (#one)),
            (None, None) => unreachable!("range_contains takes ranges with an end"),
        };
        self.expr(&test)
    }

    /// `matches!(value, pattern)` (literals, ranges, constants, enum variants, `_` and `|` of
    /// them, as `match` takes them, and an `if` guard): the comparisons of `value` (read once
    /// per comparison) with each pattern, or'd, and the guard.
    pub(super) fn matches_macro(&mut self, mac: &syn::Macro) -> Option<ExprId> {
        struct Matches {
            value: syn::Expr,
            pat: syn::Pat,
            guard: Option<syn::Expr>,
        }
        impl syn::parse::Parse for Matches {
            fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
                let value = input.parse()?;
                input.parse::<syn::Token![,]>()?;
                let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                let guard = if input.parse::<Option<syn::Token![if]>>()?.is_some() {
                    Some(input.parse()?)
                } else {
                    None
                };
                input.parse::<Option<syn::Token![,]>>()?;
                Ok(Matches { value, pat, guard })
            }
        }
        let Matches { value, pat, guard } = match mac.parse_body::<Matches>() {
            Ok(parsed) => parsed,
            Err(err) => {
                self.cx.error_spanned_by(
                    mac,
                    format!(
                        "write `matches!(value, pattern)` or `matches!(value, pattern if \
                         condition)`: {err}"
                    ),
                );
                return None;
            }
        };
        if !is_plain_value(&value) {
            self.cx.error_spanned_by(
                &value,
                "`matches!` compares this value with each pattern, so it is read more than \
                 once: bind it with `let` first",
            );
            return None;
        }
        let cases: Vec<syn::Pat> = match pat {
            syn::Pat::Or(or) => or.cases.into_iter().collect(),
            other => vec![other],
        };
        let mut tests = Vec::new();
        for case in &cases {
            let test = match case {
                syn::Pat::Wild(_) => quote::quote!(true),
                syn::Pat::Lit(lit) => quote::quote!((#value) == #lit),
                syn::Pat::Path(path) => quote::quote!((#value) == #path),
                syn::Pat::Ident(ident)
                    if ident.subpat.is_none()
                        && ident.by_ref.is_none()
                        && ident.mutability.is_none()
                        && super::expressions::is_constant_name(&ident.ident.to_string()) =>
                {
                    quote::quote!((#value) == #ident)
                }
                syn::Pat::Range(range) => {
                    let lower = range.start.as_ref().map(|a| quote::quote!((#value) >= #a));
                    let upper = range.end.as_ref().map(|b| match range.limits {
                        syn::RangeLimits::HalfOpen(_) => quote::quote!((#value) < #b),
                        syn::RangeLimits::Closed(_) => quote::quote!((#value) <= #b),
                    });
                    match (lower, upper) {
                        (Some(lower), Some(upper)) => quote::quote!((#lower && #upper)),
                        (Some(one), None) | (None, Some(one)) => one,
                        (None, None) => quote::quote!(true),
                    }
                }
                other => {
                    self.cx.error_spanned_by(
                        other,
                        "`matches!` patterns in kernels are literals, ranges, constants, enum \
                         variants, `_` and `|` of them (no bindings)",
                    );
                    return None;
                }
            };
            tests.push(test);
        }
        let guard = guard.map(|guard| quote::quote!(&& (#guard)));
        let rewritten: syn::Expr = syn::parse_quote_spanned! {mac.path.span()=>
            ((#(#tests)||*) #guard)
        };
        self.expr(&rewritten)
    }
}

/// Methods besides the number methods that only read: lengths, a slice's `get` and an
/// option's unwrapping, and the half types' conversions.
const PLAIN_READS: &[&str] = &[
    "len",
    "get",
    "first",
    "last",
    "copied",
    "cloned",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "is_some",
    "is_none",
    "to_f32",
    "to_f64",
];

/// Whether reading `expr` twice is the same as reading it once: names, literals, fields,
/// elements, and operators, casts and number methods over them.
pub(super) fn is_plain_value(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Path(_) | syn::Expr::Lit(_) => true,
        syn::Expr::Paren(inner) => is_plain_value(&inner.expr),
        syn::Expr::Group(inner) => is_plain_value(&inner.expr),
        syn::Expr::Field(field) => is_plain_value(&field.base),
        syn::Expr::Index(index) => is_plain_value(&index.expr) && is_plain_value(&index.index),
        syn::Expr::Binary(binary) => is_plain_value(&binary.left) && is_plain_value(&binary.right),
        syn::Expr::Unary(unary) => is_plain_value(&unary.expr),
        syn::Expr::Cast(cast) => is_plain_value(&cast.expr),
        // A method of the user's own types may have effects (a generator's `&mut self`
        // draw): only number methods and reads of a slice or option are plain.
        syn::Expr::MethodCall(call) => {
            let method = call.method.to_string();
            (PLAIN_READS.contains(&method.as_str())
                || crate::methods::METHODS.iter().any(|m| m.name == method))
                && Op::method(&method, call.args.len()).is_none()
                && is_plain_value(&call.receiver)
                && call.args.iter().all(is_plain_value)
        }
        _ => false,
    }
}
