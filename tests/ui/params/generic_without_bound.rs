use gpu::prelude::*;

#[kernel]
fn k<T>(x: &mut [T]) {}

fn main() {}
