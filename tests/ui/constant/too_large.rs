use gpu_dsl::prelude::*;

#[kernel]
fn one(#[constant] table: &[f32; 2000], y: &mut [f32]) {
    y[0] = table[0];
}

#[kernel]
fn together(#[constant] a: &[f64; 300], #[constant] b: &[f64; 300], y: &mut [f64]) {
    y[0] = a[0] + b[0];
}

fn main() {}
