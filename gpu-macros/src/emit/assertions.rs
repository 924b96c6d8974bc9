//! What the emitters share about assertions: their ids in a kernel's message table, the Rust
//! expression that words a failure as Rust's `assert!` would, and the table itself, the host
//! function through which the runtime formats a GPU thread's recorded values.

use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;
use std::fmt::Write;

/// The id of assertion `number` of the program's function `function`, as the GPU records it.
pub fn assertion_id(function: usize, number: u32) -> u32 {
    ((function as u32) << 16) | number
}

/// The values an assertion records, in order: the compared values, then the message's
/// arguments.
pub fn recorded_values(assertion: &Assertion) -> Vec<ExprId> {
    let compared = match assertion.kind {
        AssertKind::Eq { left, right } | AssertKind::Ne { left, right } => vec![left, right],
        AssertKind::Holds { .. } | AssertKind::Panic { .. } => Vec::new(),
    };
    let message = assertion
        .message
        .iter()
        .flat_map(|m| m.args.iter().copied());
    compared.into_iter().chain(message).collect()
}

/// Rust source of the `String` that words `assertion`'s failure as Rust does, given the
/// expressions of its recorded values (in [`recorded_values`]'s order).
pub fn message_expr(assertion: &Assertion, values: &[String]) -> String {
    let user = |skip: usize| {
        assertion.message.as_ref().map(|message| {
            let mut call = format!("{:?}", message.template.rust_text());
            for value in values.iter().skip(skip) {
                let _ = write!(call, ", {value}");
            }
            call
        })
    };
    match &assertion.kind {
        AssertKind::Holds { text, .. } => match user(0) {
            Some(call) => format!("::std::format!({call})"),
            None => format!(
                "::std::string::String::from({:?})",
                format!("assertion failed: {text}")
            ),
        },
        AssertKind::Panic { words: None } => match user(0) {
            Some(call) => format!("::std::format!({call})"),
            None => "::std::string::String::from(\"explicit panic\")".to_string(),
        },
        AssertKind::Panic { words: Some(words) } => match user(0) {
            Some(call) => format!("::std::format!(\"{words}: {{}}\", ::std::format_args!({call}))"),
            None => format!("::std::string::String::from({words:?})"),
        },
        AssertKind::Eq { .. } | AssertKind::Ne { .. } => {
            let op = if matches!(assertion.kind, AssertKind::Eq { .. }) {
                "=="
            } else {
                "!="
            };
            let (left, right) = (&values[0], &values[1]);
            match user(2) {
                Some(call) => format!(
                    "::std::format!(\"assertion `left {op} right` failed: {{}}\\n  left: \
                     {{:?}}\\n right: {{:?}}\", ::std::format_args!({call}), {left}, {right})"
                ),
                None => format!(
                    "::std::format!(\"assertion `left {op} right` failed\\n  left: {{:?}}\\n \
                     right: {{:?}}\", {left}, {right})"
                ),
            }
        }
    }
}

/// Every assertion of `block`, nested ones included, in source order.
fn assertions_in<'p>(block: &'p Block, out: &mut Vec<&'p Assertion>) {
    for stmt in &block.stmts {
        if let StmtKind::Assert(assertion) = &stmt.kind {
            out.push(assertion);
        }
        for body in stmt.kind.blocks() {
            assertions_in(body, out);
        }
    }
}

/// The kernel's message table: `fn __assertion_message(id, args)`, or `None` when no function
/// of the program asserts.
pub fn message_table(program: &Program, rt: &TokenStream) -> Option<TokenStream> {
    let mut arms = String::new();
    for (index, function) in program.functions.iter().enumerate() {
        let mut found = Vec::new();
        assertions_in(&function.body, &mut found);
        for assertion in found {
            let count = recorded_values(assertion).len();
            let values: Vec<String> = (0..count).map(|i| format!("__a{i}")).collect();
            let _ = writeln!(
                arms,
                "{} => {{ let [{}] = args else {{ return None; }}; Some(({:?}, {})) }}",
                assertion_id(index, assertion.number),
                values.join(", "),
                function.file,
                message_expr(assertion, &values)
            );
        }
    }
    if arms.is_empty() {
        return None;
    }
    let arms: TokenStream = match arms.parse() {
        Ok(arms) => arms,
        Err(error) => {
            let message = format!("internal error: the assertion messages do not parse ({error})");
            return Some(quote!(compile_error!(#message);));
        }
    };
    Some(quote! {
        /// Words the kernel's failed assertion `id` from the values its GPU thread recorded.
        fn __assertion_message(
            id: u32,
            args: &[#rt::PanicArg],
        ) -> ::core::option::Option<(&'static str, ::std::string::String)> {
            match id {
                #arms
                _ => None,
            }
        }
    })
}
