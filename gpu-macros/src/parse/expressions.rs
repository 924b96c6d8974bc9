//! Expressions: literals, paths, operators, indexing, fields, and the values of `if` and
//! `match`.

use super::{strip_parens, Parser};
use crate::ir::*;
use crate::types::Scalar;

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
    )
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
        syn::Expr::Tuple(_) => "tuples are not supported in kernels: use separate variables",
        syn::Expr::Struct(_) => "struct expressions are not supported in kernels",
        syn::Expr::Reference(_) => {
            "references (`&x`) are not supported in kernel expressions: slices come in as parameters"
        }
        syn::Expr::Range(_) => {
            "ranges are only supported as the iterator of a `for` loop: `for i in a..b`"
        }
        syn::Expr::Try(_) => "the `?` operator is not supported in kernels",
        syn::Expr::Async(_) | syn::Expr::Await(_) => "async code is not supported in kernels",
        syn::Expr::Unsafe(_) => "`unsafe` blocks are not needed (nor supported) in kernels",
        syn::Expr::Let(_) => "`let` expressions (`if let`, `while let`) are not supported in kernels",
        syn::Expr::Macro(_) => {
            "macros are not supported in kernels: they expand to code the GPU cannot run"
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
            syn::Expr::Lit(lit) => ExprKind::Lit(self.lit(&lit.lit)?),
            syn::Expr::Path(path) => self.path_expr(path)?,
            syn::Expr::Paren(paren) => return self.expr(&paren.expr),
            syn::Expr::Group(group) => return self.expr(&group.expr),
            syn::Expr::Binary(binary) => {
                let Some(op) = binary_op(&binary.op) else {
                    self.cx.error_spanned_by(
                        binary,
                        "compound assignment is a statement in kernels: write it on its own line, ending with `;`",
                    );
                    return None;
                };
                let lhs = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                ExprKind::Binary {
                    op,
                    lhs: lhs?,
                    rhs: rhs?,
                }
            }
            syn::Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => {
                        self.cx.error_spanned_by(
                            unary,
                            "dereferencing (`*x`) is not supported: kernel values are scalars and slices",
                        );
                        return None;
                    }
                };
                ExprKind::Unary {
                    op,
                    operand: self.expr(&unary.expr)?,
                }
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
                        "sub-slicing (`x[a..b]`) is not supported in kernels: index single elements",
                    );
                    return None;
                }
                let base = self.expr(&index.expr);
                let idx = self.expr(&index.index);
                ExprKind::Index {
                    base: base?,
                    index: idx?,
                }
            }
            syn::Expr::MethodCall(call) => self.method_call(call)?,
            syn::Expr::Call(call) => self.call(call)?,
            syn::Expr::Field(field) => {
                let axis = match &field.member {
                    syn::Member::Named(name) if name == "x" => Axis::X,
                    syn::Member::Named(name) if name == "y" => Axis::Y,
                    syn::Member::Named(name) if name == "z" => Axis::Z,
                    member => {
                        self.cx.error_spanned_by(
                            member,
                            "field access is only supported on index intrinsics: `thread_idx().x`, `.y`, `.z`",
                        );
                        return None;
                    }
                };
                ExprKind::Axis {
                    base: self.expr(&field.base)?,
                    axis,
                }
            }
            syn::Expr::If(if_expr) => self.select(if_expr)?,
            syn::Expr::Match(match_expr) => {
                let scrutinee = self.expr(&match_expr.expr);
                let mut arms = Vec::new();
                for arm in &match_expr.arms {
                    let patterns = self.arm_patterns(arm)?;
                    let value = match &*arm.body {
                        syn::Expr::Block(block) if block.label.is_none() => {
                            self.value_block(&block.block)?
                        }
                        other => self.expr(other)?,
                    };
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
                    "only number and `bool` literals are supported in kernels (no strings, chars or bytes)",
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
                        "literal suffix `{suffix}` is not supported; the number types are i32, u32, i64, u64, usize, f32, f64"
                    ),
                );
                None
            }
        }
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
                None => {
                    self.cx.error_spanned_by(
                        path,
                        format!(
                            "cannot find value `{name}` in this kernel: kernels can use their parameters and \
                             `let` bindings (constants from outside the kernel are not supported yet)"
                        ),
                    );
                    None
                }
            };
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
            None => {
                self.cx.error_spanned_by(
                    path,
                    "paths are only supported for number constants such as `f32::MAX` or `f32::consts::PI`",
                );
                None
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
        let then_value = self.value_block(&if_expr.then_branch);
        let else_value = self.expr(else_expr);
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
