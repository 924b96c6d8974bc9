use gpu_dsl::prelude::*;

#[kernel]
fn k(a: f32, b: u32, x: &mut [f32]) {
    x[0] = a + b;
}

fn main() {}
