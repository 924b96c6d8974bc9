//! Finds how the user's crate names our crates, so generated code works whether it depends on
//! `gpu-dsl-runtime` and `gpu-dsl-macros` directly or only on the `gpu-dsl` facade.
//!
//! proc-macro-crate reads the user's `Cargo.toml` and reports the name a dependency has there
//! (its key, or the `package = ...` rename), which is the name the code refers to it by.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::quote;

/// The package name of the facade.
const FACADE: &str = "gpu-dsl";

/// The path to `direct` (a package of ours) from the crate being compiled, or to its re-export
/// `facade_item` in the facade, as `lookup` (proc-macro-crate's `crate_name`) finds them.
fn path_with(
    lookup: impl Fn(&str) -> Option<FoundCrate>,
    direct: &str,
    facade_item: TokenStream,
) -> TokenStream {
    let own = syn::Ident::new(&direct.replace('-', "_"), Span::call_site());
    match lookup(direct) {
        // Neither the macros nor the runtime expand `#[kernel]` inside themselves (the runtime
        // does not depend on the macros), so finding the crate itself means compiling one of
        // its doctests, which see it as an extern crate.
        Some(FoundCrate::Itself) => return quote!(::#own),
        Some(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            return quote!(::#ident);
        }
        None => {}
    }
    match lookup(FACADE) {
        Some(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            quote!(::#ident::#facade_item)
        }
        // Inside the facade's own examples and tests the crates are direct dependencies.
        _ => quote!(::#own),
    }
}

/// [`path_with`] the user's `Cargo.toml`.
fn path_to(direct: &str, facade_item: TokenStream) -> TokenStream {
    path_with(|name| crate_name(name).ok(), direct, facade_item)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime's path for a user whose `Cargo.toml` has the dependencies `deps` (package,
    /// then the name it goes by).
    fn runtime_for(deps: &[(&str, &str)]) -> String {
        let lookup = |package: &str| {
            deps.iter()
                .find(|(p, _)| *p == package)
                .map(|(_, name)| FoundCrate::Name(name.to_string()))
        };
        path_with(lookup, "gpu-dsl-runtime", quote!(runtime)).to_string()
    }

    #[test]
    fn through_the_facade_under_its_name_or_a_rename() {
        assert_eq!(
            runtime_for(&[("gpu-dsl", "gpu_dsl")]),
            ":: gpu_dsl :: runtime"
        );
        assert_eq!(runtime_for(&[("gpu-dsl", "gpu")]), ":: gpu :: runtime");
    }

    #[test]
    fn a_direct_dependency_wins_over_the_facade() {
        let deps = [("gpu-dsl", "gpu_dsl"), ("gpu-dsl-runtime", "rt")];
        assert_eq!(runtime_for(&deps), ":: rt");
    }

    #[test]
    fn the_crate_itself_and_no_dependency_name_the_crate() {
        assert_eq!(runtime_for(&[]), ":: gpu_dsl_runtime");
        let itself = |package: &str| (package == "gpu-dsl-macros").then_some(FoundCrate::Itself);
        let path = path_with(itself, "gpu-dsl-macros", quote!(__macros));
        assert_eq!(path.to_string(), ":: gpu_dsl_macros");
    }
}
