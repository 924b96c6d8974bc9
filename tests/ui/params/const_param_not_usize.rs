use gpu_dsl::prelude::*;

#[kernel]
fn k<const N: u32>(x: &mut [f32]) {}

fn main() {}
