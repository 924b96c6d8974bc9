use gpu_dsl::prelude::*;

#[kernel]
fn unknown_name(x: &[f32]) {
    let i = global_idx().x;
    println!("x[{j}] = {}", x[i]);
}

#[kernel]
fn named_argument(x: &[f32]) {
    let i = global_idx().x;
    println!("x[{i}] = {v}", v = x[i]);
}

#[kernel]
fn field_access(x: &[f32]) {
    let i = global_idx().x;
    assert!(i < x.len(), "{x.len}");
}

fn main() {}
