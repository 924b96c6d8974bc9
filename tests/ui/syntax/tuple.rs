use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let seven = (1.0f32, 2.0f32, 3.0f32, 4.0f32, 5.0f32, 6.0f32, 7.0f32);
}

fn main() {}
