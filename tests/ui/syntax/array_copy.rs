use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let a = [1.0f32; 4];
    let b = a;
    x[0] = b[0];
}

fn main() {}
