use gpu_dsl::prelude::*;

#[kernel]
fn k(a: i128, x: &mut [f32]) {}

fn main() {}
