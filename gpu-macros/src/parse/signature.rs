//! A function's signature: its qualifiers, generic parameters and parameters, the scalar
//! types they name, and the arguments of `#[kernel(...)]`.

use super::{Parser, SUPPORTED_SCALARS};
use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::types::{Bound, ClosureBound, ClosureTy, Generic, Scalar, Ty};
use proc_macro2::TokenStream;
use quote::ToTokens;

pub(super) fn check_signature(cx: &Ctxt, sig: &syn::Signature, kind: FnKind) {
    let what = match kind {
        FnKind::Kernel => "kernels",
        FnKind::Device => "device functions",
    };
    if let Some(token) = &sig.constness {
        cx.error_spanned_by(
            token,
            format!("{what} cannot be `const fn`: remove `const`"),
        );
    }
    if let Some(token) = &sig.asyncness {
        cx.error_spanned_by(
            token,
            format!("{what} cannot be `async fn`: remove `async`"),
        );
    }
    if let Some(token) = &sig.unsafety {
        cx.error_spanned_by(
            token,
            format!("{what} are safe functions: remove `unsafe` (the generated launcher is safe to call)"),
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            format!("{what} take no ABI: remove `extern`; the macro chooses the CUDA entry point"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("{what} cannot be variadic"));
    }
    if let Some(clause) = &sig.generics.where_clause {
        cx.error_spanned_by(
            clause,
            format!("{what} take bounds inline: `<T: Float>` instead of a `where` clause"),
        );
    }
    if let (syn::ReturnType::Type(_, ty), FnKind::Kernel) = (&sig.output, kind) {
        cx.error_spanned_by(
            ty,
            "kernels cannot return a value: write results into a `&mut [T]` parameter",
        );
    }
}

/// The arguments of `#[kernel(...)]`: nothing, or `launch_bounds(MAX_THREADS)` /
/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)` with integer literals.
pub fn kernel_args(cx: &Ctxt, attr: &TokenStream) -> Option<LaunchBounds> {
    if attr.is_empty() {
        return None;
    }
    const USAGE: &str = "`#[kernel]` takes no arguments or `launch_bounds(MAX_THREADS)` / \
                         `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, e.g. `#[kernel(launch_bounds(256, 2))]`";
    let list = match syn::parse2::<syn::Meta>(attr.clone()) {
        Ok(syn::Meta::List(list)) if list.path.is_ident("launch_bounds") => list,
        _ => {
            cx.error_spanned_by(attr, USAGE);
            return None;
        }
    };
    let numbers = list.parse_args_with(
        syn::punctuated::Punctuated::<syn::LitInt, syn::Token![,]>::parse_terminated,
    );
    let values: Vec<u32> = match numbers {
        Ok(numbers) if (1..=2).contains(&numbers.len()) => {
            let mut values = Vec::new();
            for number in &numbers {
                match number.base10_parse::<u32>() {
                    Ok(value) if value > 0 => values.push(value),
                    _ => {
                        cx.error_spanned_by(number, "launch bounds are positive integers");
                        return None;
                    }
                }
            }
            values
        }
        _ => {
            cx.error_spanned_by(&list, USAGE);
            return None;
        }
    };
    if values[0] > 1024 {
        cx.error_spanned_by(&list, "a block has at most 1024 threads");
        return None;
    }
    Some(LaunchBounds {
        max_threads: values[0],
        min_blocks: values.get(1).copied(),
    })
}

fn is_named(path: &syn::TypePath, name: &str) -> bool {
    path.path.segments.last().is_some_and(|s| s.ident == name)
}

