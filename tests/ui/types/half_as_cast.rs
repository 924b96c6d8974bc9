use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f16], y: &mut [f32]) {
    y[0] = x[0] as f32;
}

fn main() {}
