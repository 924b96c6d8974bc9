//! Drives the stages for `#[kernel]` and `#[device]`, and gathers the device functions a kernel
//! reaches through the continuation macros (see the crate docs).

use crate::ctxt::Ctxt;
use crate::ir::{ExprKind, FnKind, Program};
use crate::{check, emit, parse, paths};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashMap;

/// A device function fetched for a kernel: the name the kernel's code called it by, and its item.
pub struct Gathered {
    pub alias: String,
    pub item: syn::ItemFn,
}

/// `#[kernel]`, with the device functions gathered so far.
pub fn expand_kernel(attr: TokenStream, item: TokenStream, gathered: Vec<Gathered>) -> TokenStream {
    let cx = Ctxt::default();
    let launch_bounds = parse::kernel_args(&cx, &attr);
    let function: syn::ItemFn =
        match syn::parse2(item) {
            Ok(function) => function,
            Err(error) => return syn::Error::new(
                error.span(),
                "`#[kernel]` applies to a function: `#[kernel] fn name(x: &[f32], ...) { ... }`",
            )
            .to_compile_error(),
        };
    let mut kernel = parse::parse_function(&cx, &function, FnKind::Kernel);
    kernel.launch_bounds = launch_bounds;
    let mut functions = vec![kernel];
    let mut aliases = HashMap::new();
    for device in &gathered {
        let parsed = parse::parse_function(&cx, &device.item, FnKind::Device);
        aliases.insert(device.alias.clone(), parsed.name.clone());
        if functions.iter().all(|f| f.name != parsed.name) {
            functions.push(parsed);
        }
    }
    // Later stages assume a well-formed IR; after a syntax error they would only echo it.
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    // Calls made through a renamed import (`use m::f as g;`) reach `f`.
    for function in &mut functions {
        for expr in &mut function.exprs {
            if let ExprKind::Call { name, .. } = &mut expr.kind {
                if let Some(actual) = aliases.get(name.as_str()) {
                    *name = actual.clone();
                }
            }
        }
    }
    let program = Program { functions };
    if let Some((name, path)) = first_missing(&program) {
        return request(&attr, &function, &gathered, &name, &path);
    }

    let cx = Ctxt::default();
    let types = check::check_program(&cx, &program);
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    let types = types.expect("no errors means types");
    let source = emit::cuda::emit_program(&program, &types);
    let rt = paths::runtime();
    let twin = if emit::cpu::supported(&program) {
        let twin = emit::cpu::emit_twin(&program, &types, &rt.to_string());
        match twin.source.parse::<TokenStream>() {
            Ok(tokens) => Some((tokens, twin.needs_sync)),
            Err(error) => {
                let message = format!("internal error: the CPU twin does not parse ({error})");
                return quote!(compile_error!(#message););
            }
        }
    } else {
        None
    };
    let assertions = emit::assertions::message_table(&program, &rt);
    emit::host::emit_host(program.root(), &source, twin, assertions, &rt)
}

/// The first function called but not yet gathered, with the path of the call.
fn first_missing(program: &Program) -> Option<(String, TokenStream)> {
    program.functions.iter().find_map(|function| {
        function
            .callees()
            .into_iter()
            .find(|(name, _, _)| program.function(name).is_none())
            .map(|(name, path, _)| (name.to_string(), path.clone()))
    })
}

/// Asks the device function at `path` for its definition, to continue in [`resume`].
fn request(
    attr: &TokenStream,
    kernel: &syn::ItemFn,
    gathered: &[Gathered],
    name: &str,
    path: &TokenStream,
) -> TokenStream {
    let resume = paths::resume_macro();
    let pairs = gathered.iter().map(|g| {
        let alias = &g.alias;
        let item = &g.item;
        quote!({ #alias } { #item })
    });
    quote! {
        #path! { { #resume } { { #attr } { #kernel } #(#pairs)* { #name } } }
    }
}

/// The continuation: `{attr} {kernel} ({alias} {device fn})*`.
pub fn resume(input: TokenStream) -> TokenStream {
    let groups: Vec<TokenStream> = input
        .into_iter()
        .filter_map(|tree| match tree {
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                Some(group.stream())
            }
            _ => None,
        })
        .collect();
    let [attr, kernel, rest @ ..] = groups.as_slice() else {
        return quote!(compile_error!("malformed kernel continuation"););
    };
    let mut gathered = Vec::new();
    for pair in rest.chunks(2) {
        let [alias, item] = pair else {
            return quote!(compile_error!("malformed kernel continuation"););
        };
        let alias = match syn::parse2::<syn::LitStr>(alias.clone()) {
            Ok(lit) => lit.value(),
            Err(error) => return error.to_compile_error(),
        };
        match syn::parse2::<syn::ItemFn>(item.clone()) {
            Ok(item) => gathered.push(Gathered { alias, item }),
            Err(error) => return error.to_compile_error(),
        }
    }
    expand_kernel(attr.clone(), kernel.clone(), gathered)
}

/// `#[device]`: checks the function where it stands, and defines the macro that hands its
/// definition to the kernels that call it.
pub fn expand_device(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::default();
    if !attr.is_empty() {
        cx.error_spanned_by(&attr, "`#[device]` takes no arguments");
    }
    let function: syn::ItemFn = match syn::parse2(item) {
        Ok(function) => function,
        Err(error) => {
            return syn::Error::new(
                error.span(),
                "`#[device]` applies to a function: `#[device] fn name(x: f32) -> f32 { ... }`",
            )
            .to_compile_error()
        }
    };
    let parsed = parse::parse_function(&cx, &function, FnKind::Device);
    // Its callees are known only where a kernel gathers them; alone it is checked fully.
    if !cx.has_errors() && parsed.callees().is_empty() {
        let program = Program {
            functions: vec![parsed],
        };
        check::check_program(&cx, &program);
    }
    let errors = cx.into_compile_errors().unwrap_or_default();

    let name = &function.sig.ident;
    let module = format_ident!("__gpu_device_{}", name);
    // A `macro_rules!` can be re-exported at most crate-wide.
    let reexport = match &function.vis {
        syn::Visibility::Inherited => quote!(use),
        _ => quote!(pub(crate) use),
    };
    let item = function.to_token_stream();
    quote! {
        #errors
        #[doc(hidden)]
        #[allow(non_snake_case, unused_macros)]
        mod #module {
            macro_rules! #name {
                ({ $($callback:tt)* } { $($state:tt)* }) => {
                    $($callback)*! { $($state)* { #item } }
                };
            }
            pub(crate) use #name;
        }
        #[allow(unused_imports)]
        #reexport #module::#name;
    }
}
