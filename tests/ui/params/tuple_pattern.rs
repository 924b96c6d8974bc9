use gpu_dsl::prelude::*;

#[kernel]
fn k((a, b): (f32, f32), x: &mut [f32]) {}

fn main() {}
