//! Destructuring, as Rust writes it: `let (a, mut b) = ..;`, `let [x, y, z] = ..;`, `let Body
//! { pos, mass: m, .. } = ..;`, `let Pair(lo, hi) = ..;`, and tuple assignments `(a, b) = (b,
//! a + b);`, each a value bound once and its parts taken by `let`s or assignments of their own.

use super::statements::pattern_names;
use super::{strip_parens, Parser};
use crate::ir::*;
use crate::types::Ty;

impl Parser<'_> {
    /// `let [a, b, _] = array;`, `let Body { pos, mass: m } = body;` (`..` for the fields left
    /// out) or `let Pair(a, b) = pair;`: the value bound by a hidden name, then each part by its
    /// own `let` (`let a = value[0];`, `let m = value.mass;`), in the current scope.
    pub(super) fn let_destructured(
        &mut self,
        local: &syn::Local,
        pat: &syn::Pat,
        annotation: Option<&syn::Type>,
    ) -> Option<StmtKind> {
        let Some(init) = local.init.as_ref().filter(|init| init.diverge.is_none()) else {
            self.cx.error_spanned_by(
                local,
                "a destructuring `let` needs an initial value: `let [a, b] = ...;`",
            );
            self.declare_rejected(pattern_names(pat));
            return None;
        };
        let hidden = quote::format_ident!("__gpu_parts{}", self.fresh_names());
        // `let [r, g, b, a] = px.to_le_bytes();`: the value's bytes, as many as the pattern
        // names (`to_be_bytes` from the top), each shifted down and cast.
        let bytes = match (strip_parens(&init.expr), pat) {
            (syn::Expr::MethodCall(call), syn::Pat::Slice(slice))
                if call.args.is_empty()
                    && matches!(
                        call.method.to_string().as_str(),
                        "to_le_bytes" | "to_be_bytes" | "to_ne_bytes"
                    )
                    && [1, 2, 4, 8].contains(&slice.elems.len()) =>
            {
                Some((
                    &*call.receiver,
                    call.method == "to_be_bytes",
                    slice.elems.len(),
                ))
            }
            _ => None,
        };
        let value = match bytes {
            Some((receiver, _, _)) => receiver,
            None => &*init.expr,
        };
        let annotation = annotation
            .filter(|_| bytes.is_none())
            .map(|ty| quote::quote!(: #ty));
        let mut lets: Vec<syn::Stmt> = vec![syn::parse_quote!(let #hidden #annotation = #value;)];
        // Each part: its pattern (a name, `mut` name or `_`) and how it is read.
        let mut parts: Vec<(&syn::Pat, proc_macro2::TokenStream)> = Vec::new();
        let mut unsupported = None;
        match pat {
            syn::Pat::Slice(slice) if bytes.is_some() => {
                let (_, big_endian, count) = bytes?;
                for (i, elem) in slice.elems.iter().enumerate() {
                    let byte = if big_endian { count - 1 - i } else { i };
                    let shift = (8 * byte) as u32;
                    parts.push((elem, quote::quote!((#hidden >> #shift) as u8)));
                }
            }
            syn::Pat::Slice(slice) => {
                for (i, elem) in slice.elems.iter().enumerate() {
                    let index = syn::Index::from(i);
                    parts.push((elem, quote::quote!(#hidden[#index])));
                }
            }
            syn::Pat::TupleStruct(tuple) => {
                for (i, elem) in tuple.elems.iter().enumerate() {
                    let index = syn::Index::from(i);
                    parts.push((elem, quote::quote!(#hidden.#index)));
                }
            }
            syn::Pat::Struct(fields) => {
                for field in &fields.fields {
                    let member = &field.member;
                    parts.push((&field.pat, quote::quote!(#hidden.#member)));
                }
            }
            _ => {}
        }
        for (part, read) in &parts {
            match part {
                syn::Pat::Wild(_) => {}
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    lets.push(syn::parse_quote!(let #ident = #read;))
                }
                other => unsupported = Some(*other),
            }
        }
        if let syn::Pat::Slice(slice) = pat {
            if let Some(rest) = slice.elems.iter().find(|e| matches!(e, syn::Pat::Rest(_))) {
                unsupported = Some(rest);
            }
        }
        if let Some(other) = unsupported {
            self.cx.error_spanned_by(
                other,
                "a destructuring `let` binds names, `mut` names or `_` to each part (`let [a, \
                 mut b, _] = v;`, `let Body { pos, mass: m, .. } = b;`), without `..` in arrays",
            );
            self.declare_rejected(pattern_names(pat));
            return None;
        }
        self.lets_as_statement(lets)
    }

    /// `lets` as this statement: all but the last, and what the last needs before it, join
    /// the prelude; the last is the statement.
    fn lets_as_statement(&mut self, mut lets: Vec<syn::Stmt>) -> Option<StmtKind> {
        let last = lets.pop()?;
        for stmt in &lets {
            let stmts = self.stmts(stmt);
            self.prelude.extend(stmts);
        }
        let mut stmts = self.with_prelude(|this| this.stmt(&last));
        let last = stmts.pop()?;
        self.prelude.extend(stmts);
        Some(last.kind)
    }

    /// The number type written for `place`: an element of a slice or array, or a variable,
    /// whose declaration names it (a parameter, an annotated `let`).
    pub(super) fn written_type(&self, place: &syn::Expr) -> Option<Ty> {
        let (name, element) = match strip_parens(place) {
            syn::Expr::Index(index) => (&*index.expr, true),
            other => (other, false),
        };
        let syn::Expr::Path(path) = strip_parens(name) else {
            return None;
        };
        let local = self.lookup(&path.path.get_ident()?.to_string())?;
        let ty = self.locals[local.0 as usize].annotation?;
        let ty = match (ty, element) {
            (Ty::Slice { elem, .. } | Ty::Array { elem, .. } | Ty::Shared { elem, .. }, true) => {
                *elem
            }
            (ty, false) => ty,
            _ => return None,
        };
        matches!(ty, Ty::Scalar(s) if !s.is_half()).then_some(ty)
    }

    /// `(a, b) = (b, a + b);`: the value computed whole into a hidden tuple, then each place
    /// assigned its part (`_` skipped), so every part reads the places before any is written.
    pub(super) fn assign_tuple(&mut self, assign: &syn::ExprAssign) -> Option<StmtKind> {
        let syn::Expr::Tuple(places) = strip_parens(&assign.left) else {
            return None;
        };
        let hidden = quote::format_ident!("__gpu_parts{}", self.fresh_names());
        let value = &assign.right;
        let mut stmts: Vec<syn::Stmt> = vec![syn::parse_quote!(let #hidden = #value;)];
        for (i, place) in places.elems.iter().enumerate() {
            if matches!(place, syn::Expr::Infer(_)) {
                continue;
            }
            let index = syn::Index::from(i);
            // A place that does not read back as one (a `match` or a block would start its
            // own statement) is an error at it, where parsing the statement would panic.
            match syn::parse2::<syn::Stmt>(quote::quote!((#place) = #hidden.#index;)) {
                Ok(stmt) => stmts.push(stmt),
                Err(_) => self.cx.error_spanned_by(
                    place,
                    "a tuple assignment writes variables, fields or elements: `(a, b) = (b, a);`",
                ),
            }
        }
        let block: syn::Block = syn::parse_quote!({ #(#stmts)* });
        Some(StmtKind::Block(self.block(&block)))
    }

    /// `let (a, mut b, _) = init;`.
    pub(super) fn let_tuple(
        &mut self,
        local: &syn::Local,
        tuple: &syn::PatTuple,
    ) -> Option<StmtKind> {
        if let Some(values) = local
            .init
            .as_ref()
            .filter(|init| init.diverge.is_none())
            .and_then(|init| match strip_parens(&init.expr) {
                syn::Expr::Tuple(values) => Some(values),
                _ => None,
            })
        {
            if let Some(kind) = self.let_tuple_of_values(tuple, values) {
                return Some(kind);
            }
        }
        let init = match &local.init {
            Some(init) if init.diverge.is_none() => self.value(&init.expr),
            _ => {
                self.cx.error_spanned_by(
                    local,
                    "a tuple pattern needs an initial value: `let (a, b) = ...;`",
                );
                None
            }
        };
        let mut locals = Vec::new();
        for (i, elem) in tuple.elems.iter().enumerate() {
            match elem {
                syn::Pat::Wild(_) => locals.push(None),
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    locals.push(Some(self.declare(Local {
                        name: ident.ident.to_string(),
                        mutable: ident.mutability.is_some(),
                        annotation: None,
                        element: false,
                    })));
                }
                other => {
                    self.cx.error_spanned_by(
                        other,
                        "tuple patterns in kernels bind names or `_`: `let (a, mut b, _) = ...;`",
                    );
                    // The names left are declared anyway, so their uses don't each report a
                    // missing name.
                    for name in tuple.elems.iter().skip(i).flat_map(pattern_names) {
                        self.declare(Local {
                            name,
                            mutable: false,
                            annotation: None,
                            element: false,
                        });
                    }
                    return None;
                }
            }
        }
        Some(StmtKind::LetTuple {
            locals,
            init: init?,
        })
    }

    /// `let (row, col) = (tid / 8, tid % 8);`: each value computed into a hidden `let`, all
    /// before any name is bound (`let (a, b) = (b, a);` swaps), then each name bound by a `let`
    /// of its own, so each part is a value of its own to the analyses (a part that indexes
    /// shared memory stays 32-bit, where a tuple's would be 64-bit). `None` where the pattern
    /// has other parts than names and `_`, or another arity, which the tuple's path reports.
    fn let_tuple_of_values(
        &mut self,
        tuple: &syn::PatTuple,
        values: &syn::ExprTuple,
    ) -> Option<StmtKind> {
        let simple = |p: &syn::Pat| match p {
            syn::Pat::Wild(_) => true,
            syn::Pat::Ident(ident) => ident.by_ref.is_none() && ident.subpat.is_none(),
            _ => false,
        };
        if values.elems.len() != tuple.elems.len() || !tuple.elems.iter().all(simple) {
            return None;
        }
        let base = self.fresh_names();
        let hidden = |i: usize| quote::format_ident!("__gpu_parts{base}_{i}");
        let mut lets: Vec<syn::Stmt> = Vec::new();
        for (i, value) in values.elems.iter().enumerate() {
            let name = hidden(i);
            lets.push(syn::parse_quote!(let #name = #value;));
        }
        for (i, part) in tuple.elems.iter().enumerate() {
            if let syn::Pat::Ident(ident) = part {
                let name = hidden(i);
                lets.push(syn::parse_quote!(let #ident = #name;));
            }
        }
        self.lets_as_statement(lets)
    }
}
