//! Assertions and printing. A failed assertion records its id and values in the error slot
//! (the `rs_assert` helper) and the host words the message; `print!` becomes `printf` with
//! the format string translated at macro time (`crate::format`).

use super::{cuda_type, strip_outer_parens, Emitter};
use crate::emit::assertions::{assertion_id, recorded_values};
use crate::format::{self, Piece, PrintfArg};
use crate::ir::*;

impl Emitter<'_> {
    pub(super) fn assertion(&mut self, assertion: &Assertion, line: usize) {
        self.use_helper("rs_assert");
        // Compiled in either way, so the variables it reads count as used, and removed as
        // dead code from unchecked builds.
        if assertion.debug {
            self.out.line("if (RS_DEBUG_ASSERTS) {");
            self.out.indent();
        }
        let id = assertion_id(self.function_index, assertion.number);
        let values = recorded_values(assertion);
        // The compared values are evaluated once, before the comparison, as Rust does.
        let (condition, compared) = match &assertion.kind {
            AssertKind::Holds { cond, .. } => {
                let cond = self.expr(*cond);
                (Some(format!("!({})", strip_outer_parens(&cond))), 0)
            }
            AssertKind::Eq { left, right } | AssertKind::Ne { left, right } => {
                self.out.line("{");
                self.out.indent();
                for (name, side) in [("rs_left", left), ("rs_right", right)] {
                    let ty = cuda_type(self.types.scalar(*side));
                    let code = self.expr(*side);
                    self.out
                        .line(&format!("{ty} {name} = {};", strip_outer_parens(&code)));
                }
                let op = if matches!(assertion.kind, AssertKind::Eq { .. }) {
                    "=="
                } else {
                    "!="
                };
                (Some(format!("!(rs_left {op} rs_right)")), 2)
            }
            AssertKind::Panic { .. } => (None, 0),
        };
        match &condition {
            Some(condition) => self.out.line(&format!("if ({condition}) {{")),
            None => self.out.line("{"),
        }
        self.out.indent();
        self.out.line("rs_panic_args rs_p = {};");
        for (i, value) in values.iter().enumerate() {
            let code = match i {
                0 if compared == 2 => "rs_left".to_string(),
                1 if compared == 2 => "rs_right".to_string(),
                _ => self.expr(*value),
            };
            self.out.line(&format!(
                "rs_panic_arg(rs_p, {i}, {});",
                strip_outer_parens(&code)
            ));
        }
        self.out
            .line(&format!("rs_assert_fail({id}u, {line}u, rs_p);"));
        self.out.dedent();
        self.out.line("}");
        if compared == 2 {
            self.out.dedent();
            self.out.line("}");
        }
        if assertion.debug {
            self.out.dedent();
            self.out.line("}");
        }
    }

    /// `printf` with the format string translated; each argument is evaluated once, in order.
    pub(super) fn print(&mut self, format: &FormatArgs, newline: bool) {
        let mut c_format = String::new();
        let mut printed = Vec::new();
        for piece in &format.template.pieces {
            match piece {
                Piece::Text(text) => format::c_string_body(&text.replace('%', "%%"), &mut c_format),
                Piece::Arg { index, spec, .. } => {
                    let scalar = self.types.scalar(format.args[*index]);
                    // Checked: every placeholder prints.
                    let Ok((conversion, how)) = format::printf_conversion(spec, scalar) else {
                        continue;
                    };
                    c_format.push_str(&conversion);
                    printed.push((*index, how));
                }
            }
        }
        if newline {
            c_format.push_str("\\n");
        }
        if format.args.is_empty() {
            self.out.line(&format!("printf(\"{c_format}\");"));
            return;
        }
        self.out.line("{");
        self.out.indent();
        for (i, arg) in format.args.iter().enumerate() {
            let ty = cuda_type(self.types.scalar(*arg));
            let code = self.expr(*arg);
            self.out
                .line(&format!("{ty} rs_arg{i} = {};", strip_outer_parens(&code)));
        }
        let args: Vec<String> = printed
            .iter()
            .map(|(index, how)| match how {
                PrintfArg::Plain => format!("rs_arg{index}"),
                PrintfArg::Double => format!("(double)rs_arg{index}"),
                PrintfArg::Bool => format!("rs_arg{index} ? \"true\" : \"false\""),
            })
            .collect();
        self.out
            .line(&format!("printf(\"{c_format}\", {});", args.join(", ")));
        self.out.dedent();
        self.out.line("}");
    }
}
