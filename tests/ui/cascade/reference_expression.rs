use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let first = &x[0];
    out[0] = x[1];
}

fn main() {}
