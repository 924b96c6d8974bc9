use gpu_dsl::prelude::*;

#[kernel]
fn k(mut x: &mut [f32]) {}

fn main() {}
