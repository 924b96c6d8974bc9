use gpu_dsl::prelude::*;

#[kernel]
fn not_a_condition(n: u32) {
    assert!(n);
}

#[kernel]
fn different_types(a: u32, b: i32) {
    assert_eq!(a, b);
}

#[kernel]
fn one_operand(a: u32) {
    assert_ne!(a);
}

#[kernel]
fn too_many_values(a: u32) {
    assert_eq!(a, 1, "{} {} {} {} {} {} {}", a, a, a, a, a, a, a);
}

fn main() {}
