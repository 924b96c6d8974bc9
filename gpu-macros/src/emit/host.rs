//! Stage 3b: the host side — a module named after the kernel with its CUDA source, the
//! description the runtime compiles, and a typed `launch` whose argument types mirror the
//! kernel's parameters, so a wrong argument is a Rust type error at the call.

use crate::ir::*;
use crate::types::{Scalar, Ty};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// Emits the host module for `kernel`, whose CUDA source is `source`; `rt` is the path of
/// the runtime crate as the user's crate names it.
pub fn emit_host(
    kernel: &Function,
    source: &str,
    twin: Option<(TokenStream, bool)>,
    rt: &TokenStream,
) -> TokenStream {
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
                let ty = scalar_tokens(scalar, rt);
                kinds.push(match scalar {
                    Scalar::Generic(generic) => {
                        let index = generic.index;
                        quote!(#rt::ParamKind::GenericScalar { param: #index })
                    }
                    _ => {
                        let variant = format_ident!("{}", scalar.runtime_variant());
                        quote!(#rt::ParamKind::Scalar(#rt::ScalarType::#variant))
                    }
                });
                sig.push(quote!(#arg: #ty));
                args.push(quote!(#rt::KernelArg::scalar(#arg)));
            }
            Ty::Slice { elem, mutable } => {
                let ty = scalar_tokens(elem, rt);
                kinds.push(match elem {
                    Scalar::Generic(generic) => {
                        let index = generic.index;
                        quote!(#rt::ParamKind::GenericSlice { param: #index, mutable: #mutable })
                    }
                    _ => {
                        let variant = format_ident!("{}", elem.runtime_variant());
                        quote!(#rt::ParamKind::Slice {
                            elem: #rt::ScalarType::#variant,
                            mutable: #mutable,
                        })
                    }
                });
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
    // Checked by default where the user's crate has debug assertions.
    let checked_default = quote!(cfg!(debug_assertions));
    let (kernel_static, generics, launch_call): (TokenStream, TokenStream, TokenStream) = if kernel
        .generics
        .is_empty()
    {
        (
            quote! {
                #rt::Kernel::__generated_v2(
                    NAME, ENTRY, SOURCE, &[#(#kinds),*], #file, #checked_default,
                )
            },
            quote!(),
            quote!(#stream.launch(&KERNEL, #config, &[#(#args),*])),
        )
    } else {
        let mut template_params = Vec::new();
        let mut template_args = Vec::new();
        let mut rust_generics = Vec::new();
        for generic in &kernel.generics {
            match generic {
                GenericParam::Type(g) => {
                    let name = Ident::new(g.name, Span::call_site());
                    let bound = Ident::new(g.bound.rust_name(), Span::call_site());
                    template_params.push(quote!(#rt::TemplateParam::Type));
                    template_args.push(quote!(#rt::TemplateArg::of::<#name>()));
                    rust_generics.push(quote!(#name: #rt::#bound));
                }
                GenericParam::Const(n) => {
                    let name = Ident::new(n, Span::call_site());
                    template_params.push(quote!(#rt::TemplateParam::Const));
                    template_args.push(quote!(#rt::TemplateArg::Const(#name as u64)));
                    rust_generics.push(quote!(const #name: usize));
                }
                // Rejected on kernels by the parser.
                GenericParam::Closure(_) => {}
            }
        }
        (
            quote! {
                #rt::Kernel::__generated_generic(
                    NAME, SOURCE, &[#(#kinds),*], &[#(#template_params),*], #file, #checked_default,
                )
            },
            quote!(<#(#rust_generics),*>),
            quote!(#stream.launch_generic(&KERNEL, &[#(#template_args),*], #config, &[#(#args),*])),
        )
    };
    // wgmma exists only on sm_90a: such a kernel is compiled for exactly compute capability 9.0.
    let kernel_static = if source.contains("rs_wgmma") {
        quote!(#kernel_static.__arch_specific(9, 0))
    } else {
        kernel_static
    };
    // The CPU backend runs the twin; generic kernels have none yet.
    let (twin_items, kernel_static) = match twin {
        Some((items, needs_sync)) => (
            items,
            quote!(#kernel_static.with_cpu(__cpu_twin, #needs_sync)),
        ),
        None => (quote!(), kernel_static),
    };
    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            #twin_items

            /// The kernel's name as written in Rust.
            pub const NAME: &str = #name_str;
            /// The entry point in [`SOURCE`]: an `extern "C"` function, or a template for a
            /// generic kernel.
            pub const ENTRY: &str = #name_str;
            /// The CUDA C++ source generated for this kernel.
            pub const SOURCE: &str = #source;
            /// What the runtime compiles and launches.
            pub static KERNEL: #rt::Kernel = #kernel_static;

            #[doc = #signature_doc]
            // One Rust argument per kernel parameter: the count is the kernel's.
            #[allow(clippy::too_many_arguments)]
            pub fn launch #generics(
                #stream: &#rt::Stream,
                #config: #rt::LaunchConfig,
                #(#sig),*
            ) -> #rt::Result<()> {
                #launch_call
            }
        }
    }
}

fn scalar_tokens(scalar: Scalar, rt: &TokenStream) -> TokenStream {
    let ident = Ident::new(scalar.rust_name(), Span::call_site());
    if scalar.is_half() {
        // Not Rust's own (unstable) `f16`: the `half` crate's, as kernels use it.
        quote!(#rt::half::#ident)
    } else {
        quote!(#ident)
    }
}
