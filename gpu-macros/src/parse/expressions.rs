//! Expressions: literals, paths, operators, indexing, fields, and the values of `if` and
//! `match`.

use super::{strip_parens, Parser};
use crate::ir::*;
use crate::types::Scalar;
use quote::ToTokens;

/// Expressions of the language that produce a value (as opposed to unsupported constructs,
/// which get their own message).
pub(super) fn is_value_expr(expr: &syn::Expr) -> bool {
    matches!(
        expr,
        syn::Expr::Lit(_)
            | syn::Expr::Path(_)
            | syn::Expr::Binary(_)
            | syn::Expr::Unary(_)
            | syn::Expr::Cast(_)
            | syn::Expr::Index(_)
            | syn::Expr::MethodCall(_)
            | syn::Expr::Call(_)
            | syn::Expr::Field(_)
            | syn::Expr::Paren(_)
            | syn::Expr::Group(_)
            | syn::Expr::Struct(_)
            | syn::Expr::Tuple(_)
            | syn::Expr::Array(_)
            | syn::Expr::Repeat(_)
    )
}

/// Whether `name` is spelled as Rust spells constants (`TILE`, `MAX_ITER`), so an unknown
/// one is a constant from outside the function rather than a misspelled variable.
/// The positive literal under a negative one (`-5` as a pattern's single token).
fn negative_literal(lit: &syn::Lit) -> Option<syn::Lit> {
    let text = lit.to_token_stream().to_string();
    let positive = text.strip_prefix('-')?;
    Some(match lit {
        syn::Lit::Int(int) => syn::Lit::Int(syn::LitInt::new(positive, int.span())),
        syn::Lit::Float(float) => syn::Lit::Float(syn::LitFloat::new(positive, float.span())),
        _ => return None,
    })
}

pub(super) fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_lowercase())
}

fn binary_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinOp::Add,
        syn::BinOp::Sub(_) => BinOp::Sub,
        syn::BinOp::Mul(_) => BinOp::Mul,
        syn::BinOp::Div(_) => BinOp::Div,
        syn::BinOp::Rem(_) => BinOp::Rem,
        syn::BinOp::And(_) => BinOp::And,
        syn::BinOp::Or(_) => BinOp::Or,
        syn::BinOp::BitXor(_) => BinOp::BitXor,
        syn::BinOp::BitAnd(_) => BinOp::BitAnd,
        syn::BinOp::BitOr(_) => BinOp::BitOr,
        syn::BinOp::Shl(_) => BinOp::Shl,
        syn::BinOp::Shr(_) => BinOp::Shr,
        syn::BinOp::Eq(_) => BinOp::Eq,
        syn::BinOp::Lt(_) => BinOp::Lt,
        syn::BinOp::Le(_) => BinOp::Le,
        syn::BinOp::Ne(_) => BinOp::Ne,
        syn::BinOp::Ge(_) => BinOp::Ge,
        syn::BinOp::Gt(_) => BinOp::Gt,
        _ => return None,
    })
}

/// The message for an expression kind outside the language.
fn unsupported_expr(expr: &syn::Expr) -> String {
    let what = match expr {
        syn::Expr::Tuple(_) => "tuples in kernels have two or more elements: `(a, b)`",
        syn::Expr::Range(_) => {
            "ranges are only supported as the iterator of a `for` loop: `for i in a..b`"
        }
        syn::Expr::Try(_) => "the `?` operator is not supported in kernels",
        syn::Expr::Async(_) | syn::Expr::Await(_) => "async code is not supported in kernels",
        syn::Expr::Unsafe(_) => "`unsafe` blocks are not needed (nor supported) in kernels",
        syn::Expr::Let(_) => {
            "`let` expressions (`if let`, `while let`) are not supported in kernels"
        }
        syn::Expr::Macro(_) => {
            "macros are not values in kernels: `assert!`, `panic!` and `println!` are statements \
             (`if a == 0 { panic!(\"..\"); }`); other macros expand to code the GPU cannot run"
        }
        syn::Expr::Assign(_) => {
            "assignment is a statement in kernels: write it on its own line, ending with `;`"
        }
        syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => {
            "loops cannot be used as values: write the loop as a statement"
        }
        syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => {
            "`break`, `continue` and `return` cannot be used as values: write them as statements"
        }
        _ => "this expression is not supported in kernels",
    };
    what.to_string()
}

