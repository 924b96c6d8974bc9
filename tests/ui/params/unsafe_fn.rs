use gpu_dsl::prelude::*;

#[kernel]
unsafe fn k(x: &mut [f32]) {}

fn main() {}
