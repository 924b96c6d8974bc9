use gpu::prelude::*;

#[kernel]
fn k(self, x: &mut [f32]) {}

fn main() {}
