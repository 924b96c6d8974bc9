//! The macros never panic: kernels and device functions, valid and mutated token by token, and
//! items built from a grammar of Rust that puts arbitrary syntax in every position the parser
//! visits, go through the whole expansion, which must give tokens (an expansion or
//! `compile_error!`s). `GPU_MACRO_CASES` sets the number of cases of each test (default 256,
//! as in CI).

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
    "fn k(x: &[u32], out: &mut [u32]) { let a = [x[0], x[1]]; let t = (x[2], true); let mut f = (a == [1, 2]) as u32 + (t != (3, false)) as u32; let p = &a[..1]; for (i, &v) in a.iter().enumerate() { f += v * i as u32 + p[0]; } out[0] = f; }",
    "fn k(x: &[u32], out: &mut [u32]) { let first = x.iter().position(|&v| v == 3); if let Some(i) = x.iter().position(|v| *v > 2) { out[0] = i as u32; } match x.iter().max() { Some(m) => out[1] = *m, None => {} } out[2] = first.map_or(7, |i| i as u32); }",
    "fn k(c: &mut [f32]) { const W: [f32; 2] = [0.5, 0.25]; let i = global_idx().x; let mut loc = [c[0]; 4]; for j in (0..4usize).rev().step_by(2) { loc[j] += W[j % 2]; } for v in loc.iter_mut() { *v += 1.0; } let part = &loc[1..3]; c[i] = part[0] + loc.iter().copied().fold(0.0, f32::max); }",
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

/// Rust expressions: leaves of every kind the parser meets, and every form of expression
/// around them, nested.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "x",
        "y",
        "i",
        "a",
        "n",
        "self",
        "T",
        "N",
        "Body::G",
        "0",
        "1u8",
        "2.5f32",
        "1e9",
        "-3",
        "'c'",
        "\"s\"",
        "true",
        "0xff",
        "1_000usize",
        "global_idx().x",
        "thread_idx().y",
        "x.len()",
        "lane_id()",
        "()",
        "[]",
        "..",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(4, 48, 3, |inner| {
        let op = prop::sample::select(vec![
            "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", "&&", "||",
            "=", "+=", "..", "..=",
        ]);
        let unary = prop::sample::select(vec!["-", "!", "*", "&", "&mut "]);
        let method = prop::sample::select(vec![
            "min",
            "max",
            "abs",
            "sqrt",
            "wrapping_add",
            "count_ones",
            "load4",
            "store2",
            "atomic_add",
            "to_bits",
            "step_by",
            "len",
            "unknown",
        ]);
        let call = prop::sample::select(vec![
            "shfl_down_sync",
            "sync_threads",
            "shared_array::<f32, 4>",
            "atomic_add",
            "f",
            "Body::new",
            "min",
            "ballot_sync",
            "wgmma",
            "dynamic_shared::<u32>",
        ]);
        let field = prop::sample::select(vec!["x", "0", "1", "len", "mass"]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (unary, inner.clone()).prop_map(|(u, a)| format!("{u}{a}")),
            inner.clone().prop_map(|a| format!("({a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}; {b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}[{b}]")),
            (inner.clone(), field).prop_map(|(a, f)| format!("{a}.{f}")),
            (inner.clone(), method, inner.clone()).prop_map(|(a, m, b)| format!("{a}.{m}({b})")),
            (inner.clone(), ty()).prop_map(|(a, t)| format!("{a} as {t}")),
            (call, inner.clone(), inner.clone()).prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("if {a} {{ {b} }} else {{ {c} }}")),
            (inner.clone(), pattern(), inner.clone(), inner.clone())
                .prop_map(|(a, p, b, c)| format!("match {a} {{ {p} => {b}, _ => {c} }}")),
            (pattern(), inner.clone(), inner.clone())
                .prop_map(|(p, a, b)| format!("{{ let {p} = {a}; {b} }}")),
            inner.clone().prop_map(|a| format!("loop {{ break {a}; }}")),
            (pattern(), inner.clone()).prop_map(|(p, a)| format!("|{p}| {a}")),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("Body {{ mass: {a}, pos: {b} }}")),
            inner
                .clone()
                .prop_map(|a| format!("println!(\"{{}} {{:.3}}\", {a})")),
            inner
                .clone()
                .prop_map(|a| format!("assert!({a}, \"{{}}\", {a})")),
            inner.clone().prop_map(|a| format!("unsafe {{ {a} }}")),
            inner.clone().prop_map(|a| format!("{a}?")),
            inner.clone().prop_map(|a| format!("return {a}")),
            inner.clone().prop_map(|a| format!("{a}.await")),
            inner.prop_map(|a| format!("vec![{a}]")),
        ]
    })
}

