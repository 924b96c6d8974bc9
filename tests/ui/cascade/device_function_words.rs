use gpu_dsl::prelude::*;

#[device]
fn bump(total: &mut f32, by: Vec<f32>) {
    total += by[0];
}

#[device]
fn first((a, b): (f32, f32)) -> f32 {
    a + b
}

fn main() {}
