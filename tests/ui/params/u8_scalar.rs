use gpu::prelude::*;

#[kernel]
fn k(a: u8, x: &mut [f32]) {}

fn main() {}