/// Rust types: the kernel language's and others it must refuse.
fn ty() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "f32", "f64", "u8", "i32", "u64", "usize", "bool", "f16", "bf16", "T", "Self", "Body",
        "str", "()", "!", "_", "i128", "char", "String",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| format!("&{t}")),
            inner.clone().prop_map(|t| format!("&mut {t}")),
            inner.clone().prop_map(|t| format!("&[{t}]")),
            inner.clone().prop_map(|t| format!("&mut [{t}]")),
            inner.clone().prop_map(|t| format!("[{t}; 4]")),
            inner.clone().prop_map(|t| format!("[{t}; N]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            inner.clone().prop_map(|t| format!("Option<{t}>")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("fn({a}) -> {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("impl Fn({a}) -> {b}")),
            inner.clone().prop_map(|t| format!("*const {t}")),
            inner.prop_map(|t| format!("DeviceBuffer<{t}>")),
        ]
    })
}

/// Rust patterns.
fn pattern() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "x", "mut y", "_", "0", "1..=3", "ref r", "\"s\"", "Body::A", "Op::Add",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            inner.clone().prop_map(|a| format!("[{a}, ..]")),
            inner
                .clone()
                .prop_map(|a| format!("Body {{ mass: {a}, .. }}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} | {b}")),
            inner.clone().prop_map(|a| format!("&{a}")),
            inner.prop_map(|a| format!("Some({a})")),
        ]
    })
}

/// Statements, each with a pattern, type or expression in each of its positions.
fn statement() -> impl Strategy<Value = String> {
    let expr = expression;
    prop_oneof![
        (pattern(), ty(), expr()).prop_map(|(p, t, e)| format!("let {p}: {t} = {e};")),
        (pattern(), expr()).prop_map(|(p, e)| format!("let {p} = {e};")),
        expr().prop_map(|e| format!("{e};")),
        (expr(), expr()).prop_map(|(a, b)| format!("{a} = {b};")),
        (expr(), expr()).prop_map(|(a, b)| format!("{a} += {b};")),
        (pattern(), expr(), expr()).prop_map(|(p, a, b)| format!("for {p} in {a} {{ {b}; }}")),
        (expr(), expr()).prop_map(|(a, b)| format!("while {a} {{ {b}; }}")),
        (expr(), expr()).prop_map(|(a, b)| format!("if {a} {{ {b}; }}")),
        expr().prop_map(|e| format!("#[unroll({e})] for j in 0..4 {{ }}")),
        (ty(), expr()).prop_map(|(t, e)| format!("const C: {t} = {e};")),
        (pattern(), expr()).prop_map(|(p, e)| format!("let {p} = {e} else {{ return; }};")),
        Just("fn inner() {}".to_string()),
        Just("return;".to_string()),
        expr(),
    ]
}

/// A function with a pattern, type or expression in every position of its signature and body.
fn function() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec![
        "",
        "pub ",
        "#[inline] ",
        "unsafe ",
        "async ",
        "const ",
        "extern \"C\" ",
        "pub(crate) ",
    ]);
    let generics = prop_oneof![
        Just(String::new()),
        Just("<T: Float>".to_string()),
        Just("<const N: usize>".to_string()),
        Just("<'a, T>".to_string()),
        prop::sample::select(vec!["Float", "Integer", "Number", "Copy", "Fn(f32) -> f32"])
            .prop_map(|b| format!("<T: {b}, const N: usize>")),
        ty().prop_map(|t| format!("<F: Fn({t}) -> {t}>")),
    ];
    let params = proptest::collection::vec((pattern(), ty()), 0..4).prop_map(|params| {
        let params: Vec<String> = params
            .into_iter()
            .map(|(p, t)| format!("{p}: {t}"))
            .collect();
        params.join(", ")
    });
    let ret = prop_oneof![Just(String::new()), ty().prop_map(|t| format!("-> {t}"))];
    let body = proptest::collection::vec(statement(), 0..5).prop_map(|s| s.join(" "));
    (prefix, generics, params, ret, body)
        .prop_map(|(pre, g, p, r, b)| format!("{pre}fn k{g}({p}) {r} {{ {b} }}"))
}

/// `#[device]` items besides functions: structs, enums and impl blocks, with arbitrary types
/// and expressions where fields, discriminants and methods go.
fn device_item() -> impl Strategy<Value = String> {
    prop_oneof![
        (ty(), ty()).prop_map(|(a, b)| format!(
            "#[derive(Clone, Copy)] #[repr(C)] pub struct Body {{ pub mass: {a}, pub pos: {b} }}"
        )),
        (ty(), ty(), expression()).prop_map(|(a, b, e)| format!(
            "impl Body {{ pub const G: {a} = {e}; pub fn m(&self, v: {b}) -> {a} {{ {e} }} }}"
        )),
        (ty(), expression())
            .prop_map(|(t, e)| format!("impl Add<{t}> for Body {{ type Output = Body; fn add(self, o: {t}) -> Body {{ {e} }} }}")),
        expression().prop_map(|e| format!("#[repr(u32)] #[derive(Clone, Copy)] enum Op {{ Add = {e}, Mul }}")),
        (ty(), ty()).prop_map(|(a, b)| format!("struct Pair({a}, {b});")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_functions_never_panic(text in function()) {
        prop_assert!(expand(&text).is_ok(), "the macro panicked on: {}", text);
    }

    #[test]
    fn generated_device_items_never_panic(text in device_item()) {
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
