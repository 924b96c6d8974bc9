use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let a = [1.0f32; 4];
}

fn main() {}
