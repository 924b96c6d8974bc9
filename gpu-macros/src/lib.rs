//! `#[kernel]`: GPU kernels written as Rust functions.
//!
//! The attribute compiles a restricted Rust subset to CUDA C++ in stages that never mix:
//! [`parse`] (syn → kernel IR, rejecting what the language lacks), [`check`] (types, inferred as
//! rustc would), then the sibling emitters in [`emit`] (CUDA source; typed host launcher).
//! Every problem becomes a `compile_error!` at the user's span, all of them in one build.

mod check;
mod ctxt;
mod emit;
mod ir;
mod methods;
mod parse;
mod runtime_path;

use proc_macro::TokenStream;

/// Compiles a Rust function to a CUDA kernel and generates a module of the same name with its
/// `SOURCE`, its runtime description `KERNEL` and a typed `launch`.
///
/// ```text
/// #[kernel]
/// fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
///     let i = global_idx().x;
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
/// // saxpy::launch(&stream, LaunchConfig::for_len(n, 256), 2.0, &x, &mut y)?;
/// ```
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let file = proc_macro::Span::call_site().file();
    expand_kernel(attr.into(), item.into(), file).into()
}

/// The whole pipeline, on proc-macro2 tokens so it runs in unit tests too.
fn expand_kernel(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    file: String,
) -> proc_macro2::TokenStream {
    let cx = ctxt::Ctxt::default();
    if !attr.is_empty() {
        cx.error_spanned_by(&attr, "`#[kernel]` takes no arguments");
    }
    let function: syn::ItemFn =
        match syn::parse2(item) {
            Ok(function) => function,
            Err(error) => return syn::Error::new(
                error.span(),
                "`#[kernel]` applies to a function: `#[kernel] fn name(x: &[f32], ...) { ... }`",
            )
            .to_compile_error(),
        };
    let kernel = parse::parse_kernel(&cx, &function, file);
    // Later stages assume a well-formed IR; after a syntax error they would only echo it.
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    let cx = ctxt::Ctxt::default();
    let types = check::check_kernel(&cx, &kernel);
    if let Some(errors) = cx.into_compile_errors() {
        return errors;
    }
    let types = types.expect("no errors means types");
    let source = emit::cuda::emit_kernel(&kernel, &types);
    let rt = runtime_path::runtime_path();
    emit::host::emit_host(&kernel, &source, &rt)
}

/// Emits the CUDA source of a kernel given as Rust source text: the snapshot tests' entry.
#[cfg(test)]
fn cuda_source_of(rust: &str) -> Result<String, String> {
    let function: syn::ItemFn = syn::parse_str(rust).map_err(|e| e.to_string())?;
    let cx = ctxt::Ctxt::default();
    let kernel = parse::parse_kernel(&cx, &function, "test.rs".to_string());
    let types = if cx.has_errors() {
        None
    } else {
        check::check_kernel(&cx, &kernel)
    };
    match (cx.into_compile_errors(), types) {
        (None, Some(types)) => Ok(emit::cuda::emit_kernel(&kernel, &types)),
        (errors, _) => Err(errors.map(|e| e.to_string()).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests;
