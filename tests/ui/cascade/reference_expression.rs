use gpu::prelude::*;

#[device]
fn total(x: &[f32]) -> f32 {
    x[0] + x[1]
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    out[0] = total(&x);
}

fn main() {}
