//! Loops: range `for` loops counted so nothing steps past a bound, and the labels of loops
//! that a `break`/`continue` from an inner loop leaves (C++ `goto`s, as C++ has no labels on
//! loops).

use super::ranges::{Bound, BoundOp, I32_MAX};
use super::{cuda_type, fresh, narrow, strip_outer_parens, Emitter, LoopLabels};
use crate::ir::*;
use crate::types::{Scalar, Ty};

impl<'a> Emitter<'a> {
    /// A loop whose body may be left by a labelled `break`/`continue` from an inner loop.
    pub(super) fn labeled_loop(&mut self, label: &Option<String>, header: &str, body: &Block) {
        self.labeled_loop_with(label, header, None, body);
    }

    /// [`Self::labeled_loop`] with a line run at the top of every iteration, before the body's
    /// own scope (so a `continue` never jumps over it).
    pub(super) fn labeled_loop_with(
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
    pub(super) fn jump(&mut self, label: Option<&str>, is_break: bool) {
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

    /// A Rust range loop. The bound is evaluated once, as Rust does, and a step never moves
    /// the variable past the bound, so it cannot overflow where Rust's iterator would not.
    pub(super) fn for_loop(
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
                let simple = self.steps_without_wrap(scalar, end, step, narrowed.then_some(&ty));
                let (header, prologue) = if let Some(simple) = simple {
                    // A bound and a step whose sum fits in `int`: C's loop, which needs
                    // neither a count (a division at every entry) nor a clamp (the 2-D
                    // register-blocked matrix product's tile loads, `(0..BM).step_by(s)`);
                    // where only C++ knows the bound (a module `const`), it decides.
                    let next = if simple == "true" {
                        format!("{index} += ({ty}){step_name}")
                    } else {
                        let helper = self.use_helper("rs_step_by");
                        format!("{index} = {helper}<({simple})>({index}, {step_name}, {end_name})")
                    };
                    let header =
                        format!("for ({ty} {index} = {first}; {index} < {end_name}; {next}) {{");
                    (header, format!("{ty} {name} = {index};"))
                } else if ty == "int" || ty == "unsigned int" {
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

impl Emitter<'_> {
    /// Whether `end + step` stays within `int` for the counter of a `step_by` loop over
    /// `scalar` narrowed to it (or to an alias that is `int` where it fits), so stepping past
    /// the bound cannot overflow, and the compiler, which may assume an `int` never does,
    /// counts the trips: `"true"`, or the C++ constant condition where a bound names a
    /// constant, or `rs_fits` where the launch knows it, the step is a constant and the
    /// counter's type already depends on the launch (a warp-per-row layer norm's
    /// `(lane..cols).step_by(32)`: counted in 64 bits, its three loops ran at 0.88-0.93 x its
    /// CUDA C twin on an H100, 1.00 x this way); `None` where it is not known. A step only the
    /// launch knows keeps the count, which the compiler unrolls (a block-per-row softmax's
    /// `(t..cols).step_by(threads)`: 0.219 ms counted, 0.245 ms as `i += threads`). An
    /// unsigned counter, whose wrap is defined, keeps its form.
    fn steps_without_wrap(
        &mut self,
        scalar: Scalar,
        end: ExprId,
        step: ExprId,
        narrowed: Option<&str>,
    ) -> Option<String> {
        let ty = narrowed?;
        if !matches!(scalar, Scalar::U64 | Scalar::Usize) {
            return None;
        }
        let bound = |id: ExprId| {
            self.ranges
                .expr(id)
                .filter(|fact| !fact.is_shifted())
                .map(|fact| fact.hi.clone())
        };
        let sum = Bound::op(BoundOp::Add, &bound(end)?, &bound(step)?);
        let constant_step = self.ranges.expr(step).is_some_and(|fact| !fact.varies);
        match sum.upper() {
            Some(upper) if upper <= I32_MAX => Some("true".to_string()),
            None if !sum.at_run_time() => Some(format!("{} <= {I32_MAX}ull", sum.cuda())),
            None if self.fits_with_launch(ty) && constant_step => {
                self.fits_at_launch.insert((sum, Bound::Num(I32_MAX)));
                Some(narrow::LAUNCH_FITS_BODY.to_string())
            }
            _ => None,
        }
    }
}
