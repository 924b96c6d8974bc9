use gpu_dsl::prelude::*;

#[kernel]
fn k(self, x: &mut [f32]) {}

fn main() {}
