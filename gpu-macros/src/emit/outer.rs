//! Constants from outside the kernel, on the host side: one place turns "a Rust constant of a
//! known type, named by a path" into the CUDA source and the CPU twin.
//!
//! The host module gets one typed copy per constant (`const __GPU_CONST_f_0: usize =
//! super::TILE;`), spanned at the use, so rustc checks the type the kernel's code needs against
//! the constant's own and reports a mismatch at the user's line. The twin reads the copies;
//! the CUDA source, where the emitter left a placeholder, gets each copy's value as a C++
//! literal, spelled and joined by `const fn`s of the runtime while rustc compiles the crate.
//! A constant whose type the checker assumed also gets an assertion of that type, whose
//! message says which conversion to write.

use crate::check::Types;
use crate::ir::*;
use crate::types::{field_length_copy, OuterConst, Scalar, OUTER_MARK};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};

/// The source as the host module spells it.
pub struct HostSource {
    /// The source text; outer constants appear as placeholders.
    pub text: String,
    /// `SOURCE`'s initializer: a string literal, or the pieces joined at compile time.
    pub init: TokenStream,
    /// The typed copies of the outer constants and the pieces, for the host module.
    pub items: TokenStream,
}

/// The host side of `source`, whose placeholders name `program`'s outer constants.
pub fn host_source(
    program: &Program,
    types: &[Types],
    source: String,
    rt: &TokenStream,
) -> HostSource {
    let mut items = TokenStream::new();
    for (function, types) in program.functions.iter().zip(types) {
        let prefix = call_path(program, function);
        for (index, (outer, scalar)) in function.outer.iter().zip(&types.outer).enumerate() {
            let constant = OuterConst {
                function: Box::leak(function.name.clone().into_boxed_str()),
                index: index as u32,
                name: "",
            };
            let name = format_ident!("{}", constant.twin());
            let span = outer.span.start;
            let ty = rust_type(*scalar, rt, span);
            let path = respan(resolve(prefix.as_ref(), &outer.path), span);
            // A table is read through a slice of its elements, whatever its length.
            let (ty, value) = match outer.cast {
                _ if outer.table => (quote_spanned!(span=> &[#ty]), quote_spanned!(span=> &#path)),
                Some(_) => (ty.clone(), quote_spanned!(span=> #path as #ty)),
                // The assertion reports a constant of another type; `as` keeps it to one error.
                None if types.assumed[index] => {
                    items.extend(quote_spanned! {span=>
                        const _: () = #rt::__source::assumed_type::<#ty, _>(&#path);
                    });
                    (ty.clone(), quote_spanned!(span=> #path as #ty))
                }
                None => (ty, path),
            };
            // `X as T` is the user's conversion; it may name `X`'s own type.
            items.extend(quote_spanned! {span=>
                #[allow(non_upper_case_globals, clippy::unnecessary_cast)]
                const #name: #ty = #value;
            });
            // A table's length, for launch conditions that narrow by it.
            if outer.table {
                let len = format_ident!("{}", constant.twin_len());
                items.extend(quote! {
                    #[allow(non_upper_case_globals, dead_code)]
                    const #len: usize = #name.len();
                });
            }
        }
    }
    items.extend(struct_length_copies(program));
    if !source.contains(OUTER_MARK) {
        return HostSource {
            init: quote!(#source),
            text: source,
            items,
        };
    }
    let mut pieces = Vec::new();
    let mut parts = source.split(OUTER_MARK);
    let first = parts.next().unwrap_or_default();
    pieces.push(quote!(#rt::__source::SourcePiece::Text(#first)));
    let rest: Vec<&str> = parts.collect();
    for triple in rest.chunks(3) {
        let [function, index, text] = triple else {
            continue;
        };
        let found = program.function(function).and_then(|(f, _)| {
            let index = index.parse::<usize>().ok()?;
            Some((
                *types[f].outer.get(index)?,
                program.functions[f].outer[index].table,
            ))
        });
        let (scalar, table) = found.unwrap_or((Scalar::Usize, false));
        let name = format_ident!("__GPU_CONST_{}_{}", function, index);
        pieces.push(if table {
            table_piece(scalar, &name, rt)
        } else {
            piece(scalar, &name, rt)
        });
        pieces.push(quote!(#rt::__source::SourcePiece::Text(#text)));
    }
    items.extend(quote! {
        const __GPU_PIECES: &[#rt::__source::SourcePiece] = &[#(#pieces),*];
        const __GPU_SOURCE_LEN: usize = #rt::__source::source_len(__GPU_PIECES);
        const __GPU_SOURCE_BYTES: [u8; __GPU_SOURCE_LEN] =
            #rt::__source::source_bytes::<__GPU_SOURCE_LEN>(__GPU_PIECES);
    });
    HostSource {
        init: quote!(#rt::__source::source_str(&__GPU_SOURCE_BYTES)),
        text: source,
        items,
    }
}

/// The typed copies of the constants that the program's structs' array lengths name, read
/// through each struct's associated copy (`#[device]` defines it beside the struct).
fn struct_length_copies(program: &Program) -> TokenStream {
    let mut items = TokenStream::new();
    for def in &program.structs {
        // Already as the host module names it (`super::Cell`).
        let Ok(path) = def.0.path.parse::<TokenStream>() else {
            continue;
        };
        for constant in def.0.length_constants() {
            let name = format_ident!("{}", constant.twin());
            let copy = format_ident!("{}", field_length_copy(constant.name));
            items.extend(quote! {
                #[allow(non_upper_case_globals, dead_code)]
                const #name: usize = #path::#copy;
            });
        }
    }
    items
}

/// The piece that spells the typed copy `name` as a C++ literal.
fn piece(scalar: Scalar, name: &proc_macro2::Ident, rt: &TokenStream) -> TokenStream {
    let piece = quote!(#rt::__source::SourcePiece);
    match scalar {
        Scalar::Bool => quote!(#piece::Bool(#name)),
        Scalar::I8 | Scalar::I16 | Scalar::I32 => quote!(#piece::Signed(#name as i64, "")),
        Scalar::U8 | Scalar::U16 => quote!(#piece::Unsigned(#name as u64, "u")),
        Scalar::I64 => quote!(#piece::Signed(#name, "ll")),
        Scalar::Isize => quote!(#piece::Signed(#name as i64, "ll")),
        Scalar::U32 => quote!(#piece::Unsigned(#name as u64, "u")),
        Scalar::U64 | Scalar::Usize => quote!(#piece::Unsigned(#name as u64, "ull")),
        Scalar::F32 => quote!(#piece::F32(#name.to_bits())),
        Scalar::F64 => quote!(#piece::F64(#name.to_bits())),
        Scalar::F16 => quote!(#piece::Half("rs_f16", #name.to_bits())),
        Scalar::Bf16 => quote!(#piece::Half("rs_bf16", #name.to_bits())),
        // The checker reported it; this keeps the expansion well-formed.
        Scalar::Generic(_) => quote!(#piece::Unsigned(0, "ull")),
    }
}

/// The piece that spells the table `name` (a `&[T]` copy) as its C++ initializer's values.
fn table_piece(scalar: Scalar, name: &proc_macro2::Ident, rt: &TokenStream) -> TokenStream {
    let table = quote!(#rt::__source::Table);
    let variant = match scalar {
        Scalar::Bool => quote!(Bool),
        Scalar::I8 => quote!(I8),
        Scalar::I16 => quote!(I16),
        Scalar::I32 => quote!(I32),
        Scalar::I64 => quote!(I64),
        Scalar::Isize => quote!(Isize),
        Scalar::U8 => quote!(U8),
        Scalar::U16 => quote!(U16),
        Scalar::U32 => quote!(U32),
        Scalar::U64 => quote!(U64),
        Scalar::Usize => quote!(Usize),
        Scalar::F32 => quote!(F32),
        Scalar::F64 => quote!(F64),
        // The checker reported these; this keeps the expansion well-formed.
        Scalar::F16 | Scalar::Bf16 | Scalar::Generic(_) => {
            return quote!(#rt::__source::SourcePiece::Text("0"))
        }
    };
    quote!(#rt::__source::SourcePiece::List(#table::#variant(#name)))
}

fn rust_type(scalar: Scalar, rt: &TokenStream, span: Span) -> TokenStream {
    let ident = proc_macro2::Ident::new(scalar.rust_name(), span);
    if scalar.is_half() {
        quote_spanned!(span=> #rt::half::#ident)
    } else {
        quote!(#ident)
    }
}

/// The path a device function was called by, from the kernel's module; `None` for the kernel.
fn call_path(program: &Program, function: &Function) -> Option<TokenStream> {
    if function.kind == FnKind::Kernel {
        return None;
    }
    program.functions.iter().find_map(|caller| {
        caller.exprs.iter().find_map(|expr| match &expr.kind {
            ExprKind::Call { name, path, .. } if *name == function.name => Some(path.clone()),
            _ => None,
        })
    })
}

/// `path` as the host module (a child of the kernel's module) names it. A device function's
/// outer constants are reached through the module `#[device]` defines beside it, named like
/// the function, which imports everything the function's module sees.
fn resolve(call_path: Option<&TokenStream>, path: &TokenStream) -> TokenStream {
    let first = path.clone().into_iter().next();
    let absolute = match &first {
        Some(TokenTree::Ident(ident)) => ident == "crate",
        Some(TokenTree::Punct(punct)) => punct.as_char() == ':',
        _ => false,
    };
    if absolute {
        return path.clone();
    }
    let from_kernel = match call_path {
        None => path.clone(),
        Some(call) => {
            let rest = without_self(path);
            quote!(#call :: #rest)
        }
    };
    match from_kernel.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) if ident == "crate" => from_kernel,
        Some(TokenTree::Punct(punct)) if punct.as_char() == ':' => from_kernel,
        Some(TokenTree::Ident(ident)) if ident == "self" => {
            let rest = without_self(&from_kernel);
            quote!(super :: #rest)
        }
        _ => quote!(super :: #from_kernel),
    }
}

/// `path` without a leading `self::`.
fn without_self(path: &TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = path.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(ident), TokenTree::Punct(_), TokenTree::Punct(_), rest @ ..]
            if ident == "self" =>
        {
            rest.iter().cloned().collect()
        }
        _ => path.clone(),
    }
}

/// `tokens` with every span set to `span`, so rustc's messages about the path point at the use.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}
