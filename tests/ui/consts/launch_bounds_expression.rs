use gpu_dsl::prelude::*;

const BLOCK: u32 = 128;

#[kernel(launch_bounds(BLOCK * 2))]
fn k(x: &mut [f32]) {
    x[0] = 1.0;
}

fn main() {}
