use gpu_dsl::prelude::*;

#[kernel]
fn k<T: Float>(a: T, x: &mut [f32]) {
    x[0] = x[0] * a;
}

fn main() {}
