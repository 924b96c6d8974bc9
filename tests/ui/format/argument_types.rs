use gpu_dsl::prelude::*;

#[kernel]
fn slice(x: &[f32]) {
    println!("{}", x);
}

#[kernel]
fn index3(x: &[f32]) {
    assert!(x.len() > 0, "at {}", thread_idx());
}

#[kernel]
fn hex_of_float(x: &[f32]) {
    let i = global_idx().x;
    assert!(x[i] > 0.0, "bits {:x}", x[i]);
}

#[kernel]
fn exponent_of_bool(flag: bool) {
    assert!(flag, "{:e}", flag);
}

fn main() {}
