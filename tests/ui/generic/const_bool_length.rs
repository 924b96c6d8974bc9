use gpu_dsl::prelude::*;

#[kernel]
fn k<const UP: bool>(x: &mut [u32]) {
    // A `bool` is no length.
    let tile = shared_array::<u32, UP>();
    tile[0] = 1;
    x[0] = tile[0];
}

fn main() {}
