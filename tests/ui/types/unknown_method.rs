use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    x[0] = x[0].frobnicate();
}

fn main() {}
