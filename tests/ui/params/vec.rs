use gpu_dsl::prelude::*;

#[kernel]
fn k(x: Vec<f32>) {}

fn main() {}
