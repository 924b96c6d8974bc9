use gpu_dsl::prelude::*;

const TILE: usize = 32;

#[kernel]
fn k(x: &mut [f32]) {
    let t = TILE;
    x[0] = 1.0;
}

fn main() {}
