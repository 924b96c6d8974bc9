//! The macros a kernel may call: `assert!`, `assert_eq!`, `assert_ne!`, their `debug_`
//! forms, `panic!`, `print!` and `println!`. Their format strings are parsed here (see
//! `crate::format`), so a malformed one is reported at the literal.

use super::Parser;
use crate::format;
use crate::ir::*;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::punctuated::Punctuated;

/// The macros kernels support, for messages.
pub const SUPPORTED_MACROS: &str = "`assert!`, `assert_eq!`, `assert_ne!`, `debug_assert!`, \
                                    `debug_assert_eq!`, `debug_assert_ne!`, `panic!`, \
                                    `unreachable!`, `todo!`, `unimplemented!`, `print!` and \
                                    `println!`";

/// The most values one assertion records: the room in the runtime's error slot
/// (`gpu_dsl_runtime`'s `MAX_ASSERT_ARGS`).
const MAX_ASSERT_ARGS: usize = 8;

impl Parser<'_> {
    /// A macro's argument, whose tokens the statement's rewrites (`optionals/`) did not see.
    fn macro_arg(&mut self, arg: &syn::Expr) -> Option<ExprId> {
        let rewritten = self.option_expr(arg);
        self.expr(rewritten.as_ref().unwrap_or(arg))
    }

    /// A macro in statement position: one the kernel language supports, or an error.
    pub(super) fn macro_stmt(&mut self, mac: &syn::Macro) -> Option<StmtKind> {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let (base, debug) = match name.strip_prefix("debug_") {
            Some(base) => (base, true),
            None => (name.as_str(), false),
        };
        let operands = match base {
            "assert" => 1,
            "assert_eq" | "assert_ne" => 2,
            "panic" | "unreachable" | "todo" | "unimplemented" if !debug => 0,
            "print" | "println" if !debug => {
                let args = self.macro_args(mac)?;
                let format = match args.split_first() {
                    Some((first, rest)) => self.format_args(first, rest)?,
                    None if base == "println" => FormatArgs {
                        template: format::Template {
                            pieces: Vec::new(),
                            captures: Vec::new(),
                        },
                        args: Vec::new(),
                    },
                    None => {
                        self.cx.error_spanned_by(
                            mac,
                            "`print!` needs a format string: `print!(\"{} \", x)`",
                        );
                        return None;
                    }
                };
                return Some(StmtKind::Print {
                    format,
                    newline: base == "println",
                });
            }
            _ => {
                self.macro_error(mac);
                return None;
            }
        };
        let args = self.macro_args(mac)?;
        if args.len() < operands {
            self.cx.error_spanned_by(
                mac,
                format!(
                    "`{name}!` takes {}, then optionally a format string and its arguments",
                    if operands == 1 {
                        "a condition"
                    } else {
                        "two values to compare"
                    }
                ),
            );
            return None;
        }
        let kind = match (base, &args[..operands]) {
            ("assert", [cond]) => AssertKind::Holds {
                cond: self.macro_arg(cond)?,
                text: expression_text(quote::ToTokens::to_token_stream(cond)),
            },
            ("assert_eq", [left, right]) => AssertKind::Eq {
                left: self.macro_arg(left)?,
                right: self.macro_arg(right)?,
            },
            ("assert_ne", [left, right]) => AssertKind::Ne {
                left: self.macro_arg(left)?,
                right: self.macro_arg(right)?,
            },
            _ => AssertKind::Panic {
                words: match base {
                    "unreachable" => Some("internal error: entered unreachable code"),
                    "todo" => Some("not yet implemented"),
                    "unimplemented" => Some("not implemented"),
                    _ => None,
                },
            },
        };
        let message = match args[operands..].split_first() {
            Some((first, rest)) => Some(self.format_args(first, rest)?),
            None => None,
        };
        let arg_count = match &kind {
            AssertKind::Eq { .. } | AssertKind::Ne { .. } => 2,
            AssertKind::Holds { .. } | AssertKind::Panic { .. } => 0,
        } + message.as_ref().map_or(0, |m| m.args.len());
        if arg_count > MAX_ASSERT_ARGS {
            self.cx.error_spanned_by(
                mac,
                format!(
                    "an assertion records at most {MAX_ASSERT_ARGS} values (the compared ones \
                     included): print fewer, or split the assertion"
                ),
            );
            return None;
        }
        let number = self.assertions;
        self.assertions += 1;
        Some(StmtKind::Assert(Assertion {
            kind,
            debug,
            message,
            number,
        }))
    }

    /// The comma-separated arguments of a macro call.
    fn macro_args(&mut self, mac: &syn::Macro) -> Option<Vec<syn::Expr>> {
        match mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated) {
            Ok(args) => Some(args.into_iter().collect()),
            Err(err) => {
                self.cx.error_spanned_by(
                    mac,
                    format!("cannot read the arguments of this macro: {err}"),
                );
                None
            }
        }
    }

    /// A format string literal and its arguments.
    fn format_args(&mut self, literal: &syn::Expr, args: &[syn::Expr]) -> Option<FormatArgs> {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(string),
            ..
        }) = literal
        else {
            self.cx.error_spanned_by(
                literal,
                "a format string must be a string literal: write `\"{}\"` and pass the value \
                 after it",
            );
            return None;
        };
        if let Some(named) = args.iter().find(|arg| matches!(arg, syn::Expr::Assign(_))) {
            self.cx.error_spanned_by(
                named,
                "named arguments (`name = value`) are not supported in kernels: pass the value \
                 after the format string and write `{}`, or name a variable inline (`{x}`)",
            );
            return None;
        }
        let template = match format::parse(&string.value(), args.len()) {
            Ok(template) => template,
            Err(message) => {
                self.cx.error_spanned_by(string, message);
                return None;
            }
        };
        let mut ids = Vec::with_capacity(args.len() + template.captures.len());
        for arg in args {
            ids.push(self.macro_arg(arg)?);
        }
        // A variable named inline is an argument like the others, found where the string is.
        for name in &template.captures {
            let ident = syn::Ident::new(name, string.span());
            let path = syn::Expr::Path(syn::ExprPath {
                attrs: Vec::new(),
                qself: None,
                path: ident.into(),
            });
            ids.push(self.expr(&path)?);
        }
        Some(FormatArgs {
            template,
            args: ids,
        })
    }
}

