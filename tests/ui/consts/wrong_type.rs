use gpu_dsl::prelude::*;

const TILE: u32 = 32;
const SCALE: f64 = 0.5;

#[kernel]
fn k(x: &mut [f32]) {
    let tile = shared_array::<f32, TILE>();
    tile[0] = x[0] * SCALE;
    x[0] = tile[0];
}

fn main() {}
