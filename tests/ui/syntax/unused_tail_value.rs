use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    x[0] * 2.0
}

fn main() {}