/// What the text so far ends with, for the spacing of the next token.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet, or an operator's trailing space.
    Spaced,
    /// A name, literal or closed group: a following operator is binary.
    Operand,
    /// A unary operator, `.` or `::`: the next token attaches.
    Tight,
}

/// An expression's tokens as Rust prints a condition in `assertion failed: ...`: spaces around
/// binary operators and between words, none inside calls, indexing or paths.
fn expression_text(tokens: TokenStream) -> String {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = String::new();
    let mut last = Last::Spaced;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if last == Last::Operand {
                    out.push(' ');
                }
                out.push_str(&tokens[i].to_string());
                last = Last::Operand;
            }
            TokenTree::Group(group) => {
                let inner = expression_text(group.stream());
                match group.delimiter() {
                    // A call or an index attaches to its operand.
                    Delimiter::Parenthesis => out.push_str(&format!("({inner})")),
                    Delimiter::Bracket => out.push_str(&format!("[{inner}]")),
                    Delimiter::Brace => {
                        if last == Last::Operand {
                            out.push(' ');
                        }
                        out.push_str(&format!("{{ {inner} }}"));
                    }
                    Delimiter::None => {
                        if last == Last::Operand {
                            out.push(' ');
                        }
                        out.push_str(&inner);
                    }
                }
                last = Last::Operand;
            }
            TokenTree::Punct(first) => {
                // An operator of several characters arrives as joint puncts: `==`, `&&`, `::`.
                let mut op = first.as_char().to_string();
                let mut spacing = first.spacing();
                while spacing == Spacing::Joint {
                    let Some(TokenTree::Punct(next)) = tokens.get(i + 1) else {
                        break;
                    };
                    op.push(next.as_char());
                    spacing = next.spacing();
                    i += 1;
                }
                match op.as_str() {
                    "." | "::" => {
                        out.push_str(&op);
                        last = Last::Tight;
                    }
                    "," => {
                        out.push_str(", ");
                        last = Last::Spaced;
                    }
                    _ if last == Last::Operand => {
                        out.push_str(&format!(" {op} "));
                        last = Last::Spaced;
                    }
                    _ => {
                        out.push_str(&op);
                        last = Last::Tight;
                    }
                }
            }
        }
        i += 1;
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::expression_text;

    /// The condition text is what Rust's own `assert!` prints (`stringify!` of the condition).
    #[test]
    fn conditions_read_as_rust_prints_them() {
        macro_rules! same {
            ($($cond:tt)*) => {
                assert_eq!(
                    expression_text(stringify!($($cond)*).parse().unwrap()),
                    stringify!($($cond)*)
                );
            };
        }
        same!(row.len() == n);
        same!(x[i] >= 0.0 && x[i] <= 1.0);
        same!(!flag || -x < 0);
        same!((a + b) * 2 != c);
        same!(f(a, b) > g(c));
        same!(x as u32 == 3);
        same!(i % 2 == 0 || !(i > 3));
        same!(f32::MAX > *y);
    }
}
