use gpu_dsl::prelude::*;

#[kernel]
fn missing(x: &[f32]) {
    let i = global_idx().x;
    println!("{} is {}", i);
}

#[kernel]
fn unused(x: &[f32]) {
    let i = global_idx().x;
    assert!(i < x.len(), "out of range", i);
}

#[kernel]
fn positional(x: &[f32]) {
    let i = global_idx().x;
    println!("{2}", i, x[i]);
}

fn main() {}
