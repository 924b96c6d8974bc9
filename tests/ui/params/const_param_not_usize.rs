use gpu::prelude::*;

#[kernel]
fn k<const N: u32>(x: &mut [f32]) {}

fn main() {}
