//! The macros never panic: kernels and device functions, valid and mutated token by token, go
//! through the whole expansion, which must give tokens (an expansion or `compile_error!`s).
//! `GPU_MACRO_CASES` sets the number of cases (default 256, as in CI).

use crate::chain;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use proptest::prelude::*;

/// Programs covering the parser's positions: signatures, statements, expressions, calls,
/// intrinsics, user types, tuples, closures and macros.
const SEEDS: &[&str] = &[
    "fn k(a: f32, x: &[f32], y: &mut [f32]) { let i = global_idx().x; if i < y.len() { y[i] = a * x[i] + y[i]; } }",
    "fn k<T: Float, const N: usize>(x: &mut [T]) { let t = shared_array::<T, { N * 2 }>(); let i = thread_idx().x as usize; t[i] = x[i]; sync_threads(); for j in (0..N).step_by(2) { x[i] += t[j]; } }",
    "fn k(x: &mut [u32]) { let mut acc = [0u32; 4]; #[unroll] for j in 0..4 { acc[j] = x[j].count_ones(); } match x[0] { 0 => x[1] = acc[0], 1..=3 => x[1] = acc[1], _ => {} } }",
    "fn k(x: &mut [f32]) { let (lo, hi) = (x[0].min(x[1]), x[0].max(x[1])); let f = |v: f32| v * hi; x[2] = f(lo); assert!(lo <= hi, \"{} {}\", lo, hi); println!(\"{:.3}\", lo); }",
    "fn k(x: &mut [f32], n: usize) { let row = &x[0..n]; let s = &mut x[n..]; s[0] = row.len() as f32; while s[0] > 1.0 { s[0] /= 2.0; } loop { break; } }",
    "fn k(v: &mut [i64]) { let w = v[0].wrapping_add(3) >> 2; let z = if w > 0 { w as f64 } else { -1.5 }; v[1] = z as i64; v[2] = v.atomic_add(3, 1); }",
];

/// Tokens a mutation inserts: every kind the parser meets, valid or not where they land.
const VOCABULARY: &[&str] = &[
    "x",
    "y",
    "self",
    "Self",
    "T",
    "N",
    "f32",
    "u8",
    "i128",
    "usize",
    "bool",
    "Body",
    "0",
    "1",
    "2.5",
    "1e9",
    "'a'",
    "\"s\"",
    "true",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "&&",
    "|",
    "||",
    "!",
    "=",
    "==",
    "<",
    "<=",
    ">>",
    "..",
    "..=",
    ".",
    ",",
    ";",
    ":",
    "::",
    "->",
    "=>",
    "#",
    "?",
    "as",
    "let",
    "mut",
    "if",
    "else",
    "match",
    "for",
    "in",
    "while",
    "loop",
    "break",
    "continue",
    "return",
    "fn",
    "struct",
    "impl",
    "unsafe",
    "async",
    "move",
    "const",
    "static",
    "where",
    "shared_array",
    "sync_threads",
    "shfl_down_sync",
    "global_idx",
    "thread_idx",
    "len",
    "println",
    "assert",
    "panic",
    "load4",
    "atomic_add",
    "()",
    "[]",
    "{}",
    "(1, 2)",
    "[0; 3]",
    "|a| a",
    "&mut",
    "*",
    "'outer:",
];

/// `tokens` flattened: delimiters become their bracket characters, so a mutation may unbalance
/// them (such text fails to tokenize and is skipped, as rustc would reject it first).
fn flatten(tokens: TokenStream, out: &mut Vec<String>) {
    for tree in tokens {
        match tree {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                out.push(open.to_string());
                flatten(group.stream(), out);
                out.push(close.to_string());
            }
            other => out.push(other.to_string()),
        }
    }
}

/// Runs both attributes' expansions on `text`; `Err` if either panicked.
fn expand(text: &str) -> Result<(), String> {
    let Ok(tokens) = text.parse::<TokenStream>() else {
        return Ok(());
    };
    let kernel = std::panic::catch_unwind(|| {
        chain::expand_kernel(TokenStream::new(), tokens.clone(), Vec::new())
    });
    let device =
        std::panic::catch_unwind(|| chain::expand_device(TokenStream::new(), tokens.clone()));
    match (kernel, device) {
        (Ok(_), Ok(_)) => Ok(()),
        _ => Err(text.to_string()),
    }
}

fn cases() -> u32 {
    std::env::var("GPU_MACRO_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_functions_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((0usize..400, 0usize..VOCABULARY.len(), 0u8..3), 1..6),
    ) {
        let mut tokens = Vec::new();
        flatten(SEEDS[seed].parse().expect("seeds tokenize"), &mut tokens);
        for (at, word, how) in edits {
            let at = at % (tokens.len() + 1);
            match how {
                0 if at < tokens.len() => tokens[at] = VOCABULARY[word].to_string(),
                1 if at < tokens.len() => {
                    tokens.remove(at);
                }
                _ => tokens.insert(at, VOCABULARY[word].to_string()),
            }
        }
        let text = tokens.join(" ");
        prop_assert!(expand(&text).is_ok(), "the macro panicked on: {}", text);
    }
}

/// Every seed is a kernel the macro accepts, so mutations start from the whole pipeline.
#[test]
fn the_seeds_are_valid_kernels() {
    for seed in SEEDS {
        let tokens: TokenStream = seed.parse().expect("seeds tokenize");
        let expansion = chain::expand_kernel(TokenStream::new(), tokens, Vec::new()).to_string();
        assert!(expansion.contains("SOURCE"), "{seed}\n{expansion}");
        assert!(!expansion.contains("compile_error"), "{seed}\n{expansion}");
    }
}
