//! Finds how the user's crate names our crates, so generated code works whether it depends on
//! `gpu-runtime` and `gpu-macros` directly or only on the `gpu` facade.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::quote;

/// The path to `direct` (a crate of ours) from the crate being compiled, or to its re-export
/// `facade_item` in the `gpu` facade.
fn path_to(direct: &str, facade_item: TokenStream) -> TokenStream {
    match crate_name(direct) {
        Ok(FoundCrate::Itself) => return quote!(crate),
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            return quote!(::#ident);
        }
        Err(_) => {}
    }
    match crate_name("gpu-dsl") {
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            quote!(::#ident::#facade_item)
        }
        // Inside the facade's own examples and tests the crates are direct dependencies.
        _ => {
            let ident = syn::Ident::new(&direct.replace('-', "_"), Span::call_site());
            quote!(::#ident)
        }
    }
}

/// The runtime crate.
pub fn runtime() -> TokenStream {
    path_to("gpu-dsl-runtime", quote!(runtime))
}

/// The continuation macro that resumes a kernel's expansion.
pub fn resume_macro() -> TokenStream {
    let macros = path_to("gpu-dsl-macros", quote!(__macros));
    quote!(#macros::__kernel_resume)
}
