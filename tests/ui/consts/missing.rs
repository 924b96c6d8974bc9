use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let tile = shared_array::<f32, TILE>();
    tile[0] = x[0];
    x[0] = tile[0] * SCALE;
}

fn main() {}