impl Parser<'_> {
    /// `<T: Float, const N: usize>`: type parameters bounded by `Float`, `Integer` or `Number`,
    /// and `usize` const parameters.
    /// (A device function's are recorded too, so its rejection is the only message.)
    pub(super) fn generic_params(&mut self, generics: &syn::Generics) -> Vec<GenericParam> {
        let mut params = Vec::new();
        // `F: Fn(T) -> T` may name type parameters declared after it: read once all are known.
        let mut closures = Vec::new();
        for (index, param) in generics.params.iter().enumerate() {
            // The names live as long as the compilation: they become `&'static str` in the IR.
            let leak = |name: String| -> &'static str { Box::leak(name.into_boxed_str()) };
            match param {
                syn::GenericParam::Type(ty) if self.fn_bound(ty).is_some() => {
                    let name = leak(ty.ident.to_string());
                    // A placeholder until the bound is read.
                    params.push(GenericParam::Closure(Box::leak(Box::new(ClosureBound {
                        index: index as u8,
                        name,
                        params: Vec::new(),
                        ret: None,
                    }))));
                    closures.push((params.len() - 1, index as u8, name, ty));
                }
                syn::GenericParam::Type(ty) => {
                    let bounds: Vec<String> = ty
                        .bounds
                        .iter()
                        .filter_map(|b| match b {
                            syn::TypeParamBound::Trait(t) => {
                                t.path.segments.last().map(|s| s.ident.to_string())
                            }
                            _ => None,
                        })
                        .collect();
                    let bound = match bounds
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .as_slice()
                    {
                        ["Float"] => Bound::Float,
                        ["Integer"] => Bound::Integer,
                        ["Number"] => Bound::Number,
                        _ => {
                            // Device functions also take closures.
                            let closure = match self.kind {
                                FnKind::Device => {
                                    format!(", or a closure type `{}: Fn(A, B) -> R`", ty.ident)
                                }
                                FnKind::Kernel => String::new(),
                            };
                            self.cx.error_spanned_by(
                                ty,
                                format!(
                                    "give `{}` one bound: `Float` (f32, f64, f16, bf16), `Integer` (i32, u32, i64, \
                                     u64, usize) or `Number` (any of them){closure}",
                                    ty.ident
                                ),
                            );
                            Bound::Number
                        }
                    };
                    params.push(GenericParam::Type(Generic {
                        index: index as u8,
                        bound,
                        name: leak(ty.ident.to_string()),
                    }));
                }
                syn::GenericParam::Const(constant) => {
                    if constant.ty.to_token_stream().to_string() != "usize" {
                        self.cx.error_spanned_by(
                            &constant.ty,
                            "const parameters of kernels are `usize`: `const N: usize`",
                        );
                    }
                    params.push(GenericParam::Const(leak(constant.ident.to_string())));
                }
                syn::GenericParam::Lifetime(lifetime) => {
                    self.cx.error_spanned_by(
                        lifetime,
                        "kernels take no lifetime parameters: slices are borrowed for the launch",
                    );
                }
            }
        }
        self.generics = params.clone();
        for (position, index, name, ty) in closures {
            let Some(args) = self.fn_bound(ty) else {
                continue;
            };
            if self.kind == FnKind::Kernel {
                self.cx.error_spanned_by(
                    ty,
                    "kernels take no closures: pass the values they need, or call a generic device \
                     function that takes the closure from the kernel's body",
                );
                continue;
            }
            if let Some(bound) = self.closure_bound(index, name, args) {
                params[position] = GenericParam::Closure(Box::leak(Box::new(bound)));
            }
        }
        params
    }

    /// The `Fn(A, B) -> R` bound of a type parameter, if it has one; `FnMut` and `FnOnce` are
    /// reported.
    fn fn_bound<'t>(
        &self,
        ty: &'t syn::TypeParam,
    ) -> Option<&'t syn::ParenthesizedGenericArguments> {
        let [syn::TypeParamBound::Trait(bound)] = ty.bounds.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let segment = bound.path.segments.last()?;
        let syn::PathArguments::Parenthesized(args) = &segment.arguments else {
            return None;
        };
        match segment.ident.to_string().as_str() {
            "Fn" => Some(args),
            "FnMut" | "FnOnce" => {
                self.cx.error_spanned_by(
                    bound,
                    format!(
                        "write `{}: Fn(..)`: closures in GPU code capture by copy and never change \
                         what they captured",
                        ty.ident
                    ),
                );
                // Read as `Fn`, so the parameter's uses give no further messages.
                Some(args)
            }
            _ => None,
        }
    }

    /// The generic parameter `name` if it is a closure parameter (`F: Fn(..)`).
    pub(super) fn closure_generic(&self, name: &str) -> Option<&'static ClosureBound> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Closure(bound) if bound.name == name => Some(*bound),
            _ => None,
        })
    }

    pub(super) fn generic_type(&self, name: &str) -> Option<Generic> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Type(generic) if generic.name == name => Some(*generic),
            _ => None,
        })
    }

    pub(super) fn generic_const(&self, name: &str) -> Option<&'static str> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Const(n) if *n == name => Some(*n),
            _ => None,
        })
    }

    pub(super) fn param(&mut self, input: &syn::FnArg) -> Option<Param> {
        let typed = match input {
            syn::FnArg::Receiver(receiver) => {
                self.cx.error_spanned_by(
                    receiver,
                    "kernels cannot take `self`: write a free function with `#[kernel]`",
                );
                return None;
            }
            syn::FnArg::Typed(typed) => typed,
        };
        for attr in &typed.attrs {
            self.cx
                .error_spanned_by(attr, "attributes on kernel parameters are not supported");
        }
        let (name, mutable) = match &*typed.pat {
            syn::Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (pat.ident.to_string(), pat.mutability.is_some())
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    "kernel parameters must be plain names such as `x: &[f32]`; patterns are not supported",
                );
                return None;
            }
        };
        let ty = self.param_type(&typed.ty)?;
        if mutable && matches!(ty, Ty::Slice { .. }) {
            self.cx.error_spanned_by(
                &typed.pat,
                "a slice parameter cannot be rebound: remove `mut` (write `x: &mut [T]` to write its elements)",
            );
        }
        let span = Loc::of(typed);
        let local = self.declare(Local {
            name,
            mutable,
            annotation: Some(ty),
        });
        Some(Param { local, ty, span })
    }

    fn param_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        match ty {
            // A `$t:ty` from a `macro_rules!` arrives wrapped in an invisible group.
            syn::Type::Group(group) => self.param_type(&group.elem),
            syn::Type::Reference(reference) => {
                let mutable = reference.mutability.is_some();
                match &*reference.elem {
                    syn::Type::Slice(slice) => {
                        let elem = self.scalar_type(&slice.elem)?;
                        Some(Ty::Slice { elem, mutable })
                    }
                    inner if mutable => {
                        self.cx.error_spanned_by(
                            ty,
                            format!(
                                "`&mut {}` parameters are not supported: a kernel cannot write through a \
                                 reference to a scalar; write results into a slice such as `&mut [{}]`",
                                inner.to_token_stream(),
                                inner.to_token_stream()
                            ),
                        );
                        None
                    }
                    inner => {
                        self.cx.error_spanned_by(
                            ty,
                            format!(
                                "scalar parameters are passed by value: write `{}` instead of `&{}`",
                                inner.to_token_stream(),
                                inner.to_token_stream()
                            ),
                        );
                        None
                    }
                }
            }
            syn::Type::Path(path) if path.qself.is_none() && is_named(path, "Vec") => {
                self.cx.error_spanned_by(
                    ty,
                    "`Vec` cannot be passed to a kernel: take a slice (`&[T]` or `&mut [T]`) and pass a `DeviceBuffer<T>` at launch",
                );
                None
            }
            syn::Type::Path(path)
                if path
                    .path
                    .get_ident()
                    .and_then(|ident| self.closure_generic(&ident.to_string()))
                    .is_some() =>
            {
                let ident = path.path.get_ident()?.to_string();
                let bound = self.closure_generic(&ident)?;
                Some(Ty::Closure(ClosureTy::Bound(bound.index)))
            }
            syn::Type::Path(_) => self.scalar_type(ty).map(Ty::Scalar),
            syn::Type::ImplTrait(_) | syn::Type::TraitObject(_) => {
                self.cx.error_spanned_by(
                    ty,
                    "a closure parameter's type is a generic parameter with a `Fn` bound: \
                     `fn f<F: Fn(f32) -> f32>(op: F)` (on device functions)",
                );
                None
            }
            syn::Type::Array(_) => {
                self.cx.error_spanned_by(
                    ty,
                    "array parameters are not supported: pass a slice `&[T]` (a `DeviceBuffer<T>` at launch)",
                );
                None
            }
            _ => {
                self.cx.error_spanned_by(
                    ty,
                    format!(
                        "unsupported parameter type `{}`: kernel parameters are scalars ({SUPPORTED_SCALARS}) \
                         or slices of them (`&[T]`, `&mut [T]`)",
                        ty.to_token_stream()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn scalar_type(&mut self, ty: &syn::Type) -> Option<Scalar> {
        let name = match ty {
            syn::Type::Path(path) if path.qself.is_none() => path
                .path
                .get_ident()
                .map(|ident| ident.to_string())
                .or_else(|| {
                    // `core::primitive::f32` and the like
                    let last = path.path.segments.last()?;
                    last.arguments
                        .is_none()
                        .then(|| last.ident.to_string())
                        .filter(|name| Scalar::from_rust_name(name).is_some())
                }),
            syn::Type::Paren(paren) => return self.scalar_type(&paren.elem),
            syn::Type::Group(group) => return self.scalar_type(&group.elem),
            _ => None,
        };
        if let Some(generic) = name.as_deref().and_then(|n| self.generic_type(n)) {
            return Some(Scalar::Generic(generic));
        }
        match name.as_deref().and_then(Scalar::from_rust_name) {
            Some(scalar) => Some(scalar),
            None => {
                let written = ty.to_token_stream().to_string();
                let hint = match written.as_str() {
                    "i8" | "i16" | "u8" | "u16" | "i128" | "u128" | "isize" | "char" => {
                        format!("`{written}` is not supported in kernels")
                    }
                    _ => format!("unsupported type `{written}`"),
                };
                self.cx.error_spanned_by(
                    ty,
                    format!("{hint}; the scalar types are {SUPPORTED_SCALARS}"),
                );
                None
            }
        }
    }
}
