use gpu_dsl::prelude::*;

const TAPS: [f32; 3] = [0.25, 0.5, 0.25];

#[kernel]
fn k(x: &mut [f32]) {
    x[0] = TAPS[1];
}

fn main() {}
