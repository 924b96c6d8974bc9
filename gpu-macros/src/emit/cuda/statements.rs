//! Statements: declarations and the storage a `let` creates, assignments, `if`, `while` and
//! `match` chains; loops themselves are written in [`super::loops`].

use super::ranges::I32_MAX;
use super::{cuda_decl, cuda_ty, cuda_type, fresh, strip_outer_parens, Emitter};
use crate::ir::*;
use crate::types::{Len, Scalar, Ty};

impl<'a> Emitter<'a> {
    pub(super) fn block_body(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn line_directive(&mut self, loc: Loc) {
        let line = loc.line();
        if line != 0 && line != self.last_line {
            self.last_line = line;
            self.out.raw_line(&format!(
                "#line {line} \"{}\"",
                self.kernel.file.replace('\\', "/").replace('"', "")
            ));
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        self.line_directive(stmt.span);
        match &stmt.kind {
            // A constant used only in lengths (`shared_array::<T, N>`) is never read as a value:
            // NVRTC would warn about the unused variable.
            StmtKind::Let { local, init } if !self.is_read(*local) && self.is_pure(*init) => {}
            StmtKind::Let { local, init } if self.storage(*local, *init) => {}
            // `let _ = value;` evaluates the value for its effects and binds nothing.
            StmtKind::Let { local, init } if self.kernel.local(*local).name == "_" => {
                let code = self.expr(*init);
                self.out
                    .line(&format!("(void)({});", strip_outer_parens(&code)));
            }
            StmtKind::Let { local, init } if matches!(self.types.local(*local), Ty::Closure(_)) => {
                let value = self.expr(*init);
                let line = format!("auto {} = {value};", self.name(*local));
                self.out.line(&line);
            }
            StmtKind::Let { local, init }
                if matches!(self.kernel.expr(*init).kind, ExprKind::Match { .. }) =>
            {
                let Ty::Scalar(scalar) = self.types.local(*local) else {
                    unreachable!("checked: a match produces a scalar");
                };
                let name = self.name(*local).to_string();
                self.out.line(&format!("{} {name};", cuda_type(scalar)));
                self.match_value(*init, |value| format!("{name} = {value};"));
            }
            StmtKind::Let { local, init }
                if matches!(self.types.local(*local), Ty::Slice { .. }) =>
            {
                let Ty::Slice { elem, mutable } = self.types.local(*local) else {
                    unreachable!("matched above")
                };
                let name = self.name(*local).to_string();
                let len_name = fresh(&mut self.taken, &format!("{name}_len"));
                let (pointer, len) = match &self.kernel.expr(*init).kind {
                    ExprKind::Local(source) => (
                        self.name(*source).to_string(),
                        self.len_name(*source).to_string(),
                    ),
                    _ => self.sub_slice(*init),
                };
                let constness = if mutable { "" } else { "const " };
                self.out.line(&format!(
                    "{constness}{}* {name} = {pointer}; const unsigned long long {len_name} = {len}; (void){len_name};",
                    cuda_ty(*elem)
                ));
                // `c.len()` reads the length alone: NVRTC would warn about the pointer.
                if self.only_len_taken(*local) {
                    self.out.line(&format!("(void){name};"));
                }
                self.len_names.push((*local, len_name));
            }
            // A struct read from a slice the kernel cannot write, bound once: a reference, so
            // each field is loaded where it is used (CUDA by Example's ray tracer reads a
            // sphere's colour only where it is nearer; a copy loaded all seven floats of each).
            StmtKind::Let { local, init } if self.read_only_struct(*local, *init) => {
                let ty = cuda_ty(self.types.local(*local));
                let name = self.name(*local).to_string();
                let value = self.value(*init);
                self.out.line(&format!("const {ty}& {name} = {value};"));
            }
            StmtKind::Let { local, init } if self.narrow_local(*local).is_some() => {
                let ty = self.narrow_local(*local).expect("matched above");
                let value = self.narrow_code(*init, &ty);
                let name = self.name(*local).to_string();
                self.out
                    .line(&format!("{ty} {name} = {};", strip_outer_parens(&value)));
            }
            StmtKind::Let { local, init } => {
                let ty = self.types.local(*local);
                let name = self.name(*local).to_string();
                let value = self.value(*init);
                let line = match ty {
                    // A local array stays a C array, as the constructors declare them.
                    Ty::Array { .. } => {
                        format!("{}; rs_assign({name}, {value});", cuda_decl(ty, &name))
                    }
                    _ => format!("{} {name} = {value};", cuda_ty(ty)),
                };
                self.out.line(&line);
            }
            StmtKind::Declare { local } => {
                let name = self.name(*local).to_string();
                let line = match (self.narrow_local(*local), self.types.local(*local)) {
                    (Some(narrow), _) => format!("{narrow} {name};"),
                    (None, ty @ Ty::Array { .. }) => format!("{};", cuda_decl(ty, &name)),
                    (None, ty) => format!("{} {name};", cuda_ty(ty)),
                };
                self.out.line(&line);
            }
            StmtKind::LetTuple { locals, init } => {
                let tuple = fresh(&mut self.taken, "tuple");
                let value = self.value(*init);
                let ty = self.types.expr(*init);
                self.out
                    .line(&format!("{} {tuple} = {value};", cuda_ty(ty)));
                for (index, local) in locals.iter().enumerate() {
                    if let Some(local) = local {
                        let name = self.name(*local).to_string();
                        let elem = self.types.local(*local);
                        let line = match elem {
                            Ty::Array { .. } => format!(
                                "{}; rs_assign({name}, {tuple}._{index});",
                                cuda_decl(elem, &name)
                            ),
                            _ => format!("{} {name} = {tuple}._{index};", cuda_ty(elem)),
                        };
                        self.out.line(&line);
                    }
                }
            }
            StmtKind::Assign {
                place,
                op: Some(op),
                value,
            } if matches!(self.types.expr(*place), Ty::Struct(_)) => {
                let code = self.user_compound(*op, *place, *value);
                self.out.line(&format!("{code};"));
            }
            StmtKind::Assign {
                place,
                op: None,
                value,
            } if matches!(self.types.expr(*place), Ty::Array { .. }) => {
                let place_code = self.expr(*place);
                let value_code = self.value(*value);
                self.out.line(&format!(
                    "rs_assign({}, {value_code});",
                    strip_outer_parens(&place_code)
                ));
            }
            StmtKind::Assign {
                place,
                op: Some(op),
                value,
            } if self.narrowed_compound(*place, *op, *value).is_some() => {
                let line = self
                    .narrowed_compound(*place, *op, *value)
                    .expect("matched above");
                self.out.line(&line);
            }
            StmtKind::Assign { place, op, value } => {
                // A variable by its name: read, a 32-bit one would be widened.
                let place_code = match self.kernel.expr(*place).kind {
                    ExprKind::Local(local) => self.name(local).to_string(),
                    _ => self.expr(*place),
                };
                let value_code = match op {
                    None => self.value(*value),
                    Some(op) => self.binary(*op, *place, *value),
                };
                let line = format!("{place_code} = {};", strip_outer_parens(&value_code));
                self.out.line(&line);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let cond = self.expr(*cond);
                self.out
                    .line(&format!("if ({}) {{", strip_outer_parens(&cond)));
                self.nested(then_block);
                let mut else_block = else_block.as_ref();
                while let Some(block) = else_block {
                    // `else { if ... }` holding nothing else reads as `else if` in C++ too.
                    if let [Stmt {
                        kind:
                            StmtKind::If {
                                cond,
                                then_block,
                                else_block: next,
                            },
                        ..
                    }] = block.stmts.as_slice()
                    {
                        let cond = self.expr(*cond);
                        self.out
                            .line(&format!("}} else if ({}) {{", strip_outer_parens(&cond)));
                        self.nested(then_block);
                        else_block = next.as_ref();
                    } else {
                        self.out.line("} else {");
                        self.nested(block);
                        else_block = None;
                    }
                }
                self.out.line("}");
            }
            StmtKind::While { cond, body, label } => {
                self.in_loop_test = true;
                let cond = self.expr(*cond);
                self.in_loop_test = false;
                let header = format!("while ({}) {{", strip_outer_parens(&cond));
                self.labeled_loop(label, &header, body);
            }
            StmtKind::Loop { body, label } => self.labeled_loop(label, "for (;;) {", body),
            StmtKind::Match { scrutinee, arms } => {
                let arms: Vec<(&[Pattern], &Block)> =
                    arms.iter().map(|(p, b)| (p.as_slice(), b)).collect();
                self.match_chain(*scrutinee, &arms, |this, body| this.nested(body));
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                label,
                unroll,
                inclusive,
                reverse,
            } => self.for_loop(
                *var,
                (*start, *end, *step, *inclusive, *reverse),
                body,
                label,
                *unroll,
            ),
            StmtKind::Break(label) => self.jump(label.as_deref(), true),
            StmtKind::Continue(label) => self.jump(label.as_deref(), false),
            StmtKind::Return(None) => self.out.line("return;"),
            StmtKind::Return(Some(value))
                if matches!(self.kernel.expr(*value).kind, ExprKind::Match { .. }) =>
            {
                self.match_value(*value, |value| format!("return {value};"));
            }
            StmtKind::Return(Some(value)) => {
                let code = self.value(*value);
                self.out.line(&format!("return {code};"));
            }
            StmtKind::Block(block) => {
                self.out.line("{");
                self.nested(block);
                self.out.line("}");
            }
            StmtKind::Expr(expr) => {
                let code = self.expr(*expr);
                self.out.line(&format!("{};", strip_outer_parens(&code)));
            }
            StmtKind::Assert(assertion) => self.assertion(assertion, stmt.span.line()),
            StmtKind::Print { format, newline } => self.print(format, *newline),
        }
    }

    /// `local op= value` of a variable narrowed to 32 bits, computed in its type: the
    /// variable's fact bounds every value it takes, this result included, and `value`'s own
    /// fact bounds it. Computed in 64 bits and truncated, a grid-stride `while i < n { ..; i +=
    /// 32; }` gave the compiler a counter that might wrap, so it did not unroll the loop (an
    /// `i8` matrix-vector product's byte loads then went one at a time).
    fn narrowed_compound(&mut self, place: ExprId, op: BinOp, value: ExprId) -> Option<String> {
        let ExprKind::Local(local) = self.kernel.expr(place).kind else {
            return None;
        };
        let fact = self.ranges.expr(value).cloned()?;
        if fact.is_shifted() {
            return None;
        }
        // The operand fits the variable's type too (a number, or a variable of that type), so
        // no `int` step overflows on the way to the result.
        let ty = self.narrow_local(local)?;
        let small = fact.cond.is_empty() && fact.hi_num().is_some_and(|hi| hi <= I32_MAX);
        let same = match self.kernel.expr(value).kind {
            ExprKind::Local(other) => self.narrow_local(other).as_deref() == Some(ty.as_str()),
            _ => false,
        };
        if !small && !same {
            return None;
        }
        let unsigned = matches!(
            self.types.local(local),
            Ty::Scalar(Scalar::Usize | Scalar::U64)
        );
        let ok = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                true
            }
            // Below 32, the amount masks alike in both widths.
            BinOp::Shl | BinOp::Shr => unsigned && fact.hi_num().is_some_and(|hi| hi < 32),
            _ => false,
        };
        if !ok {
            return None;
        }
        let name = self.name(local).to_string();
        let v = self.narrow_code(value, &ty);
        let v = strip_outer_parens(&v);
        Some(match op {
            BinOp::Shl | BinOp::Shr => {
                format!(
                    "{name} = {name} {} ((unsigned int)({v}) & 31u);",
                    op.symbol()
                )
            }
            _ => format!("{name} = {name} {} ({v});", op.symbol()),
        })
    }

