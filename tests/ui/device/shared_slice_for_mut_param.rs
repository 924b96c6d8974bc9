use gpu_dsl::prelude::*;

#[device]
fn clear(out: &mut [f32]) {
    out[0] = 0.0;
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    clear(x);
    out[0] = 1.0;
}

fn main() {}
