use gpu_dsl::prelude::*;

#[device]
fn half(x: f32) -> f32 {
    x * 0.5
}

#[kernel]
fn k(n: u32, out: &mut [f32]) {
    out[0] = half(n);
}

fn main() {}