    /// Whether any expression reads `local`.
    pub(super) fn is_read(&self, local: LocalId) -> bool {
        self.kernel
            .exprs
            .iter()
            .any(|e| matches!(e.kind, ExprKind::Local(l) if l == local))
    }

    /// Whether every use of the slice `local` asks its length (`c.len()`), never its elements.
    fn only_len_taken(&self, local: LocalId) -> bool {
        let exprs = &self.kernel.exprs;
        exprs.iter().enumerate().all(|(index, e)| {
            !matches!(e.kind, ExprKind::Local(l) if l == local)
                || exprs
                    .iter()
                    .any(|user| matches!(user.kind, ExprKind::Len(of) if of.0 as usize == index))
        })
    }

    /// Whether evaluating `id` has no effect beyond its value.
    fn is_pure(&self, id: ExprId) -> bool {
        match &self.kernel.expr(id).kind {
            ExprKind::Lit(_)
            | ExprKind::Local(_)
            | ExprKind::Const { .. }
            | ExprKind::GenericConst(_)
            | ExprKind::Outer(_)
            // Making a closure has no effect: an unused one is not written (NVRTC would warn).
            | ExprKind::Closure { .. } => true,
            ExprKind::Binary { lhs, rhs, .. } => self.is_pure(*lhs) && self.is_pure(*rhs),
            ExprKind::Unary { operand, .. } => self.is_pure(*operand),
            ExprKind::Cast { expr, .. } => self.is_pure(*expr),
            _ => false,
        }
    }

