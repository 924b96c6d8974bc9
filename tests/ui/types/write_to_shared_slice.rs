use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32]) {
    x[0] = 1.0;
}

fn main() {}
