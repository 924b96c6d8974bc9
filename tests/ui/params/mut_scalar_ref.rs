use gpu::prelude::*;

#[kernel]
fn k(out: &mut f32) {}

fn main() {}
