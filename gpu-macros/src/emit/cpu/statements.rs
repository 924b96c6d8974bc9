//! The twin's statements: blocks, `let`, assignments (into memory through `CpuSlice::set`),
//! loops with their labels, `match`, assertions and printing.

use super::Twin;
use crate::emit::assertions::{message_expr, recorded_values};
use crate::ir::*;
use crate::types::{Len, Ty};
use std::fmt::Write;

impl Twin<'_> {
    pub(super) fn block_body(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    pub(super) fn block(&mut self, block: &Block) -> String {
        let saved = std::mem::take(&mut self.out);
        self.block_body(block);
        let body = std::mem::replace(&mut self.out, saved);
        format!("{{\n{body}}}")
    }

    pub(super) fn label(label: &Option<String>) -> String {
        label
            .as_ref()
            .map(|l| format!("'{l}: "))
            .unwrap_or_default()
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) {
        let line = stmt.span.line();
        let code = match &stmt.kind {
            StmtKind::Let { local, init } => {
                let name = self.local_name(*local);
                self.binding = Some(name.clone());
                let value = self.expr(*init);
                self.binding = None;
                match self.types.local(*local) {
                    _ if name == "_" => format!("let _ = {value};"),
                    Ty::Scalar(s) => format!("let mut {name}: {} = {value};", self.rust_type(s)),
                    _ => format!("let mut {name} = {value};"),
                }
            }
            // Rust's own deferred initialization: every path assigns before a read.
            StmtKind::Declare { local } => {
                let name = self.local_name(*local);
                match self.types.local(*local) {
                    // Set to the type's default: Rust cannot see that a search's element
                    // (`find`) is read only where the walk set it.
                    Ty::Scalar(s) => format!(
                        "let mut {name}: {0} = <{0} as ::core::default::Default>::default();",
                        self.rust_type(s)
                    ),
                    _ => format!("let mut {name};"),
                }
            }
            StmtKind::LetTuple { locals, init } => {
                let names: Vec<String> = locals
                    .iter()
                    .map(|local| match local {
                        Some(local) => format!("mut {}", self.local_name(*local)),
                        None => "_".to_string(),
                    })
                    .collect();
                format!("let ({}) = {};", names.join(", "), self.expr(*init))
            }
            StmtKind::Assign { place, op, value } => self.assign(*place, *op, *value),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let cond = self.expr(*cond);
                let then_code = self.block(then_block);
                match else_block {
                    Some(block) => format!("if {cond} {then_code} else {}", self.block(block)),
                    None => format!("if {cond} {then_code}"),
                }
            }
            StmtKind::While { cond, body, label } => {
                let cond = self.expr(*cond);
                format!("{}while {cond} {}", Self::label(label), self.block(body))
            }
            StmtKind::Loop { body, label } => {
                format!("{}loop {}", Self::label(label), self.block(body))
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                label,
                inclusive,
                reverse,
                ..
            } => {
                let name = self.local_name(*var);
                let dots = if *inclusive { "..=" } else { ".." };
                let range = format!("({}{dots}{})", self.expr(*start), self.expr(*end));
                let iter = match step {
                    Some(step) => format!("{range}.step_by({})", self.expr(*step)),
                    None if *reverse => format!("{range}.rev()"),
                    None => range,
                };
                format!(
                    "{}for {name} in {iter} {}",
                    Self::label(label),
                    self.block(body)
                )
            }
            StmtKind::Break(label) => match label {
                Some(l) => format!("break '{l};"),
                None => "break;".to_string(),
            },
            StmtKind::Continue(label) => match label {
                Some(l) => format!("continue '{l};"),
                None => "continue;".to_string(),
            },
            StmtKind::Match { scrutinee, arms } => {
                let catch_all = self.enum_catch_all(*scrutinee, arms.iter().map(|(p, _)| p));
                let scrutinee = self.expr(*scrutinee);
                let mut code = format!("match {scrutinee} {{\n");
                for (i, (patterns, body)) in arms.iter().enumerate() {
                    let pattern = if Some(i) == catch_all {
                        "_".to_string()
                    } else {
                        self.patterns(patterns)
                    };
                    let body = self.block(body);
                    let _ = writeln!(code, "{pattern} => {body}");
                }
                code.push('}');
                code
            }
            // The line tells the race checker where a returned thread left.
            StmtKind::Return(None) => format!("{{ __t.at({line}); return; }}"),
            StmtKind::Return(Some(value)) => format!("return {};", self.expr(*value)),
            StmtKind::Block(block) => self.block(block),
            StmtKind::Expr(expr) => format!("{};", self.expr(*expr)),
            StmtKind::Assert(assertion) => self.assertion(assertion, line),
            StmtKind::Print { format, newline } => {
                let mut call = format!("{:?}", format.template.rust_text());
                for arg in &format.args {
                    let _ = write!(call, ", {}", self.expr(*arg));
                }
                let name = if *newline { "println" } else { "print" };
                format!("::std::{name}!({call});")
            }
        };
        let _ = writeln!(self.out, "{code} // line {line}");
    }

    /// An assertion: the twin words the message itself, with the `format!` the host's message
    /// table uses for the GPU, and ends the thread.
    pub(super) fn assertion(&mut self, assertion: &Assertion, line: usize) -> String {
        let compared = matches!(
            assertion.kind,
            AssertKind::Eq { .. } | AssertKind::Ne { .. }
        );
        let values: Vec<String> = recorded_values(assertion)
            .into_iter()
            .enumerate()
            .map(|(i, value)| match i {
                0 if compared => "__left".to_string(),
                1 if compared => "__right".to_string(),
                _ => self.expr(value),
            })
            .collect();
        let fail = format!(
            "__t.assert_failed({:?}, {line}, {});",
            self.function.file,
            message_expr(assertion, &values)
        );
        let code = match &assertion.kind {
            AssertKind::Holds { cond, .. } => format!("if !({}) {{ {fail} }}", self.expr(*cond)),
            AssertKind::Eq { left, right } | AssertKind::Ne { left, right } => {
                let op = if matches!(assertion.kind, AssertKind::Eq { .. }) {
                    "=="
                } else {
                    "!="
                };
                format!(
                    "{{ let __left = {}; let __right = {}; if !(__left {op} __right) {{ {fail} }} }}",
                    self.expr(*left),
                    self.expr(*right)
                )
            }
            AssertKind::Panic { .. } => fail,
        };
        if assertion.debug {
            format!("if __t.checked() {{ {code} }}")
        } else {
            code
        }
    }

    pub(super) fn patterns(&mut self, patterns: &[Pattern]) -> String {
        patterns
            .iter()
            .map(|p| match p {
                Pattern::Wild => "_".to_string(),
                Pattern::Value(v) => self.pattern_literal(*v),
                Pattern::Range {
                    start,
                    end,
                    inclusive,
                } => {
                    let dots = if *inclusive { "..=" } else { ".." };
                    let start = start.map(|s| self.pattern_literal(s)).unwrap_or_default();
                    let end = end.map(|e| self.pattern_literal(e)).unwrap_or_default();
                    // A half-open range is parenthesized, as Rust asks where it meets `|`.
                    format!("({start}{dots}{end})")
                }
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// A literal as a pattern: no parentheses, and a negative number as `-5i32`.
    pub(super) fn pattern_literal(&mut self, id: ExprId) -> String {
        match &self.function.expr(id).kind {
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => format!("-{}", self.pattern_literal(*operand)),
            ExprKind::Lit(lit) => self.literal(lit, self.scalar_of(id)),
            _ => self.expr(id),
        }
    }

    pub(super) fn assign(&mut self, place: ExprId, op: Option<BinOp>, value: ExprId) -> String {
        if let Some(code) = self.user_assign(place, op, value) {
            return code;
        }
        let value_code = match op {
            None => self.expr(value),
            Some(op) => self.binary(op, place, value),
        };
        let loc = self.function.expr(place).span;
        match &self.function.expr(place).kind {
            ExprKind::Local(local) => {
                format!("{} = {value_code};", self.local_name(*local))
            }
            ExprKind::Index { base, index } => match self.types.expr(*base) {
                Ty::Array { len, .. } => {
                    let base_code = self.expr(*base);
                    let index = self.array_index(*index, len, loc);
                    format!("{base_code}[{index}] = {value_code};")
                }
                _ => {
                    let base_code = self.expr(*base);
                    let index = self.expr(*index);
                    format!(
                        "{base_code}.set({index}, {value_code}, __t, {});",
                        loc.line()
                    )
                }
            },
            _ => unreachable!("checked: assignable places"),
        }
    }

    pub(super) fn array_index(&mut self, index: ExprId, len: Len, loc: Loc) -> String {
        let code = self.expr(index);
        let len = len.rust();
        format!("__gpu_idx({code}, {len}, __t, {})", loc.line())
    }
}
