//! A function's signature: its qualifiers, generic parameters and parameters, the scalar
//! types they name, and the arguments of `#[kernel(...)]`.

use super::expressions::is_constant_name;
use super::statements::pattern_names;
use super::{Parser, SUPPORTED_SCALARS};
use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::types::{Bound, ClosureBound, ClosureTy, Generic, Scalar, Ty};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::spanned::Spanned;

/// `item` with what Rust writes beside a signature's generics moved into them, as the kernel
/// language takes them: a `where` clause's bounds on the function's own type parameters
/// (`where T: Number, F: Fn(T, T) -> T`), and parameters typed `impl Fn(f32) -> f32`, each a
/// type parameter of its own. `None` when there is neither.
pub(super) fn desugared(item: &syn::ItemFn) -> Option<syn::ItemFn> {
    let mut item = item.clone();
    let mut changed = false;
    if let Some(clause) = item.sig.generics.where_clause.take() {
        let mut left = syn::punctuated::Punctuated::<syn::WherePredicate, syn::Token![,]>::new();
        for predicate in clause.predicates {
            let target = match &predicate {
                syn::WherePredicate::Type(typed) if typed.lifetimes.is_none() => {
                    match &typed.bounded_ty {
                        syn::Type::Path(path) if path.qself.is_none() => path.path.get_ident(),
                        _ => None,
                    }
                }
                _ => None,
            };
            let param = target.and_then(|name| {
                item.sig
                    .generics
                    .params
                    .iter_mut()
                    .find_map(|param| match param {
                        syn::GenericParam::Type(ty) if ty.ident == *name => Some(ty),
                        _ => None,
                    })
            });
            match (param, &predicate) {
                (Some(param), syn::WherePredicate::Type(typed)) => {
                    param.bounds.extend(typed.bounds.iter().cloned());
                    changed = true;
                }
                _ => left.push(predicate),
            }
        }
        if !left.is_empty() {
            item.sig.generics.where_clause = Some(syn::WhereClause {
                where_token: clause.where_token,
                predicates: left,
            });
        }
    }
    let mut count = 0;
    for input in item.sig.inputs.iter_mut() {
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let syn::Type::ImplTrait(bounds) = &*typed.ty else {
            continue;
        };
        let name = quote::format_ident!("ImplFn{count}", span = typed.ty.span());
        count += 1;
        let bounds = &bounds.bounds;
        item.sig
            .generics
            .params
            .push(syn::parse_quote!(#name: #bounds));
        *typed.ty = syn::parse_quote!(#name);
        changed = true;
    }
    if count > 0 && item.sig.generics.lt_token.is_none() {
        item.sig.generics.lt_token = Some(Default::default());
        item.sig.generics.gt_token = Some(Default::default());
    }
    changed.then_some(item)
}

pub(super) fn check_signature(cx: &Ctxt, sig: &syn::Signature, kind: FnKind) {
    let what = match kind {
        FnKind::Kernel => "kernels",
        FnKind::Device => "device functions",
    };
    // A `const fn` helper (`const fn div_up(a: u32, b: u32) -> u32`) is a device function
    // like any other; a kernel runs on the GPU only.
    if let (Some(token), FnKind::Kernel) = (&sig.constness, kind) {
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
            format!(
                "a `where` clause of {what} bounds their own type parameters only (`where T: \
                 Float, F: Fn(T) -> T`)"
            ),
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
/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)` with integer literals or constants from outside
/// the kernel (resolved by [`super::set_launch_bounds`]).
pub fn kernel_args(cx: &Ctxt, attr: &TokenStream) -> Option<LaunchBounds> {
    if attr.is_empty() {
        return None;
    }
    const USAGE: &str = "`#[kernel]` takes no arguments or `launch_bounds(MAX_THREADS)` / \
                         `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, e.g. `#[kernel(launch_bounds(256, 2))]` \
                         or `#[kernel(launch_bounds(BLOCK))]` with a constant";
    let list = match syn::parse2::<syn::Meta>(attr.clone()) {
        Ok(syn::Meta::List(list)) if list.path.is_ident("launch_bounds") => list,
        _ => {
            cx.error_spanned_by(attr, USAGE);
            return None;
        }
    };
    let args = list.parse_args_with(
        syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
    );
    let values: Vec<LaunchValue> = match args {
        Ok(args) if (1..=2).contains(&args.len()) => {
            let mut values = Vec::new();
            for arg in &args {
                // A `$n:literal` from a `macro_rules!` arrives wrapped in an invisible group.
                match super::strip_parens(arg) {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(number),
                        ..
                    }) => match number.base10_parse::<u32>() {
                        Ok(value) if value > 0 => values.push(LaunchValue::Known(value)),
                        _ => {
                            cx.error_spanned_by(number, "launch bounds are positive integers");
                            return None;
                        }
                    },
                    syn::Expr::Path(path)
                        if path.qself.is_none()
                            && path
                                .path
                                .segments
                                .last()
                                .is_some_and(|s| is_constant_name(&s.ident.to_string())) =>
                    {
                        // Lives as long as the compilation, as the IR's interned names.
                        values.push(LaunchValue::Named(Box::leak(Box::new(path.path.clone()))));
                    }
                    other => {
                        cx.error_spanned_by(
                            other,
                            "launch bounds are positive integers or constants (`BLOCK`)",
                        );
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
    if matches!(values[0], LaunchValue::Known(n) if n > 1024) {
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
                                    "give `{}` one bound: `Float` (f32, f64, f16, bf16), `Integer` (i8, u8, \
                                     i16, u16, i32, u32, i64, u64, usize) or `Number` (any of them){closure}",
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
                    let ty = match constant.ty.to_token_stream().to_string().as_str() {
                        "bool" => Scalar::Bool,
                        "usize" => Scalar::Usize,
                        _ => {
                            self.cx.error_spanned_by(
                                &constant.ty,
                                format!(
                                    "const parameters of {} are `usize` or `bool`: `const N: \
                                     usize`, `const ASCENDING: bool`",
                                    self.what_plural()
                                ),
                            );
                            Scalar::Usize
                        }
                    };
                    params.push(GenericParam::Const(leak(constant.ident.to_string()), ty));
                }
                syn::GenericParam::Lifetime(lifetime) => {
                    self.cx.error_spanned_by(
                        lifetime,
                        format!(
                            "{} take no lifetime parameters: remove `{}`; slices are borrowed for the {}",
                            self.what_plural(),
                            lifetime.lifetime,
                            match self.kind {
                                FnKind::Kernel => "launch",
                                FnKind::Device => "call",
                            }
                        ),
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

    /// The const parameter `name` (`usize` or `bool`).
    pub(super) fn generic_const(&self, name: &str) -> Option<&'static str> {
        self.generic_const_typed(name).map(|(n, _)| n)
    }

    /// The const parameter `name` with its type.
    pub(super) fn generic_const_typed(&self, name: &str) -> Option<(&'static str, Scalar)> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Const(n, ty) if *n == name => Some((*n, *ty)),
            _ => None,
        })
    }

    pub(super) fn param(&mut self, input: &syn::FnArg) -> Option<Param> {
        let typed = match input {
            syn::FnArg::Receiver(receiver) => {
                let Some(ty) = self.self_ty else {
                    self.cx.error_spanned_by(
                        receiver,
                        format!(
                            "{} cannot take `self`: write a free function with `#[{}]`",
                            self.what_plural(),
                            self.attribute()
                        ),
                    );
                    return None;
                };
                let pass = match (&receiver.reference, &receiver.mutability) {
                    (Some(_), Some(_)) => PassBy::RefMut,
                    (Some(_), None) => PassBy::Ref,
                    (None, _) => PassBy::Value,
                };
                let local = self.declare(Local {
                    name: "self".to_string(),
                    mutable: receiver.reference.is_none() && receiver.mutability.is_some(),
                    annotation: Some(ty),
                    element: false,
                });
                return Some(Param {
                    local,
                    ty,
                    span: Loc::of(receiver),
                    pass,
                    constant: false,
                });
            }
            syn::FnArg::Typed(typed) => typed,
        };
        let mut constant = None;
        for attr in &typed.attrs {
            if Self::is_constant_attr(attr) && constant.is_none() {
                constant = Some(attr);
            } else {
                self.cx.error_spanned_by(
                    attr,
                    "the only attribute on kernel parameters is `#[constant]`, on a read-only \
                     table `&[T; N]`",
                );
            }
        }
        let (name, mutable) = match &*typed.pat {
            syn::Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (pat.ident.to_string(), pat.mutability.is_some())
            }
            other => {
                self.cx.error_spanned_by(
                    other,
                    format!(
                        "{} parameters must be plain names such as `x: &[f32]`; patterns are not supported",
                        self.what()
                    ),
                );
                self.declare_rejected(pattern_names(other));
                return None;
            }
        };
        let typed_param = match constant {
            Some(attr) => self
                .constant_table(attr, &typed.ty, mutable)
                .map(|ty| (ty, PassBy::Value)),
            None => self.param_type(&typed.ty),
        };
        let Some((ty, pass)) = typed_param else {
            // Its uses refer to it without a message of their own: one error per cause.
            self.declare_rejected(vec![name]);
            return None;
        };
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
            element: false,
        });
        Some(Param {
            local,
            ty,
            span,
            pass,
            constant: constant.is_some(),
        })
    }

    /// `&TensorMap<T>`: a kernel's tensor map of a concrete number type.
    fn tensor_map_type(
        &mut self,
        ty: &syn::Type,
        path: &syn::TypePath,
        mutable: bool,
    ) -> Option<(Ty, PassBy)> {
        let usage = "a tensor map parameter is `&TensorMap<T>`, T a concrete number type \
                     such as `f16` or `f32`";
        if mutable || self.kind == FnKind::Device {
            let message = if mutable {
                usage.to_string()
            } else {
                "tensor maps are kernel parameters only: call `tma_load_2d` in the kernel, or \
                 pass the device function the shared memory the copy fills"
                    .to_string()
            };
            self.cx.error_spanned_by(ty, message);
            return None;
        }
        let elem = match &path.path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0]
            {
                syn::GenericArgument::Type(elem) => Some(elem),
                _ => None,
            },
            _ => None,
        };
        let Some(elem) = elem else {
            self.cx.error_spanned_by(ty, usage);
            return None;
        };
        match self.value_type(elem)? {
            Ty::Scalar(scalar)
                if !matches!(scalar, Scalar::Generic(_)) && scalar != Scalar::Bool =>
            {
                Some((Ty::TensorMap(scalar), PassBy::Value))
            }
            _ => {
                self.cx.error_spanned_by(elem, usage);
                None
            }
        }
    }

    fn param_type(&mut self, ty: &syn::Type) -> Option<(Ty, PassBy)> {
        match ty {
            // A `$t:ty` from a `macro_rules!` arrives wrapped in an invisible group.
            syn::Type::Group(group) => self.param_type(&group.elem),
            syn::Type::Reference(reference) => {
                let mutable = reference.mutability.is_some();
                match &*reference.elem {
                    syn::Type::Slice(slice) => {
                        let elem = self.value_type(&slice.elem)?;
                        Some((
                            Ty::Slice {
                                elem: elem.interned(),
                                mutable,
                            },
                            PassBy::Value,
                        ))
                    }
                    syn::Type::Path(path)
                        if path.qself.is_none() && is_named(path, "TensorMap") =>
                    {
                        self.tensor_map_type(ty, path, mutable)
                    }
                    // A device function may take `&T` and `&mut T`: C++ references.
                    inner if self.kind == FnKind::Device => {
                        let pass = if mutable { PassBy::RefMut } else { PassBy::Ref };
                        Some((self.value_type(inner)?, pass))
                    }
                    inner if mutable => {
                        let inner = inner.to_token_stream();
                        let message = match self.kind {
                            FnKind::Kernel => format!(
                                "`&mut {inner}` parameters are not supported: a kernel cannot write through a \
                                 reference to a scalar; write results into a slice such as `&mut [{inner}]`"
                            ),
                            FnKind::Device => format!(
                                "`&mut {inner}` parameters of device functions are not supported: return \
                                 the new value (`-> {inner}`) and assign it at the call, or take a slice \
                                 `&mut [{inner}]` and write its element"
                            ),
                        };
                        self.cx.error_spanned_by(ty, message);
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
                let message = match self.kind {
                    FnKind::Kernel => {
                        "`Vec` cannot be passed to a kernel: take a slice (`&[T]` or \
                                       `&mut [T]`) and pass a `DeviceBuffer<T>` at launch"
                    }
                    FnKind::Device => {
                        "`Vec` cannot be used on the GPU: take a slice (`&[T]` or \
                                       `&mut [T]`), which a kernel passes on from its parameters"
                    }
                };
                self.cx.error_spanned_by(ty, message);
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
                Some((Ty::Closure(ClosureTy::Bound(bound.index)), PassBy::Value))
            }
            syn::Type::Path(_) => Some((self.value_type(ty)?, PassBy::Value)),
            syn::Type::Array(_) if self.kind == FnKind::Device => {
                Some((self.value_type(ty)?, PassBy::Value))
            }
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
                        "unsupported parameter type `{}`: {} parameters are scalars ({SUPPORTED_SCALARS}) \
                         or slices of them (`&[T]`, `&mut [T]`)",
                        ty.to_token_stream(),
                        self.what()
                    ),
                );
                None
            }
        }
    }

    /// A type a value can have: a scalar or an array of values (`[[f32; 4]; 4]`).
    pub(super) fn value_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        match ty {
            syn::Type::Array(array) => {
                let elem = self.value_type(&array.elem)?;
                let len = self.length(&array.len)?;
                Some(Ty::Array {
                    elem: elem.interned(),
                    len,
                })
            }
            syn::Type::Paren(paren) => self.value_type(&paren.elem),
            syn::Type::Group(group) => self.value_type(&group.elem),
            syn::Type::Tuple(tuple) if tuple.elems.len() > 6 => {
                self.cx.error_spanned_by(
                    tuple,
                    "tuples in kernels have at most 6 elements: use a `#[device]` struct",
                );
                None
            }
            syn::Type::Tuple(tuple) if tuple.elems.len() >= 2 => {
                let elems: Vec<Option<Ty>> =
                    tuple.elems.iter().map(|t| self.value_type(t)).collect();
                Some(Ty::tuple(elems.into_iter().collect::<Option<Vec<_>>>()?))
            }
            syn::Type::Path(path) if path.qself.is_none() => {
                let last = path.path.segments.last()?.ident.to_string();
                if last == "Self" && path.path.segments.len() == 1 {
                    if let Some(ty) = self.self_ty {
                        return Some(ty);
                    }
                }
                if let Some(ty) = self.env.lookup(&last) {
                    return Some(ty);
                }
                let known =
                    Scalar::from_rust_name(&last).is_some() || self.generic_type(&last).is_some();
                if let Some(instead) = std_type_instead(&last) {
                    self.cx.error_spanned_by(
                        ty,
                        format!("`{last}` is not available in kernels: {instead}"),
                    );
                    return None;
                }
                if !known && super::items::looks_like_type(&last) {
                    self.env.note_missing(&path.path);
                    return None;
                }
                self.scalar_type(ty).map(Ty::Scalar)
            }
            _ => self.scalar_type(ty).map(Ty::Scalar),
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
                    "i128" | "u128" | "char" => {
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

/// What to write instead of a standard library type that GPU code cannot hold.
pub(super) fn std_type_instead(name: &str) -> Option<&'static str> {
    Some(match name {
        "Option" | "Some" | "None" => {
            "enums with data do not exist on the GPU; keep a `bool` beside the value, or a \
             sentinel such as `f32::INFINITY` or `u32::MAX`"
        }
        "Result" | "Ok" | "Err" => {
            "kernels do not return errors; check with `assert!` (which reports the failing thread \
             and line) or write a status code into a `&mut [u32]`"
        }
        "Vec" | "String" | "Box" | "Rc" | "Arc" | "HashMap" | "BTreeMap" | "VecDeque" => {
            "GPU code does not allocate; use a fixed-size array (`[0.0f32; N]`), shared memory \
             (`shared_array::<T, N>()`), or a slice parameter"
        }
        _ => return None,
    })
}
