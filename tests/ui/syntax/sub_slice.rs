use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let v = x[0..4][0];
}

fn main() {}
