use gpu_dsl::prelude::*;

#[device]
fn start() -> usize {
    1
}

#[device]
fn total(x: &[f32]) -> f32 {
    x[0]
}

#[kernel]
fn k(x: &mut [f32], y: &[f32]) {
    x[0] = total(&y[start()..]);
    let z = &mut y[0..2];
}

fn main() {}
