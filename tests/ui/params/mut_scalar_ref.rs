use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut f32) {}

fn main() {}
