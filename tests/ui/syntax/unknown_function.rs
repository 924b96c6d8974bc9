use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    x[0] = compute(1.0);
}

fn main() {}
