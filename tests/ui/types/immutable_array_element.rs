use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let acc = [0.0f32; 4];
    acc[0] = 1.0;
}

fn main() {}
