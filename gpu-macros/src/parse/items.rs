//! `#[device]` items other than functions: structs, fieldless enums and `impl` blocks, and the
//! table of the types a kernel's code may name.
//!
//! A type reaches a kernel the way a device function does (its `#[device]` attribute defines a
//! macro of its name that hands its item over); its `impl` blocks come with it from the file
//! that defines it (see `chain.rs`).

use super::Parser;
use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::types::{EnumDef, EnumRef, Scalar, StructDef, StructRef, Ty};
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::cell::RefCell;

/// The `#[device]` types gathered so far, and the ones named but not gathered yet.
#[derive(Default)]
pub struct TypeEnv {
    pub structs: Vec<StructRef>,
    pub enums: Vec<EnumRef>,
    /// Types the code names that are not here yet: their names and the paths written.
    pub missing: RefCell<Vec<(String, TokenStream)>>,
}

impl TypeEnv {
    /// The type named `name`.
    pub fn lookup(&self, name: &str) -> Option<Ty> {
        if let Some(def) = self.structs.iter().find(|s| s.0.name == name) {
            return Some(Ty::Struct(*def));
        }
        self.enums
            .iter()
            .find(|e| e.0.name == name)
            .map(|def| Ty::Enum(*def))
    }

    /// Notes that `path` names a type to fetch.
    pub fn note_missing(&self, path: &syn::Path) {
        let Some(last) = path.segments.last() else {
            return;
        };
        let name = last.ident.to_string();
        let mut missing = self.missing.borrow_mut();
        if missing.iter().all(|(n, _)| *n != name) {
            let mut path = path.clone();
            if let Some(last) = path.segments.last_mut() {
                last.arguments = syn::PathArguments::None;
            }
            missing.push((name, path.to_token_stream()));
        }
    }
}

/// Whether `name` is written as a type is (`Body`, not `body`), so an unknown one is fetched
/// rather than reported.
pub(super) fn looks_like_type(name: &str) -> bool {
    name.chars().next().is_some_and(char::is_uppercase)
}

/// Whether `attrs` carry `#[derive(..)]` naming `name`.
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("derive")
            && attr
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|paths| {
                    paths
                        .iter()
                        .any(|p| p.segments.last().is_some_and(|s| s.ident == name))
                })
    })
}

/// The `#[repr(..)]` arguments, as written: a name (`C`, `u32`) as itself, one with
/// arguments (`align(16)`) as its name and the arguments' tokens (`align(16)`).
fn repr(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("repr"))
        .filter_map(|attr| {
            attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            .ok()
        })
        .flat_map(|metas| {
            metas
                .into_iter()
                .map(|meta| match meta {
                    syn::Meta::List(list) => {
                        let name = list.path.get_ident().map(ToString::to_string);
                        format!("{}({})", name.unwrap_or_default(), list.tokens)
                    }
                    other => other
                        .path()
                        .get_ident()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The alignment `#[repr(align(N))]` asks of a struct, as CUDA's `float4` has 16 (`None`
/// without one, or where `N` is not a number).
pub fn repr_align(attrs: &[syn::Attribute]) -> Option<u64> {
    repr(attrs).iter().find_map(|r| {
        r.strip_prefix("align(")?
            .strip_suffix(')')?
            .trim()
            .parse()
            .ok()
    })
}

/// The constants from outside that `item`'s array lengths name (`[u32; MAX_NEIGHBOURS]`), each
/// as its path: `#[device]` gives the struct an associated copy of each, which kernels read
/// (see `emit::host::struct_layout_tokens`), since a kernel elsewhere may not see the path.
pub fn struct_length_constants(item: &syn::ItemStruct) -> Vec<TokenStream> {
    let scratch = Ctxt::default();
    let env = TypeEnv::default();
    let mut parser = Parser::new(
        &scratch,
        &env,
        FnKind::Device,
        None,
        &item.ident.to_string(),
    );
    for field in &item.fields {
        parser.array_lengths(&field.ty);
    }
    parser.outer.into_iter().map(|outer| outer.path).collect()
}

impl Parser<'_> {
    /// Records the constants of every array length in `ty`, whatever its element types are.
    fn array_lengths(&mut self, ty: &syn::Type) {
        match ty {
            syn::Type::Array(array) => {
                self.array_lengths(&array.elem);
                let _ = self.const_value(&array.len, true);
            }
            syn::Type::Paren(inner) => self.array_lengths(&inner.elem),
            syn::Type::Group(inner) => self.array_lengths(&inner.elem),
            syn::Type::Tuple(tuple) => tuple.elems.iter().for_each(|elem| self.array_lengths(elem)),
            _ => {}
        }
    }
}

/// What is wrong with a struct or enum for the GPU, reported where it is defined.
pub fn struct_problems(cx: &Ctxt, item: &syn::Item) {
    let (attrs, ident, generics) = match item {
        syn::Item::Struct(s) => (&s.attrs, &s.ident, &s.generics),
        syn::Item::Enum(e) => (&e.attrs, &e.ident, &e.generics),
        _ => return,
    };
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            generics,
            "`#[device]` types cannot be generic: write one type per element type",
        );
    }
    if !derives(attrs, "Copy") || !derives(attrs, "Clone") {
        cx.error_spanned_by(
            ident,
            format!("`{ident}` must be `Copy` to live in GPU memory: add `#[derive(Clone, Copy)]`"),
        );
    }
    let reprs = repr(attrs);
    match item {
        syn::Item::Struct(s) => {
            if reprs.iter().any(|r| r.starts_with("packed")) {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{ident}` is `#[repr(packed)]`, which C++ structs cannot be: kernels read \
                         fields at their natural alignment; drop `packed` (or split the struct)"
                    ),
                );
            } else if !reprs.iter().any(|r| r == "C") {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{ident}` needs `#[repr(C)]`: the GPU's C++ struct and the host's Rust struct \
                         must have one layout"
                    ),
                );
            }
            if matches!(s.fields, syn::Fields::Unit) {
                cx.error_spanned_by(
                    ident,
                    "`#[device]` structs have fields: `struct Body { pos: [f32; 3], mass: f32 }` \
                     or `struct Pair(f32, f32)`",
                );
            }
        }
        syn::Item::Enum(e) => {
            if !reprs.iter().any(|r| enum_repr(r).is_some()) {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{ident}` needs an integer representation such as `#[repr(u32)]`: kernels \
                         pass it as that integer"
                    ),
                );
            }
            for variant in &e.variants {
                if !matches!(variant.fields, syn::Fields::Unit) {
                    cx.error_spanned_by(
                        variant,
                        "`#[device]` enums are fieldless: data belongs in a `#[device]` struct",
                    );
                }
            }
        }
        _ => {}
    }
}

