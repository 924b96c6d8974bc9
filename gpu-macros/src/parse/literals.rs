//! Struct literals: `Body { pos, mass: 1.0 }`, `Body { mass: 1.0, ..base }` and tuple structs
//! `Pair(a, b)`, checked against the struct's fields as the parser reads them.

use super::Parser;
use crate::ir::*;
use quote::ToTokens;

impl Parser<'_> {
    /// `Pair(a, b)`: a tuple struct's constructor, as the literal `Pair { 0: a, 1: b }`;
    /// `None` when `path` names no struct (a function, then), `Some(None)` when reported.
    pub(super) fn tuple_struct(
        &mut self,
        path: &syn::Path,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
    ) -> Option<Option<ExprKind>> {
        let name = path.segments.last()?.ident.to_string();
        let ty = if name == "Self" && path.segments.len() == 1 {
            self.self_ty
        } else {
            self.env.lookup(&name)
        };
        let def = match ty {
            Some(crate::types::Ty::Struct(def)) => def,
            Some(_) => return None,
            // A type not gathered yet: fetched like a struct literal's.
            None if super::items::looks_like_type(&name) && self.lookup(&name).is_none() => {
                self.env.note_missing(path);
                return Some(None);
            }
            None => return None,
        };
        if def.0.field("0").is_none() || def.0.fields.len() != args.len() {
            let name = &def.0.name;
            let message = if def.0.field("0").is_some() {
                format!(
                    "`{name}` takes its {} fields in order; {} given",
                    def.0.fields.len(),
                    args.len()
                )
            } else {
                format!("`{name}` has named fields: build it as `{name} {{ .. }}`")
            };
            self.cx.error_spanned_by(path, message);
            return Some(None);
        }
        let mut fields = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            let Some(value) = self.expr(arg) else {
                return Some(None);
            };
            fields.push((index.to_string(), value));
        }
        Some(Some(ExprKind::StructLit { ty: def, fields }))
    }

    /// `Body { mass: 1.0, ..base }` as a block: the named fields' values, then the base (Rust's
    /// order), then the literal with every other field read from the base.
    pub(super) fn struct_update(&mut self, literal: &syn::ExprStruct) -> Option<syn::Expr> {
        let rest = literal.rest.as_ref()?;
        let name = literal.path.segments.last()?.ident.to_string();
        let ty = if name == "Self" && literal.path.segments.len() == 1 {
            self.self_ty
        } else {
            self.env.lookup(&name)
        };
        let Some(crate::types::Ty::Struct(def)) = ty else {
            if ty.is_none() {
                self.env.note_missing(&literal.path);
            } else {
                self.cx
                    .error_spanned_by(&literal.path, format!("`{name}` is not a struct"));
            }
            return None;
        };
        let path = &literal.path;
        // A base that is a place (`p`, `particles[i]`) is read field by field after the named
        // fields, as C++ initializes in order: no block, so the literal stays a value anywhere.
        if super::adapters::is_place(rest) {
            let given: Vec<&syn::Member> = literal.fields.iter().map(|f| &f.member).collect();
            let fields = literal.fields.iter().map(|f| f.to_token_stream()).chain(
                def.0.fields.iter().filter_map(|(field, _)| {
                    let member = field_member(field);
                    (!given.contains(&&member)).then(|| quote::quote!(#member: #rest.#member))
                }),
            );
            return Some(
                syn::parse_quote_spanned! {syn::spanned::Spanned::span(path)=>
                    #path { #(#fields),* }
                },
            );
        }
        let n = self.fresh_names();
        let base = quote::format_ident!("__gpu_base{n}");
        let mut lets = Vec::new();
        let mut named = Vec::new();
        for (index, field) in literal.fields.iter().enumerate() {
            let value = quote::format_ident!("__gpu_field{n}_{index}");
            let expr = &field.expr;
            lets.push(quote::quote!(let #value = #expr;));
            named.push((&field.member, value));
        }
        let fields = def.0.fields.iter().map(|(field, _)| {
            let member = field_member(field);
            match named.iter().find(|(m, _)| **m == member) {
                Some((_, value)) => quote::quote!(#member: #value),
                None => quote::quote!(#member: #base.#member),
            }
        });
        Some(
            syn::parse_quote_spanned! {syn::spanned::Spanned::span(path)=> {
                #(#lets)*
                let #base = #rest;
                #path { #(#fields),* }
            }},
        )
    }

    /// `Body { pos, mass: 1.0 }`.
    pub(super) fn struct_literal(&mut self, literal: &syn::ExprStruct) -> Option<ExprKind> {
        if let Some(rest) = &literal.rest {
            self.cx.error_spanned_by(
                rest,
                "`..base` is not supported in struct literals: name every field",
            );
            return None;
        }
        let name = literal.path.segments.last()?.ident.to_string();
        let ty = if name == "Self" && literal.path.segments.len() == 1 {
            self.self_ty
        } else {
            self.env.lookup(&name)
        };
        let def = match ty {
            Some(crate::types::Ty::Struct(def)) => def,
            Some(other) => {
                self.cx.error_spanned_by(
                    &literal.path,
                    format!("`{}` is not a struct", other.describe()),
                );
                return None;
            }
            None => {
                self.env.note_missing(&literal.path);
                return None;
            }
        };
        let mut fields = Vec::new();
        for field in &literal.fields {
            let name = match &field.member {
                syn::Member::Named(member) => member.to_string(),
                syn::Member::Unnamed(index) => index.index.to_string(),
            };
            if def.0.field(&name).is_none() {
                self.cx.error_spanned_by(
                    &field.member,
                    format!("struct `{}` has no field named `{name}`", def.0.name),
                );
                return None;
            }
            fields.push((name, self.expr(&field.expr)?));
        }
        let missing: Vec<&str> = def
            .0
            .fields
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| fields.iter().all(|(f, _)| f != n))
            .collect();
        if !missing.is_empty() {
            self.cx.error_spanned_by(
                &literal.path,
                format!(
                    "missing field{} {} in initializer of `{}`",
                    if missing.len() == 1 { "" } else { "s" },
                    missing
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    def.0.name
                ),
            );
            return None;
        }
        Some(ExprKind::StructLit { ty: def, fields })
    }
}

/// A field of a struct as a literal names it: `mass`, or `0` of a tuple struct.
fn field_member(field: &str) -> syn::Member {
    match field.parse::<u32>() {
        Ok(index) => syn::Member::Unnamed(syn::Index::from(index as usize)),
        Err(_) => syn::Member::Named(quote::format_ident!("{}", field)),
    }
}
