//! Statements: declarations and the storage a `let` creates, assignments, `if`, loops with
//! their labels (C++ `goto`s where Rust breaks out of an outer loop) and `match` chains.

use super::ranges::I32_MAX;
use super::{cuda_decl, cuda_ty, cuda_type, fresh, strip_outer_parens, Emitter, LoopLabels};
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
    fn is_read(&self, local: LocalId) -> bool {
        self.kernel
            .exprs
            .iter()
            .any(|e| matches!(e.kind, ExprKind::Local(l) if l == local))
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

    /// A loop whose body may be left by a labelled `break`/`continue` from an inner loop.
    fn labeled_loop(&mut self, label: &Option<String>, header: &str, body: &Block) {
        self.labeled_loop_with(label, header, None, body);
    }

    /// [`Self::labeled_loop`] with a line run at the top of every iteration, before the body's
    /// own scope (so a `continue` never jumps over it).
    fn labeled_loop_with(
        &mut self,
        label: &Option<String>,
        header: &str,
        prologue: Option<&str>,
        body: &Block,
    ) {
        let base = label.as_deref().unwrap_or("loop");
        let labels = LoopLabels {
            label: label.clone(),
            break_target: fresh(&mut self.taken, &format!("{base}_break")),
            continue_target: fresh(&mut self.taken, &format!("{base}_continue")),
            break_used: false,
            continue_used: false,
        };
        self.loops.push(labels);
        self.out.line(header);
        self.out.indent();
        if let Some(prologue) = prologue {
            self.out.line(prologue);
        }
        if label.is_some() {
            // The body gets its own scope, so a jump to the continue label at its end never
            // crosses a variable's initialisation.
            self.out.line("{");
            self.nested(body);
            self.out.line("}");
        } else {
            self.block_body(body);
        }
        let labels = self.loops.pop().expect("pushed above");
        if labels.continue_used {
            self.out.line(&format!("{}: ;", labels.continue_target));
        }
        self.out.dedent();
        self.out.line("}");
        if labels.break_used {
            self.out.line(&format!("{}: ;", labels.break_target));
        }
    }

    /// `break`/`continue`, plain or to a labelled outer loop (a `goto`, as C++ has no labels
    /// on loops).
    fn jump(&mut self, label: Option<&str>, is_break: bool) {
        let keyword = if is_break { "break;" } else { "continue;" };
        let innermost = self.loops.len().saturating_sub(1);
        let target = match label {
            None => innermost,
            Some(label) => self
                .loops
                .iter()
                .rposition(|l| l.label.as_deref() == Some(label))
                .expect("checked: the label exists"),
        };
        if target == innermost {
            self.out.line(keyword);
            return;
        }
        let labels = &mut self.loops[target];
        let goto = if is_break {
            labels.break_used = true;
            labels.break_target.clone()
        } else {
            labels.continue_used = true;
            labels.continue_target.clone()
        };
        self.out.line(&format!("goto {goto};"));
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
                let scalar = self.types.scalar(*start);
                // `0..` of an unsigned value: NVRTC warns about the comparison with zero.
                let from_zero = matches!(
                    self.kernel.expr(*start).kind,
                    ExprKind::Lit(Lit::Int { value: 0, .. })
                ) && scalar.is_int()
                    && !scalar.is_signed_int()
                    && scalar.bound().is_none();
                let end = self.expr(*end);
                if from_zero {
                    return Some(format!("({value} {op} {end})"));
                }
                Some(format!(
                    "({value} >= {} && {value} {op} {end})",
                    self.expr(*start)
                ))
            }
        }
    }

    fn nested(&mut self, block: &Block) {
        self.out.indent();
        self.block_body(block);
        self.out.dedent();
    }

    /// A Rust range loop. The bound is evaluated once, as Rust does, and a step never moves
    /// the variable past the bound, so it cannot overflow where Rust's iterator would not.
    fn for_loop(
        &mut self,
        var: LocalId,
        (start, end, step, inclusive, reverse): (ExprId, ExprId, Option<ExprId>, bool, bool),
        body: &Block,
        label: &Option<String>,
        unroll: Unroll,
    ) {
        let Ty::Scalar(scalar) = self.types.local(var) else {
            unreachable!("checked: loop variables are integers");
        };
        let name = self.name(var).to_string();
        let end_name = fresh(&mut self.taken, &format!("{name}_end"));
        // A counter whose every value fits in 32 bits counts in 32 bits, bound included.
        let narrowed = self.narrow_local(var).is_some();
        let (ty, start_code, end_code) = match self.narrow_local(var) {
            Some(ty) => {
                let start_code = self.narrow_code(start, &ty);
                let end_code = self.narrow_code(end, &ty);
                (ty, start_code, end_code)
            }
            None => (
                cuda_type(scalar).to_string(),
                self.expr(start),
                self.expr(end),
            ),
        };
        // A signed counter narrowed to an alias is unsigned in the alias's 64-bit alternative,
        // where it may be negative (`-R..=R`): it compares as signed.
        let cmp = |code: &str| {
            if narrowed && scalar.is_signed_int() && ty != "int" {
                format!("((typename rs_signed_of<{ty}>::type){code})")
            } else {
                code.to_string()
            }
        };
        let pragma = match unroll {
            Unroll::Default => None,
            Unroll::Full => Some("#pragma unroll".to_string()),
            Unroll::Times(n) => Some(format!("#pragma unroll {n}")),
        };
        // The distance to the bound as an unsigned number (not negative inside the loop).
        let distance = if scalar.is_signed_int() {
            format!("(unsigned long long)((long long){end_name} - (long long){name})")
        } else {
            format!("(unsigned long long)({end_name} - {name})")
        };
        // What the header needs declared first, in a block of its own; the header; the line
        // that starts every iteration.
        let mut prelude: Vec<String> = Vec::new();
        let (header, prologue) = match (step, inclusive) {
            // `(a..b).rev()`: a counter from `b` down to `a`, the variable one below it, so
            // nothing steps past either bound in any width.
            (None, false) if reverse => {
                let hi = fresh(&mut self.taken, &format!("{name}_hi"));
                let header = format!(
                    "for ({ty} {hi} = {end_code}, {end_name} = {start_code}; {} > {}; ) {{",
                    cmp(&hi),
                    cmp(&end_name)
                );
                (header, Some(format!("{ty} {name} = --{hi};")))
            }
            // `(a..=b).rev()`: from `b` down to `a`, which may be the type's minimum: a flag
            // ends the loop there.
            (None, true) if reverse => {
                let more = fresh(&mut self.taken, &format!("{name}_more"));
                prelude.push(format!(
                    "bool {more} = {} >= {};",
                    cmp(&end_code),
                    cmp(&start_code)
                ));
                let header = format!(
                    "for ({ty} {name} = {end_code}, {end_name} = {start_code}; {more}; \
                     {more} = {name} != {end_name}, {name} = {more} ? ({ty})({name} - 1) : {name}) {{"
                );
                (header, None)
            }
            (None, false) => {
                let header = format!(
                    "for ({ty} {name} = {start_code}, {end_name} = {end_code}; {} < {}; ++{name}) {{",
                    cmp(&name),
                    cmp(&end_name)
                );
                (header, None)
            }
            // A step never wraps the counter, in a form the compiler can see: it then knows how
            // often the loop runs and unrolls it, so several iterations' loads are in flight at
            // once, which a step clamped at the bound kept it from (a warp-per-row matrix-vector
            // product ran at 0.72 × its CUDA C twin's `int` loop on an H100). A 64-bit variable
            // counts its trips from zero to a count computed once.
            (Some(step), false) => {
                let step_name = fresh(&mut self.taken, &format!("{name}_step"));
                let first = fresh(&mut self.taken, &format!("{name}_first"));
                let count = fresh(&mut self.taken, &format!("{name}_count"));
                let index = fresh(&mut self.taken, &format!("{name}_i"));
                let step_code = self.expr(step);
                prelude.push(format!(
                    "unsigned long long {step_name} = {};",
                    strip_outer_parens(&step_code)
                ));
                prelude.push(format!(
                    "{ty} {first} = {start_code}, {end_name} = {end_code};"
                ));
                let (header, prologue) = if ty == "int" || ty == "unsigned int" {
                    // A 32-bit variable keeps the step clamped at the bound, as before: its loops
                    // are mostly short index loops, and neither a count (a division at every
                    // entry) nor a 64-bit signed counter was faster there (the MNIST step and
                    // the ports on an H100, same binaries otherwise).
                    let distance = if scalar.is_signed_int() {
                        format!("(unsigned long long)((long long){end_name} - (long long){index})")
                    } else {
                        format!("(unsigned long long)({end_name} - {index})")
                    };
                    let header = format!(
                        "for ({ty} {index} = {first}; {index} < {end_name}; \
                         {index} = {distance} > {step_name} ? ({ty})({index} + {step_name}) : {end_name}) {{"
                    );
                    (header, format!("{ty} {name} = {index};"))
                } else {
                    let span = if scalar.is_signed_int() {
                        format!("(unsigned long long)((long long){end_name} - (long long){first})")
                    } else {
                        format!("(unsigned long long)({end_name} - {first})")
                    };
                    prelude.push(format!(
                        "unsigned long long {count} = {} < {} ? ({span} - 1ull) / {step_name} + 1ull : 0ull;",
                        cmp(&first),
                        cmp(&end_name)
                    ));
                    let header = format!(
                        "for (unsigned long long {index} = 0ull; {index} < {count}; ++{index}) {{"
                    );
                    let prologue =
                        format!("{ty} {name} = ({ty})({first} + {index} * {step_name});");
                    (header, prologue)
                };
                (header, Some(prologue))
            }
            // A narrowed `a..=b` counts as C does (see the `rs_incl` helper).
            (None, true) if narrowed => {
                let more = fresh(&mut self.taken, &format!("{name}_more"));
                let helper = self.use_helper("rs_incl");
                prelude.push(format!("bool {more} = true; (void){more};"));
                let header = format!(
                    "for ({ty} {name} = {start_code}, {end_name} = {end_code}; {more} && {} <= {}; \
                     {helper}_next({name}, {end_name}, {more})) {{",
                    cmp(&name),
                    cmp(&end_name)
                );
                (header, None)
            }
            // A 32-bit (or smaller) `a..=b` counts in 64 bits, where stepping past `b` cannot
            // wrap even at the type's maximum: the compiler then counts the trips and unrolls
            // a window's `-R..=R` as C's `i <= R; ++i` (the bilateral filter port).
            (None, true)
                if !reverse
                    && (scalar.is_small_int() || matches!(scalar, Scalar::I32 | Scalar::U32)) =>
            {
                let wide = fresh(&mut self.taken, &format!("{name}_wide"));
                let counter = if scalar.is_signed_int() {
                    "long long"
                } else {
                    "unsigned long long"
                };
                let header = format!(
                    "for ({counter} {wide} = {start_code}, {end_name} = {end_code}; {wide} <= {end_name}; ++{wide}) {{"
                );
                // An unread variable is not declared (NVRTC would warn).
                let prologue = self
                    .is_read(var)
                    .then(|| format!("{ty} {name} = ({ty}){wide};"));
                (header, prologue)
            }
            // `a..=b` reaches `b` without stepping past it (`b` may be the type's maximum): a
            // flag says whether another step fits, checked after the body (also on `continue`).
            (step, true) => {
                let more = fresh(&mut self.taken, &format!("{name}_more"));
                let step_code = match step {
                    Some(step) => {
                        let code = self.expr(step);
                        strip_outer_parens(&code).to_string()
                    }
                    None => "1ull".to_string(),
                };
                let step_name = fresh(&mut self.taken, &format!("{name}_step"));
                prelude.push(format!("unsigned long long {step_name} = {step_code};"));
                prelude.push(format!("bool {more} = true;"));
                let header = format!(
                    "for ({ty} {name} = {start_code}, {end_name} = {end_code}; {more} && {} <= {}; \
                     {more} = {distance} >= {step_name}, {name} = {more} ? ({ty})({name} + {step_name}) : {name}) {{",
                    cmp(&name),
                    cmp(&end_name)
                );
                (header, None)
            }
        };
        if !prelude.is_empty() {
            self.out.line("{");
            self.out.indent();
            for line in &prelude {
                self.out.line(line);
            }
        }
        if let Some(pragma) = &pragma {
            self.out.line(pragma);
        }
        self.labeled_loop_with(label, &header, prologue.as_deref(), body);
        if !prelude.is_empty() {
            self.out.dedent();
            self.out.line("}");
        }
    }
}