    /// Whether `let local = init` binds a struct, never written, read from a slice the kernel
    /// cannot write (`let s = spheres[i]`, `for s in spheres`), whose memory then stays as it
    /// is while the binding lives.
    fn read_only_struct(&self, local: LocalId, init: ExprId) -> bool {
        if !matches!(self.types.local(local), Ty::Struct(_)) || self.kernel.local(local).mutable {
            return false;
        }
        matches!(
            self.kernel.expr(init).kind,
            ExprKind::Index { base, .. }
                if matches!(self.types.expr(base), Ty::Slice { mutable: false, .. })
        )
    }

    /// A `let` that creates storage (shared memory, a local array); false for a plain value.
    fn storage(&mut self, local: LocalId, init: ExprId) -> bool {
        let kernel = self.kernel;
        let name = self.name(local).to_string();
        let elem = match self.types.local(local) {
            Ty::Array { elem, .. } | Ty::Shared { elem, .. } => *elem,
            _ => return false,
        };
        // An array copied from a value is declared with the other plain values.
        if !matches!(
            kernel.expr(init).kind,
            ExprKind::SharedArray { .. }
                | ExprKind::DynamicShared { .. }
                | ExprKind::ArrayRepeat { .. }
                | ExprKind::ArrayList { .. }
                | ExprKind::Intrinsic { .. }
        ) {
            return false;
        }
        if let ExprKind::SharedArray { len, .. } = &kernel.expr(init).kind {
            let array = Ty::Array {
                elem: elem.interned(),
                len: *len,
            };
            self.out
                .line(&format!("__shared__ {};", cuda_decl(array, &name)));
            return true;
        }
        let ty = cuda_ty(elem);
        match &kernel.expr(init).kind {
            ExprKind::SharedArray { .. } => unreachable!("declared above"),
            ExprKind::DynamicShared { .. } => {
                self.use_helper("rs_dynamic_smem");
                let len_name = fresh(&mut self.taken, &format!("{name}_len"));
                self.out.line(&format!(
                    "{ty}* {name} = reinterpret_cast<{ty}*>(rs_dynamic_smem);"
                ));
                self.out.line(&format!(
                    "const unsigned long long {len_name} = rs_dynamic_smem_size() / sizeof({ty});"
                ));
                self.len_names.push((local, len_name));
            }
            ExprKind::ArrayRepeat { value, len } => {
                let value_code = self.expr(*value);
                let len = *len;
                match len {
                    Len::Known(n)
                        if n <= 64 && matches!(kernel.expr(*value).kind, ExprKind::Lit(_)) =>
                    {
                        let items = vec![value_code; n as usize].join(", ");
                        self.out.line(&format!("{ty} {name}[{n}] = {{{items}}};"));
                    }
                    _ => {
                        let fill = fresh(&mut self.taken, &format!("{name}_fill"));
                        let k = fresh(&mut self.taken, &format!("{name}_k"));
                        let len = len.cuda();
                        self.out.line(&format!("{ty} {name}[{len}];"));
                        self.out.line(&format!(
                            "{{ {ty} {fill} = {}; for (unsigned long long {k} = 0; {k} < {len}; ++{k}) {name}[{k}] = {fill}; }}",
                            strip_outer_parens(&value_code)
                        ));
                    }
                }
            }
            ExprKind::ArrayList { elems } => {
                let items: Vec<String> = elems
                    .iter()
                    .map(|e| strip_outer_parens(&self.expr(*e)).to_string())
                    .collect();
                self.out.line(&format!(
                    "{ty} {name}[{}] = {{{}}};",
                    items.len(),
                    items.join(", ")
                ));
            }
            ExprKind::Intrinsic { op, args } => {
                self.intrinsic(*op, init, args, Some(name));
            }
            _ => unreachable!("checked: arrays and shared memory come from constructors"),
        }
        true
    }

