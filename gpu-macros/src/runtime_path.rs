//! Finds how the user's crate names the runtime, so generated code works whether it depends on
//! `gpu-runtime` directly or only on the `gpu` facade.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::quote;

/// The path to the runtime crate from the crate being compiled.
pub fn runtime_path() -> TokenStream {
    match crate_name("gpu-runtime") {
        Ok(FoundCrate::Itself) => return quote!(crate),
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            return quote!(::#ident);
        }
        Err(_) => {}
    }
    match crate_name("gpu") {
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            quote!(::#ident::runtime)
        }
        // Inside the facade's own examples and tests the runtime is a direct dependency.
        _ => quote!(::gpu_runtime),
    }
}
