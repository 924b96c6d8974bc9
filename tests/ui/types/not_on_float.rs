use gpu_dsl::prelude::*;

#[kernel]
fn k(a: f32, x: &mut [f32]) {
    x[0] = !a;
}

fn main() {}