    /// A `match` as an if-chain over one evaluation of the scrutinee.
    fn match_chain<B>(
        &mut self,
        scrutinee: ExprId,
        arms: &[(&[Pattern], B)],
        mut body: impl FnMut(&mut Self, &B),
    ) {
        let ty = self.types.expr(scrutinee);
        let value = fresh(&mut self.taken, "matched");
        let code = self.expr(scrutinee);
        self.out.line("{");
        self.out.indent();
        self.out.line(&format!(
            "const {} {value} = {};",
            cuda_ty(ty),
            strip_outer_parens(&code)
        ));
        let mut first = true;
        // A match on an enum covers its variants without `_`: its last arm is the `else`, so C++
        // sees every path end.
        let enum_catch_all = matches!(ty, Ty::Enum(_))
            && !arms
                .iter()
                .any(|(patterns, _)| patterns.iter().any(|p| matches!(p, Pattern::Wild)));
        for (index, (patterns, arm)) in arms.iter().enumerate() {
            let conditions: Option<Vec<String>> = if enum_catch_all && index + 1 == arms.len() {
                None
            } else {
                patterns
                    .iter()
                    .map(|pattern| self.pattern_condition(&value, pattern))
                    .collect()
            };
            match (conditions, first) {
                // A catch-all: the last arm that can match.
                (None, true) => {
                    self.out.line("{");
                    body(self, arm);
                    self.out.line("}");
                    break;
                }
                (None, false) => {
                    self.out.line("} else {");
                    body(self, arm);
                    break;
                }
                (Some(conditions), _) => {
                    let keyword = if first { "if" } else { "} else if" };
                    self.out
                        .line(&format!("{keyword} ({}) {{", conditions.join(" || ")));
                    body(self, arm);
                }
            }
            first = false;
        }
        if !first {
            self.out.line("}");
        }
        self.out.dedent();
        self.out.line("}");
    }