fn enum_repr(name: &str) -> Option<Scalar> {
    match name {
        "u32" => Some(Scalar::U32),
        "i32" => Some(Scalar::I32),
        "u64" => Some(Scalar::U64),
        "i64" => Some(Scalar::I64),
        _ => None,
    }
}

/// A gathered struct's definition; `None` while a field's type is still to be fetched (noted in
/// `env`) or when the struct is malformed (reported at its definition by its own attribute).
pub fn parse_struct(env: &TypeEnv, item: &syn::ItemStruct, path: String) -> Option<StructDef> {
    let scratch = Ctxt::default();
    let mut parser = Parser::new(&scratch, env, FnKind::Device, None, &item.ident.to_string());
    // A tuple struct's fields are named by their positions, as `p.0` and `P { 0: x }` name them.
    let mut fields = Vec::new();
    for (index, field) in item.fields.iter().enumerate() {
        let name = match &field.ident {
            Some(ident) => ident.to_string(),
            None => index.to_string(),
        };
        fields.push((name, parser.value_type(&field.ty)?));
    }
    if fields.is_empty() {
        return None;
    }
    // Its own attribute reports what is wrong with it.
    scratch.into_compile_errors().is_none().then(|| StructDef {
        name: item.ident.to_string(),
        fields,
        partial_eq: derives(&item.attrs, "PartialEq"),
        align: repr_align(&item.attrs),
        path,
    })
}

/// A gathered enum's definition; `None` when it is malformed (reported at its definition).
pub fn parse_enum(item: &syn::ItemEnum, path: String) -> Option<EnumDef> {
    let repr = repr(&item.attrs).iter().find_map(|r| enum_repr(r))?;
    let mut variants = Vec::new();
    let mut next = 0u64;
    for variant in &item.variants {
        if !matches!(variant.fields, syn::Fields::Unit) {
            return None;
        }
        if let Some((_, value)) = &variant.discriminant {
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) = value
            else {
                return None;
            };
            next = int.base10_parse().ok()?;
        }
        variants.push((variant.ident.to_string(), next));
        next += 1;
    }
    Some(EnumDef {
        name: item.ident.to_string(),
        variants,
        repr,
        partial_eq: derives(&item.attrs, "PartialEq"),
        path,
    })
}

/// What is wrong with a `#[device] impl` block whatever its type is, reported where it stands.
pub fn impl_problems(cx: &Ctxt, item: &syn::ItemImpl) {
    let Some((_, trait_path, _)) = &item.trait_ else {
        return;
    };
    let Some(last) = trait_path.segments.last() else {
        return;
    };
    let name = last.ident.to_string();
    if !OPERATOR_TRAITS.iter().any(|(t, _)| *t == name) {
        cx.error_spanned_by(
            trait_path,
            format!(
                "`{name}` cannot be implemented for the GPU: `#[device] impl` blocks are inherent \
                 (`impl {}`) or implement an operator (Add, Sub, Mul, Div, Rem, Neg and their \
                 `*Assign` forms); traits of your own are not supported in kernels",
                item.self_ty.to_token_stream()
            ),
        );
    }
}

