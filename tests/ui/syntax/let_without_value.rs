use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let v: f32;
    x[0] = 1.0;
}

fn main() {}
