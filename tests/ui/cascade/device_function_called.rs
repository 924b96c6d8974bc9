use gpu_dsl::prelude::*;

#[device]
fn scale(x: i128, y: f32) -> f32 {
    y * 2.0 + x as f32
}

#[kernel]
fn k(out: &mut [f32]) {
    out[0] = scale(1, out[0]);
}

fn main() {}
