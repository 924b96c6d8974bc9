//! With the `aot` feature: the library's bundle is registered before `main` and holds every
//! kernel instantiation gpu-kernels launches. Without it there is nothing to check.
#![cfg(feature = "aot")]

#[test]
fn library_bundle_is_registered_before_main() {
    // Nothing here registered it: the facade's startup registration did.
    let held = gpu_dsl::aot::registered_variants();
    let embedded = gpu_dsl::aot::contents(gpu_dsl::aot::LIBRARY_BUNDLE)
        .unwrap()
        .len();
    assert!(embedded > 0);
    assert!(
        held >= embedded,
        "{held} variants registered, {embedded} embedded"
    );
}

#[test]
fn library_bundle_holds_every_library_instantiation() {
    for (kernel, args) in gpu_dsl::kernels::all_instantiations() {
        let checked = kernel.checked_by_default();
        assert!(
            gpu_dsl::aot::is_registered(kernel, &args, checked),
            "{} {args:?} (checked: {checked}) is not in the bundle",
            kernel.name()
        );
    }
    for entry in gpu_dsl::aot::contents(gpu_dsl::aot::LIBRARY_BUNDLE).unwrap() {
        assert!(!entry.images.is_empty(), "{}", entry.label);
    }
}
