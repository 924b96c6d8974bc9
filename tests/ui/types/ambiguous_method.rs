use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let v = 2.0.sqrt();
}

fn main() {}
