use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], a: f32) {
    let r = &a;
}

fn main() {}
