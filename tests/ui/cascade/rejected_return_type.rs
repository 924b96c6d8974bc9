use gpu_dsl::prelude::*;

#[device]
fn narrow(x: f32) -> u8 {
    let y = x * 2.0;
    y
}

#[kernel]
fn k(x: &mut [f32]) -> f32 {
    x[0]
}

fn main() {}
