use gpu_dsl::prelude::*;

const SCALE: f32 = 2.0;

#[kernel]
fn k<T: Float>(x: &mut [T]) {
    x[0] = x[0] * SCALE;
}

fn main() {}
