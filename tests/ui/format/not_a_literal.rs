use gpu_dsl::prelude::*;

#[kernel]
fn print_name(x: &[f32]) {
    let i = global_idx().x;
    println!(i, x[i]);
}

#[kernel]
fn assert_message(x: &[f32]) {
    let i = global_idx().x;
    assert!(i < x.len(), i);
}

fn main() {}
