//! Stage 3b: the host side — a module named after the kernel with its CUDA source, the
//! description the runtime compiles, and a typed `launch` whose argument types mirror the
//! kernel's parameters, so a wrong argument is a Rust type error at the call.

use super::cuda::ranges::{Atom, Bound, BoundOp, LaunchOf, AXES};
use super::outer::HostSource;
use crate::ir::*;
use crate::types::{field_length_copy, Len, Scalar, Ty, MAX_CONSTANT_BYTES};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// Emits the host module for `kernel`, whose CUDA source is `source`, with the message table
/// of its assertions if it has any; `rt` is the path of the runtime crate as the user's crate
/// names it.
pub fn emit_host(
    kernel: &Function,
    source: &HostSource,
    (launch_fit, fits_entry): (&[Atom], Option<&str>),
    twin: Option<(TokenStream, bool, bool)>,
    assertions: Option<TokenStream>,
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
    let mut const_checks = Vec::new();
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
            Ty::Struct(def) => {
                let ty: TokenStream = def.0.path.parse().expect("a path");
                let value_type = value_type(Ty::Struct(def), &ty, rt);
                kinds.push(quote!(#rt::ParamKind::Value(#value_type)));
                sig.push(quote!(#arg: #ty));
                args.push(quote!(#rt::KernelArg::value(#arg)));
            }
            Ty::Enum(def) => {
                // Passed as its `repr` integer, which is what kernels compare it with.
                let ty: TokenStream = def.0.path.parse().expect("a path");
                let repr = scalar_tokens(def.0.repr, rt);
                let variant = format_ident!("{}", def.0.repr.runtime_variant());
                kinds.push(quote!(#rt::ParamKind::Scalar(#rt::ScalarType::#variant)));
                sig.push(quote!(#arg: #ty));
                args.push(quote!(#rt::KernelArg::scalar(#arg as #repr)));
            }
            Ty::Slice { elem, mutable } if !matches!(elem, Ty::Scalar(_)) => {
                let ty: TokenStream = elem_tokens(*elem, rt);
                let value_type = value_type(*elem, &ty, rt);
                kinds.push(quote!(#rt::ParamKind::Slice {
                    elem: #rt::ElemType::Value(#value_type),
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
            Ty::Slice {
                elem: &Ty::Scalar(elem),
                mutable,
            } => {
                let ty = scalar_tokens(elem, rt);
                kinds.push(match elem {
                    Scalar::Generic(generic) => {
                        let index = generic.index;
                        quote!(#rt::ParamKind::GenericSlice { param: #index, mutable: #mutable })
                    }
                    _ => {
                        let variant = format_ident!("{}", elem.runtime_variant());
                        quote!(#rt::ParamKind::Slice {
                            elem: #rt::ElemType::Scalar(#rt::ScalarType::#variant),
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
            Ty::Array {
                elem: table_elem,
                len,
            } if param.constant => {
                // A table of numbers, or of rows of them (`&[[i32; 3]; N]`), which travels as
                // its numbers one after the other.
                let (elem, row) = match *table_elem {
                    Ty::Array {
                        elem: &Ty::Scalar(elem),
                        len: Len::Known(row),
                    } => (elem, Some(row as usize)),
                    Ty::Scalar(elem) => (elem, None),
                    other => unreachable!("parsed: a table of numbers or rows, not {other:?}"),
                };
                let ty = scalar_tokens(elem, rt);
                let variant = format_ident!("{}", elem.runtime_variant());
                let row_factor = row.unwrap_or(1);
                let len: TokenStream = match len {
                    Len::Known(len) => {
                        let len = len as usize;
                        quote!(#len)
                    }
                    // Named by constants from outside the kernel: their typed copies in this
                    // module, and the size limit checked by rustc.
                    len => {
                        let len: TokenStream = len.rust().parse().expect("a length expression");
                        let size = elem.size_bytes().unwrap_or(1) as usize * row_factor;
                        let limit = MAX_CONSTANT_BYTES as usize;
                        let message = format!(
                            "the `#[constant]` table `{}` is over the {limit} bytes a kernel's                              constant tables may have (they travel as kernel parameters, which                              CUDA limits to 4 KiB): pass it as a slice instead",
                            local.name
                        );
                        const_checks.push(quote!(
                            const _: () = assert!((#len) * #size <= #limit, #message);
                        ));
                        quote!((#len))
                    }
                };
                kinds.push(quote!(#rt::ParamKind::Constant {
                    elem: #rt::ScalarType::#variant,
                    len: #len * #row_factor,
                }));
                match row {
                    Some(row) => {
                        sig.push(quote!(#arg: &[[#ty; #row]; #len]));
                        args.push(quote!(#rt::KernelArg::constant_rows(#arg)));
                    }
                    None => {
                        sig.push(quote!(#arg: &[#ty; #len]));
                        args.push(quote!(#rt::KernelArg::constant(#arg)));
                    }
                }
            }
            Ty::TensorMap(elem) => {
                let ty = scalar_tokens(elem, rt);
                let variant = format_ident!("{}", elem.runtime_variant());
                kinds.push(quote!(#rt::ParamKind::TensorMap {
                    elem: #rt::ScalarType::#variant,
                }));
                sig.push(quote!(#arg: &#rt::TensorMap<'_, #ty>));
                args.push(quote!(#rt::KernelArg::tensor_map(#arg)));
            }
            other => unreachable!("parameter of type {other:?}"),
        }
    }

    // A kernel split at launch takes whether its 32-bit body may run as a hidden last
    // parameter, computed here from the arguments (see `cuda::narrow`).
    let fits = pick("launch_fits");
    let fit_check = if launch_fit.is_empty() {
        quote!()
    } else {
        let atoms = launch_fit.iter().map(|(lhs, rhs)| {
            let (lhs, rhs) = (
                bound_tokens(kernel, &config, lhs),
                bound_tokens(kernel, &config, rhs),
            );
            quote!(#lhs <= #rhs)
        });
        let variant = format_ident!("{}", Scalar::U32.runtime_variant());
        kinds.push(quote!(#rt::ParamKind::Scalar(#rt::ScalarType::#variant)));
        args.push(quote!(#rt::KernelArg::scalar(#fits as u32)));
        quote!(let #fits: bool = #(#atoms)&&*;)
    };

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
                // `true as u64` is 1: a `bool` travels as the integer C++ reads.
                GenericParam::Const(n, ty) => {
                    let name = Ident::new(n, Span::call_site());
                    let ty = Ident::new(ty.rust_name(), Span::call_site());
                    template_params.push(quote!(#rt::TemplateParam::Const));
                    template_args.push(quote!(#rt::TemplateArg::Const(#name as u64)));
                    rust_generics.push(quote!(const #name: #ty));
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
    // The race checker names memory by the parameters' names.
    let kernel_static = quote!(#kernel_static.__with_param_names(&[#(#param_names),*]));
    // wgmma exists only on sm_90a: such a kernel is compiled for exactly compute capability 9.0.
    // Tensor copies need sm_90; their kernels are held to it too, so a GPU without them gets
    // the runtime's error rather than ptxas's.
    let kernel_static = if source.text.contains("rs_wgmma") || source.text.contains("rs_tma") {
        quote!(#kernel_static.__arch_specific(9, 0))
    } else {
        kernel_static
    };
    // A launch that fits runs the 32-bit body's own entry (see `cuda::narrow`).
    let kernel_static = match fits_entry {
        Some(entry) => quote!(#kernel_static.__with_fits_entry(#entry)),
        None => kernel_static,
    };
    // A kernel that reaches grid_sync launches cooperatively, with its barrier's word.
    let kernel_static = if source.text.contains("rs_grid_sync()") {
        quote!(#kernel_static.__cooperative())
    } else {
        kernel_static
    };
    // The CPU backend runs the twin; generic kernels have none yet.
    let (twin_items, kernel_static) = match twin {
        Some((items, needs_sync, false)) => (
            items,
            quote!(#kernel_static.with_cpu(__cpu_twin, #needs_sync)),
        ),
        Some((items, needs_sync, true)) => (
            items,
            quote!(#kernel_static.with_cpu(__cpu_twin, #needs_sync).__with_cpu_block(__cpu_block)),
        ),
        None => (quote!(), kernel_static),
    };
    let (outer_items, source_init) = (&source.items, &source.init);
    let (assertion_items, kernel_static) = match assertions {
        Some(table) => (
            table,
            quote!(#kernel_static.__with_assertions(__assertion_message)),
        ),
        None => (quote!(), kernel_static),
    };
    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            #twin_items
            #assertion_items

            /// The kernel's name as written in Rust.
            pub const NAME: &str = #name_str;
            /// The entry point in [`SOURCE`]: an `extern "C"` function, or a template for a
            /// generic kernel.
            pub const ENTRY: &str = #name_str;
            #outer_items
            #(#const_checks)*
            /// The CUDA C++ source generated for this kernel.
            pub const SOURCE: &str = #source_init;
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
                #fit_check
                #launch_call
            }
        }
    }
}

/// A bound as the launcher computes it from its arguments: `u64` arithmetic that saturates
/// as the CUDA side's does.
fn bound_tokens(kernel: &Function, config: &Ident, bound: &Bound) -> TokenStream {
    match bound {
        Bound::Num(n) => {
            let n = (*n).min(u64::MAX as u128) as u64;
            quote!(#n)
        }
        Bound::Param(value) => match value.of {
            LaunchOf::Param(local) => {
                let arg = format_ident!("{}", kernel.local(local).name);
                quote!((#arg as u64))
            }
            LaunchOf::Len(local) => {
                let arg = format_ident!("{}", kernel.local(local).name);
                quote!((#arg.len() as u64))
            }
            LaunchOf::Grid(axis) => {
                let axis = format_ident!("{}", AXES[usize::from(axis)]);
                quote!((#config.grid.#axis as u64))
            }
            LaunchOf::Block(axis) => {
                let axis = format_ident!("{}", AXES[usize::from(axis)]);
                quote!((#config.block.#axis as u64))
            }
        },
        // The module's typed copy of an outer constant, or the launcher's const generic.
        Bound::Sym(_, rust) => {
            let constant = format_ident!("{rust}");
            quote!((#constant as u64))
        }
        Bound::Op(op, a, b) => {
            let (a, b) = (
                bound_tokens(kernel, config, a),
                bound_tokens(kernel, config, b),
            );
            match op {
                BoundOp::Add => quote!(#a.saturating_add(#b)),
                BoundOp::Sub => quote!(#a.saturating_sub(#b)),
                BoundOp::Mul => quote!(#a.saturating_mul(#b)),
                BoundOp::Div => quote!({
                    let (a, b): (u64, u64) = (#a, #b);
                    a.checked_div(b).unwrap_or(a)
                }),
                BoundOp::Min => quote!(#a.min(#b)),
                BoundOp::Max => quote!(#a.max(#b)),
            }
        }
    }
}

/// The Rust type of a slice element or by-value argument.
fn elem_tokens(ty: Ty, rt: &TokenStream) -> TokenStream {
    match ty {
        Ty::Scalar(scalar) => scalar_tokens(scalar, rt),
        Ty::Struct(def) => def.0.path.parse().expect("a path"),
        Ty::Array { elem, len } => {
            let elem = elem_tokens(*elem, rt);
            let len: TokenStream = len.describe().parse().expect("a length");
            quote!([#elem; #len])
        }
        other => unreachable!("no launch argument of type {other:?}"),
    }
}

/// The runtime's description of a non-scalar element type, `rust` as Rust spells it.
fn value_type(ty: Ty, rust: &TokenStream, rt: &TokenStream) -> TokenStream {
    let name = ty.describe();
    match ty.c_layout() {
        Some((size, align)) => {
            let (size, align) = (size as usize, align as usize);
            quote!(#rt::ValueType { name: #name, size: #size, align: #align })
        }
        // A layout the macro cannot compute (a field's length it was not given as a number,
        // which `#[device]` reports at the field): rustc's.
        None => quote!(#rt::ValueType {
            name: #name,
            size: ::core::mem::size_of::<#rust>(),
            align: ::core::mem::align_of::<#rust>(),
        }),
    }
}

/// What `#[device]` adds beside a struct: the runtime's `__device_struct!`, which makes it a
/// `Value` (so buffers and kernels take it) and asserts that Rust lays it out as C does.
pub fn struct_layout_tokens(item: &syn::ItemStruct, rt: &TokenStream) -> TokenStream {
    if matches!(item.fields, syn::Fields::Unit) {
        return quote!();
    }
    let env = crate::parse::TypeEnv::default();
    let layout = crate::parse::parse_struct(&env, item, String::new()).and_then(|def| def.layout());
    let name = &item.ident;
    let lengths = length_copies(item);
    // A tuple struct's fields by position: `0: f32 => __gpu_place_0`.
    let fields = item.fields.iter().enumerate().map(|(index, f)| {
        let vis = &f.vis;
        let ty = &f.ty;
        match &f.ident {
            Some(ident) => {
                let place = format_ident!("__gpu_place_{}", ident);
                quote!(#ident: #ty => #vis #place)
            }
            None => {
                let position = syn::Index::from(index);
                let place = format_ident!("__gpu_place_{}", index);
                quote!(#position: #ty => #vis #place)
            }
        }
    });
    let layout = match layout {
        Some((size, align, offsets)) => {
            let (size, align) = (size as usize, align as usize);
            let offsets = offsets.iter().map(|o| *o as usize);
            quote! {
                #rt::__device_struct! {
                    #name { #(#fields),* } size #size, align #align, offsets [#(#offsets),*]
                }
            }
        }
        // A field of another `#[device]` struct: its size is rustc's to know, so the layout is
        // C's rules over the fields' Rust sizes (the CUDA side asserts the same numbers).
        None => {
            let types: Vec<&syn::Type> = item.fields.iter().map(|f| &f.ty).collect();
            let layout = quote! {
                #rt::__c_layout([#((::core::mem::size_of::<#types>(), ::core::mem::align_of::<#types>())),*])
            };
            let offsets = (0..types.len()).map(|i| quote!({ #layout.0[#i] }));
            // `#[repr(align(N))]` raises the alignment, and the size to a multiple of it.
            let least = crate::parse::repr_align(&item.attrs).unwrap_or(1) as usize;
            let align = quote!({
                if #layout.2 > #least { #layout.2 } else { #least }
            });
            quote! {
                #rt::__device_struct! {
                    #name { #(#fields),* } size { #layout.1.div_ceil(#align) * #align }, align #align, offsets [#(#offsets),*]
                }
            }
        }
    };
    quote!(#layout #lengths)
}

/// The struct's associated copies of the constants its fields' array lengths name
/// (`[u32; MAX_NEIGHBOURS]`): a kernel in another module reads the length through the struct,
/// which it names, where the constant's path may not resolve.
fn length_copies(item: &syn::ItemStruct) -> TokenStream {
    let paths = crate::parse::struct_length_constants(item);
    if paths.is_empty() {
        return quote!();
    }
    let copies = paths.iter().map(|path| {
        let copy = format_ident!("{}", field_length_copy(&path.to_string().replace(' ', "")));
        quote! {
            #[doc(hidden)]
            #[allow(non_upper_case_globals, clippy::unnecessary_cast)]
            pub const #copy: usize = #path as usize;
        }
    });
    let name = &item.ident;
    quote! {
        impl #name {
            #(#copies)*
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