/// The operator traits a `#[device] impl` may implement, with their method names.
pub const OPERATOR_TRAITS: [(&str, &str); 11] = [
    ("Add", "add"),
    ("Sub", "sub"),
    ("Mul", "mul"),
    ("Div", "div"),
    ("Rem", "rem"),
    ("Neg", "neg"),
    ("AddAssign", "add_assign"),
    ("SubAssign", "sub_assign"),
    ("MulAssign", "mul_assign"),
    ("DivAssign", "div_assign"),
    ("RemAssign", "rem_assign"),
];

/// `impl T { fn default() -> T }` for a `#[device]` struct that derives `Default`: every field
/// its type's zero (`false`, an array of zeros, another struct's `default()`), as the derive
/// makes it, so kernels call `T::default()` as host code does. `None` for another struct, or
/// one with a field whose zero the kernels cannot spell (`f16`).
pub fn default_impl(item: &syn::ItemStruct) -> Option<syn::ItemImpl> {
    if !derives(&item.attrs, "Default") {
        return None;
    }
    fn zero(ty: &syn::Type) -> Option<TokenStream> {
        match ty {
            syn::Type::Array(array) => {
                let (elem, len) = (zero(&array.elem)?, &array.len);
                Some(quote::quote!([#elem; #len]))
            }
            syn::Type::Paren(inner) => zero(&inner.elem),
            syn::Type::Path(path) => {
                let name = path.path.segments.last()?.ident.to_string();
                match Scalar::from_rust_name(&name) {
                    Some(Scalar::Bool) => Some(quote::quote!(false)),
                    Some(scalar) if !scalar.is_half() => Some(quote::quote!(0 as #path)),
                    Some(_) => None,
                    None => Some(quote::quote!(#path::default())),
                }
            }
            _ => None,
        }
    }
    let ident = &item.ident;
    let value = match &item.fields {
        syn::Fields::Named(fields) => {
            let parts = fields
                .named
                .iter()
                .map(|f| {
                    let (name, value) = (&f.ident, zero(&f.ty)?);
                    Some(quote::quote!(#name: #value))
                })
                .collect::<Option<Vec<_>>>()?;
            quote::quote!(#ident { #(#parts),* })
        }
        syn::Fields::Unnamed(fields) => {
            let parts = fields
                .unnamed
                .iter()
                .map(|f| zero(&f.ty))
                .collect::<Option<Vec<_>>>()?;
            quote::quote!(#ident(#(#parts),*))
        }
        syn::Fields::Unit => return None,
    };
    Some(syn::parse_quote! {
        impl #ident {
            pub fn default() -> #ident { #value }
        }
    })
}

/// The methods and associated constants of a `#[device] impl` block of a gathered type.
pub fn parse_impl(cx: &Ctxt, env: &TypeEnv, item: &syn::ItemImpl) -> Vec<Function> {
    let syn::Type::Path(self_path) = &*item.self_ty else {
        cx.error_spanned_by(
            &item.self_ty,
            "`#[device] impl` blocks are for `#[device]` types",
        );
        return Vec::new();
    };
    let Some(ty) = self_path
        .path
        .segments
        .last()
        .and_then(|s| env.lookup(&s.ident.to_string()))
    else {
        return Vec::new();
    };
    if !item.generics.params.is_empty() {
        cx.error_spanned_by(&item.generics, "`#[device] impl` blocks cannot be generic");
        return Vec::new();
    }
    // An operator trait's methods are named by the trait (and a right-hand type that is not
    // `Self`), so `impl Mul<f32>` and `impl Mul` can both exist.
    let mut suffix = String::new();
    if let Some((_, trait_path, _)) = &item.trait_ {
        let Some(last) = trait_path.segments.last() else {
            return Vec::new();
        };
        let name = last.ident.to_string();
        if !OPERATOR_TRAITS.iter().any(|(t, _)| *t == name) {
            // Reported by the block's own attribute (`impl_problems`).
            return Vec::new();
        }
        if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
            if let Some(syn::GenericArgument::Type(rhs)) = args.args.first() {
                let rhs = rhs.to_token_stream().to_string();
                if rhs != "Self" && rhs != ty.describe() {
                    suffix = format!("__{}", rhs.replace(' ', ""));
                }
            }
        }
    }
    let mut functions = Vec::new();
    for impl_item in &item.items {
        match impl_item {
            syn::ImplItem::Fn(method) => {
                let receiver = method
                    .sig
                    .receiver()
                    .map(|r| match (&r.reference, &r.mutability) {
                        (Some(_), Some(_)) => PassBy::RefMut,
                        (Some(_), None) => PassBy::Ref,
                        (None, _) => PassBy::Value,
                    });
                let owner = Owner {
                    ty,
                    method: format!("{}{suffix}", method.sig.ident),
                    receiver,
                    constant: false,
                };
                let function = syn::ItemFn {
                    attrs: method.attrs.clone(),
                    vis: method.vis.clone(),
                    sig: method.sig.clone(),
                    block: Box::new(method.block.clone()),
                };
                functions.push(super::parse_function(
                    cx,
                    env,
                    &function,
                    FnKind::Device,
                    Some(owner),
                ));
            }
            syn::ImplItem::Const(constant) => {
                // `const G: f32 = 9.8;` is a function of no arguments returning the value.
                let ident = &constant.ident;
                let const_ty = &constant.ty;
                let expr = &constant.expr;
                let function: syn::ItemFn =
                    syn::parse_quote! { fn #ident() -> #const_ty { #expr } };
                let owner = Owner {
                    ty,
                    method: ident.to_string(),
                    receiver: None,
                    constant: true,
                };
                functions.push(super::parse_function(
                    cx,
                    env,
                    &function,
                    FnKind::Device,
                    Some(owner),
                ));
            }
            // `type Output = Complex;` says what the signatures already say.
            syn::ImplItem::Type(_) => {}
            other => cx.error_spanned_by(
                other,
                "`#[device] impl` blocks hold methods, associated functions and constants",
            ),
        }
    }
    functions
}

/// The part of a `#[device] impl` that also compiles for the host: the methods that only
/// compute (no intrinsics, no device functions, no shared memory). An operator `impl` is kept
/// whole or not at all.
pub fn host_impl(item: &syn::ItemImpl) -> Option<syn::ItemImpl> {
    let mut host = item.clone();
    host.attrs
        .retain(|a| a.path().segments.last().is_none_or(|s| s.ident != "device"));
    // Kernel code indexes in loops (the language has no iterators but ranges).
    host.attrs
        .push(syn::parse_quote!(#[allow(clippy::needless_range_loop)]));
    // Kernels call the methods through their own copies, which rustc does not see: a method
    // only kernels use is not dead.
    host.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    let before = host.items.len();
    host.items.retain(|item| match item {
        syn::ImplItem::Fn(method) => host_compatible(method.block.to_token_stream()),
        _ => true,
    });
    if item.trait_.is_some() && host.items.len() != before {
        return None;
    }
    Some(host)
}

/// Whether `tokens` call no free function (an intrinsic or a device function); paths
/// (`Self::new`, `f32::sqrt`), methods of numbers and constructors (`Some(x)`) are fine.
fn host_compatible(tokens: TokenStream) -> bool {
    use proc_macro2::TokenTree;
    const KEYWORDS: [&str; 8] = ["if", "while", "match", "return", "in", "for", "let", "else"];
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(group) => {
                if !host_compatible(group.stream()) {
                    return false;
                }
            }
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                let after_path_or_dot = i > 0
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
                let called = matches!(
                    trees.get(i + 1),
                    Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Parenthesis
                );
                let turbofish = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                    && matches!(trees.get(i + 3), Some(TokenTree::Punct(p)) if p.as_char() == '<');
                let free = !after_path_or_dot
                    && !looks_like_type(&name)
                    && !KEYWORDS.contains(&name.as_str());
                if free && (called || turbofish) {
                    return false;
                }
                if after_path_or_dot
                    && called
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.')
                    && (0..4).any(|count| crate::intrinsics::Op::method(&name, count).is_some())
                {
                    return false;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
    true
}

/// The name of the macro that hands a `#[device] impl` block to kernels: unique among its
/// type's blocks (an inherent block is named by its first item, a trait's by the trait and its
/// right-hand type), and the same whether the block's attribute or a kernel computes it.
pub fn impl_macro_name(item: &syn::ItemImpl) -> Option<String> {
    let syn::Type::Path(self_path) = &*item.self_ty else {
        return None;
    };
    let ty = self_path.path.segments.last()?.ident.to_string();
    let what = match &item.trait_ {
        Some((_, path, _)) => {
            let last = path.segments.last()?;
            let rhs = match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .map(|a| a.to_token_stream().to_string())
                    .collect::<Vec<_>>()
                    .join("_"),
                _ => String::new(),
            };
            let rhs: String = rhs
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if rhs.is_empty() {
                last.ident.to_string()
            } else {
                format!("{}_{rhs}", last.ident)
            }
        }
        None => match item.items.first()? {
            syn::ImplItem::Fn(f) => f.sig.ident.to_string(),
            syn::ImplItem::Const(c) => c.ident.to_string(),
            syn::ImplItem::Type(t) => t.ident.to_string(),
            _ => return None,
        },
    };
    Some(format!("__gpu_impl_{ty}_{what}"))
}