impl Parser<'_> {
    pub(super) fn expr(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        let span = Loc::of(expr);
        let kind = match expr {
            // syn reads a pattern's `-5` (`-5..=-1`) as one literal.
            syn::Expr::Lit(lit) if negative_literal(&lit.lit).is_some() => {
                let positive = syn::Expr::Lit(syn::ExprLit {
                    attrs: Vec::new(),
                    lit: negative_literal(&lit.lit)?,
                });
                ExprKind::Unary {
                    op: UnOp::Neg,
                    operand: self.expr(&positive)?,
                }
            }
            syn::Expr::Lit(lit) => ExprKind::Lit(self.lit(&lit.lit)?),
            syn::Expr::Path(path) => self.path_expr(path)?,
            syn::Expr::Paren(paren) => return self.expr(&paren.expr),
            syn::Expr::Group(group) => return self.expr(&group.expr),
            syn::Expr::Struct(literal) if literal.rest.is_some() => {
                let desugared = self.struct_update(literal)?;
                return self.expr(&desugared);
            }
            // `a + if c { let t = ..; t } else { b }`: computed by statements before the
            // statement, where it is evaluated once and unconditionally.
            syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_) | syn::Expr::Loop(_)
                if self.lift && super::values::needs_statements(expr) =>
            {
                return self.hidden_value(expr, None);
            }
            // `a || x.iter().any(..)`: the right side computes with a loop, which runs only
            // where Rust evaluates it, in the arm of an `if`.
            syn::Expr::Binary(binary)
                if self.lift
                    && matches!(binary.op, syn::BinOp::And(_) | syn::BinOp::Or(_))
                    && super::consumers::has_consumer(&binary.right) =>
            {
                let (left, right) = (&binary.left, &binary.right);
                let rewritten: syn::Expr = if matches!(binary.op, syn::BinOp::And(_)) {
                    syn::parse_quote!(if #left { #right } else { false })
                } else {
                    syn::parse_quote!(if #left { true } else { #right })
                };
                return self.hidden_value(&rewritten, None);
            }
            syn::Expr::Binary(binary) => {
                let Some(op) = binary_op(&binary.op) else {
                    self.cx.error_spanned_by(
                        binary,
                        "compound assignment is a statement in kernels: write it on its own line, ending with `;`",
                    );
                    return None;
                };
                let lhs = self.expr(&binary.left);
                let rhs = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    self.shift_amount(&binary.right)
                } else if matches!(op, BinOp::And | BinOp::Or) {
                    // Evaluated only when the left side says so.
                    self.lifting(false, |this| this.expr(&binary.right))
                } else {
                    self.expr(&binary.right)
                };
                ExprKind::Binary {
                    op,
                    lhs: lhs?,
                    rhs: rhs?,
                }
            }
            syn::Expr::MethodCall(_) | syn::Expr::Unary(_)
                if super::consumers::consumer(expr).is_some() =>
            {
                return self.lifted(expr);
            }
            syn::Expr::MethodCall(_) | syn::Expr::Unary(_)
                if super::options::optional_read(expr).is_some() =>
            {
                return self.expr(&super::options::optional_read(expr)?);
            }
            syn::Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    syn::UnOp::Deref(_) => {
                        let inner = self.expr(&unary.expr)?;
                        return Some(self.push_expr(ExprKind::Deref(inner), span));
                    }
                    _ => {
                        self.cx
                            .error_spanned_by(unary, "this operator is not supported in kernels");
                        return None;
                    }
                };
                ExprKind::Unary {
                    op,
                    operand: self.expr(&unary.expr)?,
                }
            }
            syn::Expr::Cast(cast) if self.is_outer(&cast.expr) => {
                // Converted by Rust's own `as` on the host, so its type need not be known here.
                let to = self.scalar_type(&cast.ty)?;
                let path = super::outer::outer_path(&cast.expr)?;
                ExprKind::Outer(self.outer_const(path, false, Some(to))?)
            }
            syn::Expr::Cast(cast) => {
                let inner = self.expr(&cast.expr);
                let to = self.scalar_type(&cast.ty)?;
                ExprKind::Cast { expr: inner?, to }
            }
            syn::Expr::Index(index) => {
                if let syn::Expr::Range(range) = strip_parens(&index.index) {
                    self.cx.error_spanned_by(
                        range,
                        "a range of elements is borrowed: write `&x[a..b]` (or `&mut x[a..b]`)",
                    );
                    return None;
                }
                let base = self.expr(&index.expr);
                let idx = self.expr(&index.index);
                let base = base?;
                self.note_table(base);
                ExprKind::Index { base, index: idx? }
            }
            syn::Expr::MethodCall(call) => match super::calls::range_contains(call) {
                Some(range) => return self.contains(call, range),
                None => self.method_call(call)?,
            },
            syn::Expr::Macro(mac) if mac.mac.path.is_ident("matches") => {
                return self.matches_macro(&mac.mac);
            }
            syn::Expr::Call(_) if super::statements::array_from_fn(expr).is_some() => {
                self.cx.error_spanned_by(
                    expr,
                    "`array::from_fn` builds its array where a `let` gives the type with a \
                     literal length of 1 to 64: `let v: [f32; 4] = core::array::from_fn(|i| ..);`",
                );
                return None;
            }
            syn::Expr::Call(call) if super::calls::from_bytes(call).is_some() => {
                return self.expr(&super::calls::from_bytes(call)?);
            }
            syn::Expr::Call(call) => self.call(call)?,
            syn::Expr::Field(field) => match &field.member {
                syn::Member::Named(name) => ExprKind::Field {
                    base: self.expr(&field.base)?,
                    name: name.to_string(),
                    name_span: Loc::of(name),
                },
                syn::Member::Unnamed(index) => ExprKind::TupleField {
                    base: self.expr(&field.base)?,
                    index: index.index as usize,
                },
            },
            syn::Expr::Tuple(tuple) if tuple.elems.len() > 6 => {
                self.cx.error_spanned_by(
                    tuple,
                    "tuples in kernels have at most 6 elements: use a `#[device]` struct",
                );
                return None;
            }
            syn::Expr::Tuple(tuple) if tuple.elems.len() >= 2 => {
                let elems: Vec<Option<ExprId>> = tuple.elems.iter().map(|e| self.expr(e)).collect();
                ExprKind::Tuple {
                    elems: elems.into_iter().collect::<Option<Vec<_>>>()?,
                }
            }
            syn::Expr::Struct(literal) => self.struct_literal(literal)?,
            syn::Expr::Reference(reference) => {
                if let syn::Expr::Index(index) = strip_parens(&reference.expr) {
                    if let syn::Expr::Range(range) = strip_parens(&index.index) {
                        let base = self.expr(&index.expr);
                        let start = range.start.as_ref().map(|s| self.expr(s));
                        let end = range.end.as_ref().map(|e| self.expr(e));
                        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
                        return Some(self.push_expr(
                            ExprKind::SubSlice {
                                base: base?,
                                start: start.map_or(Some(None), |s| s.map(Some))?,
                                end: end.map_or(Some(None), |e| e.map(Some))?,
                                inclusive,
                                mutable: reference.mutability.is_some(),
                            },
                            span,
                        ));
                    }
                }
                ExprKind::Ref {
                    expr: self.expr(&reference.expr)?,
                    mutable: reference.mutability.is_some(),
                }
            }
            syn::Expr::If(if_expr) => self.select(if_expr)?,
            syn::Expr::Match(_) if super::guards::is_guarded_match(expr) => {
                self.cx.error_spanned_by(
                    expr,
                    "a `match` whose arms bind the value or have guards computes its value with \
                     statements: bind it with `let` first (`let v = match .. {..};`)",
                );
                return None;
            }
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.expr(&match_expr.expr);
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    let value = self.lifting(false, |this| match &*arm.body {
                        syn::Expr::Block(block) if block.label.is_none() => {
                            this.value_block(&block.block)
                        }
                        other => this.expr(other),
                    })?;
                    arms.push((patterns, value));
                }
                ExprKind::Match {
                    scrutinee: scrutinee?,
                    arms,
                }
            }
            syn::Expr::Repeat(repeat) => {
                let value = self.expr(&repeat.expr);
                let len = self.length(&repeat.len)?;
                ExprKind::ArrayRepeat { value: value?, len }
            }
            syn::Expr::Array(array) => {
                if array.elems.is_empty() {
                    self.cx
                        .error_spanned_by(array, "arrays need at least one element");
                    return None;
                }
                let elems: Vec<Option<ExprId>> = array.elems.iter().map(|e| self.expr(e)).collect();
                ExprKind::ArrayList {
                    elems: elems.into_iter().collect::<Option<Vec<_>>>()?,
                }
            }
            syn::Expr::Block(block) if block.label.is_none() => {
                return self.value_block(&block.block);
            }
            syn::Expr::Closure(closure) => self.closure(closure)?,
            other => {
                self.cx.error_spanned_by(other, unsupported_expr(other));
                return None;
            }
        };
        Some(self.push_expr(kind, span))
    }

    pub(super) fn lit(&mut self, lit: &syn::Lit) -> Option<Lit> {
        match lit {
            syn::Lit::Bool(b) => Some(Lit::Bool(b.value)),
            syn::Lit::Int(int) => {
                let suffix = self.lit_suffix(int.suffix(), lit)?;
                if suffix.is_some_and(Scalar::is_float) {
                    return Some(Lit::Float {
                        digits: int.base10_digits().to_string(),
                        suffix,
                    });
                }
                match int.base10_digits().parse::<u128>() {
                    Ok(value) => Some(Lit::Int { value, suffix }),
                    Err(_) => {
                        self.cx
                            .error_spanned_by(lit, "integer literal is too large");
                        None
                    }
                }
            }
            // `b'\n'`: a byte, a `u8` number (text kernels compare bytes with them).
            syn::Lit::Byte(byte) => Some(Lit::Int {
                value: u128::from(byte.value()),
                suffix: Some(Scalar::U8),
            }),
            syn::Lit::Float(float) => {
                let suffix = self.lit_suffix(float.suffix(), lit)?;
                if suffix.is_some_and(Scalar::is_int) {
                    self.cx
                        .error_spanned_by(lit, "a float literal cannot have an integer suffix");
                    return None;
                }
                Some(Lit::Float {
                    digits: float.base10_digits().to_string(),
                    suffix,
                })
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "only number, `bool` and byte (`b'a'`) literals are supported in kernels (no \
                     strings or chars: compare bytes, `c == b'a'`)",
                );
                None
            }
        }
    }

    fn lit_suffix(&mut self, suffix: &str, lit: &syn::Lit) -> Option<Option<Scalar>> {
        if suffix.is_empty() {
            return Some(None);
        }
        match Scalar::from_rust_name(suffix) {
            Some(scalar) if scalar != Scalar::Bool => Some(Some(scalar)),
            _ => {
                self.cx.error_spanned_by(
                    lit,
                    format!(
                        "literal suffix `{suffix}` is not supported; the number types are i8, u8, i16, u16, i32, u32, i64, u64, usize, f32, f64"
                    ),
                );
                None
            }
        }
    }

    /// A shift's amount. Rust takes any integer type there, so a constant from outside the
    /// function, whose type the macro cannot see, is read as a `u32` (`SHIFT as u32`) rather
    /// than left for its uses to type.
    pub(super) fn shift_amount(&mut self, expr: &syn::Expr) -> Option<ExprId> {
        if let syn::Expr::Path(path) = super::strip_parens(expr) {
            let outer = path.qself.is_none()
                && path.path.get_ident().is_some_and(|ident| {
                    let name = ident.to_string();
                    self.lookup(&name).is_none()
                        && self.generic_const(&name).is_none()
                        && is_constant_name(&name)
                });
            if outer {
                let constant = self.outer_const(&path.path, false, Some(Scalar::U32))?;
                return Some(self.push_expr(ExprKind::Outer(constant), Loc::of(expr)));
            }
        }
        self.expr(expr)
    }

    fn path_expr(&mut self, path: &syn::ExprPath) -> Option<ExprKind> {
        if path.qself.is_some() {
            self.cx
                .error_spanned_by(path, "qualified paths are not supported in kernels");
            return None;
        }
        if let Some(ident) = path.path.get_ident() {
            let name = ident.to_string();
            return match self.lookup(&name) {
                Some(local) => Some(ExprKind::Local(local)),
                None if self.generic_const(&name).is_some() => {
                    Some(ExprKind::GenericConst(self.generic_const(&name)?))
                }
                None if is_constant_name(&name) => {
                    Some(ExprKind::Outer(self.outer_const(&path.path, false, None)?))
                }
                None => {
                    self.cx.error_spanned_by(
                        path,
                        format!(
                            "cannot find value `{name}` in this {}: it can use its parameters, \
                             `let` bindings and constants, which are named in UPPER_CASE \
                             (`const SCALE: f32 = ...;`, in the function or outside it)",
                            match self.kind {
                                FnKind::Kernel => "kernel",
                                FnKind::Device => "device function",
                            }
                        ),
                    );
                    None
                }
            };
        }
        // `Body::G`, `Op::Add`: an associated constant or a variant of a `#[device]` type.
        if let Some(kind) = self.assoc_path(&path.path, None)? {
            return Some(kind);
        }
        // `f32::MAX`, `u32::MIN`, `f32::consts::PI`, `std::f64::consts::E`
        let segments: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let names: Vec<&str> = segments
            .iter()
            .map(String::as_str)
            .skip_while(|s| matches!(*s, "std" | "core"))
            .collect();
        // `f32::max` as a value: the closure that calls it (`combine(a, b, f32::max)`).
        if let [ty, name] = names.as_slice() {
            let method = Scalar::from_rust_name(ty)
                .filter(|_| !is_constant_name(name))
                .and_then(|scalar| crate::methods::lookup(name, scalar));
            if let Some(method) = method {
                let args: Vec<syn::Ident> = (0..=method.args.len())
                    .map(|i| quote::format_ident!("__gpu_arg{i}"))
                    .collect();
                let closure: syn::ExprClosure = syn::parse_quote!(|#(#args),*| #path(#(#args),*));
                return self.closure(&closure);
            }
        }
        let constant = match names.as_slice() {
            [ty, name] => Scalar::from_rust_name(ty).map(|ty| (ty, *name)),
            [ty, "consts", name] => Scalar::from_rust_name(ty).map(|ty| (ty, *name)),
            _ => None,
        };
        match constant {
            Some((ty, name)) => Some(ExprKind::Const {
                ty,
                name: name.to_string(),
            }),
            None if path
                .path
                .segments
                .last()
                .is_some_and(|last| is_constant_name(&last.ident.to_string())) =>
            {
                Some(ExprKind::Outer(self.outer_const(&path.path, false, None)?))
            }
            None => {
                self.cx.error_spanned_by(
                    path,
                    "paths are only supported for constants such as `f32::MAX`, `f32::consts::PI` \
                     or `consts::TILE`",
                );
                None
            }
        }
    }

    /// `Type::name` (`args` `None`) or `Type::name(args)` where `Type` is a `#[device]` type or
    /// `Self`: `Some(None)` when `path` is not of that form. A type not gathered yet is noted
    /// for fetching (`None`, without an error).
    pub(super) fn assoc_path(
        &mut self,
        path: &syn::Path,
        args: Option<&syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>>,
    ) -> Option<Option<ExprKind>> {
        let n = path.segments.len();
        if n < 2 {
            return Some(None);
        }
        let ty_segment = &path.segments[n - 2];
        let ty_name = ty_segment.ident.to_string();
        let item = &path.segments[n - 1];
        let ty = if ty_name == "Self" && n == 2 {
            match self.self_ty {
                Some(ty) => ty,
                None => return Some(None),
            }
        } else if let Some(ty) = self.env.lookup(&ty_name) {
            ty
        } else if args.is_none() && item.ident.to_string().chars().all(|c| !c.is_lowercase()) {
            // `Type::NAME` of a type not (yet) gathered: a constant from outside, which any
            // Rust type may hold (a `#[device]` type's constant works either way).
            return Some(None);
        } else if super::items::looks_like_type(&ty_name)
            && Scalar::from_rust_name(&ty_name).is_none()
            && self.generic_type(&ty_name).is_none()
        {
            let mut type_path = path.clone();
            type_path.segments.pop();
            let type_path = syn::Path {
                leading_colon: type_path.leading_colon,
                segments: type_path
                    .segments
                    .into_pairs()
                    .map(|pair| pair.into_value())
                    .collect(),
            };
            self.env.note_missing(&type_path);
            return None;
        } else {
            return Some(None);
        };
        let name = item.ident.to_string();
        if let (crate::types::Ty::Enum(def), None) = (ty, args) {
            if def.0.variant(&name).is_none() {
                self.cx.error_spanned_by(
                    item,
                    format!("no variant `{name}` in enum `{}`", def.0.name),
                );
                return None;
            }
            return Some(Some(ExprKind::Variant { ty: def, name }));
        }
        let constant = args.is_none();
        let args = match args {
            Some(args) => {
                let parsed: Vec<Option<ExprId>> = args.iter().map(|a| self.expr(a)).collect();
                parsed.into_iter().collect::<Option<Vec<_>>>()?
            }
            None => Vec::new(),
        };
        Some(Some(ExprKind::AssocCall {
            ty,
            name,
            name_span: Loc::of(&item.ident),
            args,
            constant,
        }))
    }

    /// Whether `expr` names a constant from outside the function (no binding, const
    /// parameter or number type's constant of that name).
    pub(super) fn is_outer(&self, expr: &syn::Expr) -> bool {
        let Some(path) = super::outer::outer_path(expr) else {
            return false;
        };
        match path.get_ident() {
            Some(ident) => {
                let name = ident.to_string();
                self.lookup(&name).is_none() && self.generic_const(&name).is_none()
            }
            None => {
                let names: Vec<String> =
                    path.segments.iter().map(|s| s.ident.to_string()).collect();
                let names: Vec<&str> = names
                    .iter()
                    .map(String::as_str)
                    .skip_while(|s| matches!(*s, "std" | "core"))
                    .collect();
                !matches!(names.as_slice(), [ty, _] | [ty, "consts", _] if Scalar::from_rust_name(ty).is_some())
            }
        }
    }

    /// `if c { a } else { b }` in value position.
    fn select(&mut self, if_expr: &syn::ExprIf) -> Option<ExprKind> {
        let Some((_, else_expr)) = &if_expr.else_branch else {
            self.cx.error_spanned_by(
                if_expr,
                "an `if` used as a value needs an `else` branch: `if c { a } else { b }`",
            );
            return None;
        };
        let cond = self.condition(&if_expr.cond);
        // Only one arm runs: neither may compute before the statement.
        let then_value = self.lifting(false, |this| this.value_block(&if_expr.then_branch));
        let else_value = self.lifting(false, |this| this.expr(else_expr));
        Some(ExprKind::Select {
            cond: cond?,
            then_value: then_value?,
            else_value: else_value?,
        })
    }

    /// A block used as a value: it must be a single expression.
    fn value_block(&mut self, block: &syn::Block) -> Option<ExprId> {
        match block.stmts.as_slice() {
            [syn::Stmt::Expr(expr, None)] => self.expr(expr),
            _ => {
                self.cx.error_spanned_by(
                    block,
                    "a block used as a value must be a single expression, as in `if c { a } else { b }`; \
                     compute the value with `let` statements before it",
                );
                None
            }
        }
    }
}
