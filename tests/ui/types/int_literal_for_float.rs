use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let a: f32 = 1;
    x[0] = a;
}

fn main() {}
