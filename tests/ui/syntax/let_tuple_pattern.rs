use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let ((a, b), c) = ((x[0], x[1]), x[2]);
    x[2] = a + b + c;
}

fn main() {}
