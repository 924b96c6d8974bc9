use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let (a, b) = (x[0], x[1]);
    x[2] = a + b;
}

fn main() {}
