use gpu_dsl::prelude::*;

#[kernel]
async fn k(x: &mut [f32]) {}

fn main() {}
