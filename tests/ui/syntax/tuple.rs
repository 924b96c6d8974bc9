use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let pair = (1.0, 2.0);
}

fn main() {}
