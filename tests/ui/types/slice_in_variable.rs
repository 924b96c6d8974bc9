use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let alias = x;
}

fn main() {}
