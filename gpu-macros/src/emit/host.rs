//! Stage 3b: the host side — a module named after the kernel with its CUDA source, the
//! description the runtime compiles, and a typed `launch` whose argument types mirror the
//! kernel's parameters, so a wrong argument is a Rust type error at the call.

use crate::ir::*;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// Emits the host module for `kernel`, whose CUDA source is `source`; `rt` is the path of
/// the runtime crate as the user's crate names it.
pub fn emit_host(kernel: &Function, source: &str, rt: &TokenStream) -> TokenStream {
    let name = Ident::new(&kernel.name, kernel.name_span.start);
    let name_str = &kernel.name;
    let file = &kernel.file;
    let vis = &kernel.vis;
    let docs = &kernel.docs;

    let param_names: Vec<&str> = kernel
        .params
        .iter()
        .map(|p| kernel.local(p.local).name.as_str())
        .collect();
    // The launcher's own parameters must not collide with the kernel's.
    let pick = |base: &str| {
        let mut name = base.to_string();
        while param_names.contains(&name.as_str()) {
            name = format!("launch_{name}");
        }
        Ident::new(&name, Span::call_site())
    };
    let stream = pick("stream");
    let config = pick("config");

    let mut kinds = Vec::new();
    let mut sig = Vec::new();
    let mut args = Vec::new();
    for param in &kernel.params {
        let local = kernel.local(param.local);
        let arg = format_ident!("{}", local.name, span = param.span.start);
        match param.ty {
            Ty::Scalar(scalar) => {
                let ty = scalar_tokens(scalar);
                let variant = format_ident!("{}", scalar.runtime_variant());
                kinds.push(quote!(#rt::ParamKind::Scalar(#rt::ScalarType::#variant)));
                sig.push(quote!(#arg: #ty));
                args.push(quote!(#rt::KernelArg::scalar(#arg)));
            }
            Ty::Slice { elem, mutable } => {
                let ty = scalar_tokens(elem);
                let variant = format_ident!("{}", elem.runtime_variant());
                kinds.push(quote!(#rt::ParamKind::Slice {
                    elem: #rt::ScalarType::#variant,
                    mutable: #mutable,
                }));
                if mutable {
                    sig.push(quote!(#arg: &mut #rt::DeviceBuffer<#ty>));
                    args.push(quote!(#rt::KernelArg::slice_mut(#arg)));
                } else {
                    sig.push(quote!(#arg: &#rt::DeviceBuffer<#ty>));
                    args.push(quote!(#rt::KernelArg::slice(#arg)));
                }
            }
            other => unreachable!("parameter of type {other:?}"),
        }
    }

    let signature_doc = format!(
        " Launches `{name_str}` on `{stream}` with `{config}`; returns once the launch is queued."
    );
    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            /// The kernel's name as written in Rust.
            pub const NAME: &str = #name_str;
            /// The `extern "C"` entry point in [`SOURCE`].
            pub const ENTRY: &str = #name_str;
            /// The CUDA C++ source generated for this kernel.
            pub const SOURCE: &str = #source;
            /// What the runtime compiles and launches.
            pub static KERNEL: #rt::Kernel = #rt::Kernel::__generated_v2(
                NAME,
                ENTRY,
                SOURCE,
                &[#(#kinds),*],
                #file,
                // Checked by default where the user's crate has debug assertions.
                cfg!(debug_assertions),
            );

            #[doc = #signature_doc]
            // One Rust argument per kernel parameter: the count is the kernel's.
            #[allow(clippy::too_many_arguments)]
            pub fn launch(
                #stream: &#rt::Stream,
                #config: #rt::LaunchConfig,
                #(#sig),*
            ) -> #rt::Result<()> {
                #stream.launch(&KERNEL, #config, &[#(#args),*])
            }
        }
    }
}

fn scalar_tokens(scalar: Scalar) -> TokenStream {
    let ident = Ident::new(scalar.rust_name(), Span::call_site());
    quote!(#ident)
}
