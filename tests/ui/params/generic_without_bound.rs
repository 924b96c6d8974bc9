use gpu_dsl::prelude::*;

#[kernel]
fn k<T>(x: &mut [T]) {}

fn main() {}