    /// A `match` producing a value: each arm's value goes through `store`.
    fn match_value(&mut self, id: ExprId, store: impl Fn(&str) -> String) {
        let ExprKind::Match { scrutinee, arms } = &self.kernel.expr(id).kind else {
            unreachable!("called on a match");
        };
        let arms: Vec<(&[Pattern], ExprId)> =
            arms.iter().map(|(p, v)| (p.as_slice(), *v)).collect();
        self.match_chain(*scrutinee, &arms, |this, value| {
            let code = this.expr(*value);
            this.out.indent();
            this.out.line(&store(strip_outer_parens(&code)));
            this.out.dedent();
        });
    }

    /// The C++ condition of one pattern on `value`; `None` for a catch-all.
    fn pattern_condition(&mut self, value: &str, pattern: &Pattern) -> Option<String> {
        match pattern {
            Pattern::Wild => None,
            Pattern::Value(v) => Some(format!("{value} == {}", self.expr(*v))),
            Pattern::Range {
                start,
                end,
                inclusive,
            } => {
                let op = if *inclusive { "<=" } else { "<" };
                let mut tests = Vec::new();
                if let Some(start) = start {
                    let scalar = self.types.scalar(*start);
                    // `0..` of an unsigned value: NVRTC warns about the comparison with zero.
                    let from_zero = matches!(
                        self.kernel.expr(*start).kind,
                        ExprKind::Lit(Lit::Int { value: 0, .. })
                    ) && scalar.is_int()
                        && !scalar.is_signed_int()
                        && scalar.bound().is_none();
                    if !from_zero {
                        tests.push(format!("{value} >= {}", self.expr(*start)));
                    }
                }
                if let Some(end) = end {
                    tests.push(format!("{value} {op} {}", self.expr(*end)));
                }
                // `0..` of an unsigned value matches every value.
                if tests.is_empty() {
                    return Some("true".to_string());
                }
                Some(format!("({})", tests.join(" && ")))
            }
        }
    }

    pub(super) fn nested(&mut self, block: &Block) {
        self.out.indent();
        self.block_body(block);
        self.out.dedent();
    }
}
