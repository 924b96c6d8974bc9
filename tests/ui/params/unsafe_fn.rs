use gpu::prelude::*;

#[kernel]
unsafe fn k(x: &mut [f32]) {}

fn main() {}
