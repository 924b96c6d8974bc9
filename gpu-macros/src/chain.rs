//! Drives the stages for `#[kernel]` and `#[device]`, and gathers the device functions a kernel
//! reaches through the continuation macros (see the crate docs).

use crate::ctxt::Ctxt;
use crate::ir::{ExprKind, FnKind, Program};
use crate::types::{EnumRef, StructRef};
use crate::{check, emit, parse, paths};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashMap;

/// An item fetched for a kernel: the name (or path, for a type) the kernel's code called it by,
/// and its item — a `#[device]` function, struct or enum.
pub struct Gathered {
    pub alias: String,
    pub item: syn::Item,
}

/// `#[kernel]`, with the device functions and types gathered so far.
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
    let env = type_env(&gathered);
    let mut kernel = parse::parse_function(&cx, &env, &function, FnKind::Kernel, None);
    parse::set_launch_bounds(&mut kernel, launch_bounds);
    let mut functions = vec![kernel];
    let mut aliases = HashMap::new();
    // A device function's own errors were reported where `#[device]` expanded it; repeating
    // them at every kernel that calls it would give one cause many messages.
    let device_cx = Ctxt::default();
    for device in &gathered {
        let syn::Item::Fn(item) = &device.item else {
            continue;
        };
        let parsed = parse::parse_function(&device_cx, &env, item, FnKind::Device, None);
        aliases.insert(device.alias.clone(), parsed.name.clone());
        if functions.iter().all(|f| f.name != parsed.name) {
            functions.push(parsed);
        }
    }
    for device in &gathered {
        if let syn::Item::Impl(block) = &device.item {
            functions.extend(parse::parse_impl(&cx, &env, block));
        }
    }
    // `T::default()` of a struct that derives `Default`, unless its own `impl` defines one.
    for device in &gathered {
        let syn::Item::Struct(item) = &device.item else {
            continue;
        };
        let Some(block) = parse::default_impl(item) else {
            continue;
        };
        let defaults = parse::parse_impl(&device_cx, &env, &block);
        for default in defaults {
            if functions.iter().all(|f| f.name != default.name) {
                functions.push(default);
            }
        }
    }
    // A type the code names but that has not arrived is fetched before anything is reported:
    // until it is here, the code around it cannot be understood.
    let missing = env.missing.borrow().first().cloned();
    if let Some((name, path)) = missing {
        if gathered.iter().any(|g| g.alias == path.to_string()) {
            let message = format!(
                "`{name}` does not name a `#[device]` struct or enum: kernels name `#[device]` types \
                 by the name they are defined with (not a renamed import)"
            );
            return syn::Error::new_spanned(&path, message).to_compile_error();
        }
        return request(&attr, &function, &gathered, &path.to_string(), &path);
    }
    // Later stages assume a well-formed IR; after a syntax error they would only echo it.
    let device_failed = device_cx.into_compile_errors().is_some();
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    if device_failed {
        return TokenStream::new();
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
    let program = Program {
        functions,
        structs: env.structs.clone(),
    };
    if let Some((name, path)) = first_missing(&program) {
        return request(&attr, &function, &gathered, &name, &path);
    }
    // The `#[device] impl` blocks of the types, each handed over by its own macro.
    for device in &gathered {
        for (name, path) in impl_macros(&device.item, &function) {
            if gathered.iter().all(|g| g.alias != name) {
                return request(&attr, &function, &gathered, &name, &path);
            }
        }
    }

    let cx = Ctxt::default();
    let types = check::check_program(&cx, &program);
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    let types = types.expect("no errors means types");
    let emitted = emit::cuda::emit(&program, &types);
    let rt = paths::runtime();
    let twin = if emit::cpu::supported(&program) {
        let twin = emit::cpu::emit_twin(&program, &types, &rt.to_string());
        match twin.source.parse::<TokenStream>() {
            Ok(tokens) => Some((tokens, twin.needs_sync, twin.block)),
            Err(error) => {
                let message = format!("internal error: the CPU twin does not parse ({error})");
                return quote!(compile_error!(#message););
            }
        }
    } else {
        None
    };
    let assertions = emit::assertions::message_table(&program, &rt);
    let source = emit::outer::host_source(&program, &types, emitted.source, &rt);
    emit::host::emit_host(
        program.root(),
        &source,
        (&emitted.launch_fit, emitted.fits_entry.as_deref()),
        twin,
        assertions,
        &rt,
    )
}

/// The `#[device]` types among `gathered`, each defined once the types of its fields are.
pub(crate) fn type_env(gathered: &[Gathered]) -> parse::TypeEnv {
    let mut env = parse::TypeEnv::default();
    for g in gathered {
        if let syn::Item::Enum(item) = &g.item {
            if let Some(def) = parse::parse_enum(item, twin_path(&g.alias)) {
                env.enums.push(EnumRef(Box::leak(Box::new(def))));
            }
        }
    }
    // Structs after the structs they contain, which is also the order C++ needs.
    loop {
        let mut progress = false;
        for g in gathered {
            let syn::Item::Struct(item) = &g.item else {
                continue;
            };
            if env.lookup(&item.ident.to_string()).is_some() {
                continue;
            }
            let probe = parse::TypeEnv {
                structs: env.structs.clone(),
                enums: env.enums.clone(),
                missing: Default::default(),
            };
            if let Some(def) = parse::parse_struct(&probe, item, twin_path(&g.alias)) {
                env.structs.push(StructRef(Box::leak(Box::new(def))));
                progress = true;
            } else {
                // A field's type still to be fetched is fetched like any other.
                for missing in probe.missing.into_inner() {
                    if env.missing.borrow().iter().all(|(n, _)| *n != missing.0) {
                        env.missing.borrow_mut().push(missing);
                    }
                }
            }
        }
        if !progress {
            break;
        }
    }
    // Types defined meanwhile are no longer missing.
    env.missing
        .borrow_mut()
        .retain(|(name, _)| env.structs.iter().all(|s| s.0.name != *name));
    env
}

/// The path a type written as `path` in the kernel's module has from inside the kernel's
/// generated module (a child of it).
fn twin_path(path: &str) -> String {
    let path = path.replace(' ', "");
    if path.starts_with("crate::") || path.starts_with("::") {
        path
    } else {
        format!("super::{path}")
    }
}

/// The macros that hand over the `#[device] impl` blocks of a gathered type, with their paths.
/// A type's impls live in the file that defines it: the file is read to find them (its module
/// path follows from Cargo's layout), and each is fetched with its own tokens, so messages
/// point into it.
fn impl_macros(item: &syn::Item, kernel: &syn::ItemFn) -> Vec<(String, TokenStream)> {
    let (ident, attrs) = match item {
        syn::Item::Struct(s) => (&s.ident, &s.attrs),
        syn::Item::Enum(e) => (&e.ident, &e.attrs),
        _ => return Vec::new(),
    };
    let Some(krate) = attrs
        .iter()
        .find(|a| a.path().is_ident("gpu_crate"))
        .and_then(|a| a.parse_args::<TokenStream>().ok())
    else {
        return Vec::new();
    };
    let Some(file) = ident.span().local_file() else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Vec::new();
    };
    let Ok(parsed) = syn::parse_file(&text) else {
        return Vec::new();
    };
    // In the kernel's own file, a path relative to the kernel's module (the file's place in
    // its crate does not matter); elsewhere, the file's module from its crate's root.
    let kernel_file = kernel.sig.ident.span().local_file();
    let mut base = match kernel_file.filter(|k| *k == file) {
        Some(_) => {
            let depth = fn_depth(&parsed.items, &kernel.sig.ident.to_string()).unwrap_or(0);
            let mut base = quote!(self);
            for _ in 0..depth {
                base = quote!(#base::super);
            }
            base
        }
        None => krate,
    };
    if kernel_file_differs(&file, kernel) {
        for segment in file_module(&file) {
            let segment = format_ident!("{}", segment);
            base = quote!(#base::#segment);
        }
    }
    let mut found = Vec::new();
    collect_impls(&parsed.items, &ident.to_string(), &base, &mut found);
    found
}

fn kernel_file_differs(file: &std::path::Path, kernel: &syn::ItemFn) -> bool {
    kernel.sig.ident.span().local_file().as_deref() != Some(file)
}

/// How many inline modules of a file enclose the function `name`.
fn fn_depth(items: &[syn::Item], name: &str) -> Option<usize> {
    items.iter().find_map(|item| match item {
        syn::Item::Fn(f) if f.sig.ident == name => Some(0),
        syn::Item::Mod(module) => module
            .content
            .as_ref()
            .and_then(|(_, inner)| fn_depth(inner, name))
            .map(|d| d + 1),
        _ => None,
    })
}

/// The module a source file is, from its crate's root, by Cargo's conventions: `src/a/b.rs`
/// and `src/a/b/mod.rs` are `a::b`; `src/lib.rs`, `src/main.rs`, `src/bin/x.rs` and the files
/// directly in `tests/`, `examples/` and `benches/` (or their folder's `main.rs`) are roots;
/// `tests/common/mod.rs` is `common`.
fn file_module(file: &std::path::Path) -> Vec<String> {
    let parts: Vec<String> = file
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some(root) = parts
        .iter()
        .rposition(|p| matches!(p.as_str(), "src" | "tests" | "examples" | "benches"))
    else {
        return Vec::new();
    };
    let dir = parts[root].as_str();
    let mut rest: Vec<String> = parts[root + 1..].to_vec();
    let Some(last) = rest.pop() else {
        return Vec::new();
    };
    let stem = last.trim_end_matches(".rs").to_string();
    if dir == "src" && rest.first().is_some_and(|d| d == "bin") {
        rest.remove(0);
        if rest.is_empty() {
            return Vec::new();
        }
        rest.remove(0);
    } else if dir != "src" && !rest.is_empty() {
        // `examples/demo/main.rs` is an example's root, its folder no module.
        let folder: std::path::PathBuf = parts[..=root + 1].iter().collect();
        if folder.join("main.rs").exists() {
            rest.remove(0);
        }
    }
    let crate_root = rest.is_empty()
        && (dir != "src" || matches!(stem.as_str(), "lib" | "main"))
        && stem != "mod";
    if crate_root || (rest.is_empty() && stem == "main") {
        return Vec::new();
    }
    if stem != "mod" {
        rest.push(stem);
    }
    rest
}

fn collect_impls(
    items: &[syn::Item],
    name: &str,
    module: &TokenStream,
    out: &mut Vec<(String, TokenStream)>,
) {
    for item in items {
        match item {
            syn::Item::Impl(block)
                if block.attrs.iter().any(|a| {
                    a.path()
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "device")
                }) =>
            {
                let self_name = match &*block.self_ty {
                    syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                };
                if self_name.as_deref() == Some(name) {
                    if let Some(macro_name) = parse::impl_macro_name(block) {
                        let ident = format_ident!("{}", macro_name);
                        out.push((macro_name, quote!(#module::#ident)));
                    }
                }
            }
            syn::Item::Mod(inner) => {
                if let Some((_, items)) = &inner.content {
                    let ident = &inner.ident;
                    collect_impls(items, name, &quote!(#module::#ident), out);
                }
            }
            _ => {}
        }
    }
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
        match syn::parse2::<syn::Item>(item.clone()) {
            Ok(item) => gathered.push(Gathered { alias, item }),
            Err(error) => return error.to_compile_error(),
        }
    }
    expand_kernel(attr.clone(), kernel.clone(), gathered)
}

/// `#[device]`: checks a function where it stands; for a function, struct or enum, defines the
/// macro that hands its definition to the kernels that use it. An `impl` block is handed over
/// with its type (see [`impl_macros`]).
pub fn expand_device(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::default();
    if !attr.is_empty() {
        cx.error_spanned_by(&attr, "`#[device]` takes no arguments");
    }
    let item: syn::Item = match syn::parse2(item) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let (name, vis, extra) = match &item {
        syn::Item::Fn(function) => {
            let env = parse::TypeEnv::default();
            let parsed = parse::parse_function(&cx, &env, function, FnKind::Device, None);
            let name = &function.sig.ident;
            // A kernel names this function's outer constants through a module of the
            // function's name (a name in the type namespace, beside the function and its
            // macro), which sees all that the function's module sees.
            let outer = if parsed.outer.is_empty() {
                quote!()
            } else {
                let vis = match &function.vis {
                    syn::Visibility::Inherited => quote!(),
                    _ => quote!(pub(crate)),
                };
                quote! {
                    #[doc(hidden)]
                    #[allow(non_snake_case, unused_imports)]
                    #vis mod #name {
                        pub(crate) use super::*;
                    }
                }
            };
            // Its callees and types are known only where a kernel gathers them; alone it is
            // checked fully.
            if !cx.has_errors() && parsed.callees().is_empty() && env.missing.borrow().is_empty() {
                let program = Program {
                    functions: vec![parsed],
                    structs: Vec::new(),
                };
                check::check_program(&cx, &program);
            }
            (name, &function.vis, outer)
        }
        syn::Item::Struct(strukt) => {
            parse::struct_problems(&cx, &item);
            let layout = if cx.has_errors() {
                quote!()
            } else {
                emit::host::struct_layout_tokens(strukt, &paths::runtime())
            };
            (&strukt.ident, &strukt.vis, layout)
        }
        syn::Item::Enum(enumeration) => {
            parse::struct_problems(&cx, &item);
            (&enumeration.ident, &enumeration.vis, quote!())
        }
        syn::Item::Impl(block) => {
            // Kernels fetch the block through its macro (found from its type's file); the host
            // keeps the methods it can run.
            let Some(name) = parse::impl_macro_name(block) else {
                return syn::Error::new_spanned(
                    &block.self_ty,
                    "`#[device] impl` blocks are for `#[device]` types and hold at least one item",
                )
                .to_compile_error();
            };
            let name = format_ident!("{}", name);
            parse::impl_problems(&cx, block);
            let host = parse::host_impl(block);
            let errors = cx.into_compile_errors().unwrap_or_default();
            let tokens = block.to_token_stream();
            return quote! {
                #errors
                #host
                #[doc(hidden)]
                #[allow(non_snake_case, unused_macros)]
                mod #name {
                    macro_rules! #name {
                        ({ $($callback:tt)* } { $($state:tt)* }) => {
                            $($callback)*! { $($state)* { #tokens } }
                        };
                    }
                    pub(crate) use #name;
                }
                #[allow(unused_imports)]
                pub(crate) use #name::#name;
            };
        }
        other => {
            return syn::Error::new_spanned(
                other,
                "`#[device]` applies to a function, a struct, a fieldless enum or an `impl` block",
            )
            .to_compile_error()
        }
    };
    let errors = cx.into_compile_errors().unwrap_or_default();
    let module = format_ident!("__gpu_device_{}", name);
    // A `macro_rules!` can be re-exported at most crate-wide.
    let reexport = match vis {
        syn::Visibility::Inherited => quote!(use),
        _ => quote!(pub(crate) use),
    };
    let tokens = item.to_token_stream();
    // A device function is GPU code only; a type is also the host's.
    let host = match &item {
        syn::Item::Fn(_) => quote!(),
        _ => tokens.clone(),
    };
    // A type names its crate (`$crate`, resolved where it is defined), where kernels find
    // the macros of its `impl` blocks.
    let tokens = match &item {
        syn::Item::Fn(_) => tokens,
        _ => quote!(#[gpu_crate($crate)] #tokens),
    };
    quote! {
        #errors
        #host
        #extra
        #[doc(hidden)]
        #[allow(non_snake_case, unused_macros)]
        mod #module {
            macro_rules! #name {
                ({ $($callback:tt)* } { $($state:tt)* }) => {
                    $($callback)*! { $($state)* { #tokens } }
                };
            }
            pub(crate) use #name;
        }
        #[allow(unused_imports)]
        #reexport #module::#name;
    }
}
