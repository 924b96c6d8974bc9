//! Compile-fail tests: every construct outside the kernel language, every type error and every
//! mistyped launch is a compile error at the user's span. `TRYBUILD=overwrite` regenerates the
//! `.stderr` files; review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*/*.rs");
}
