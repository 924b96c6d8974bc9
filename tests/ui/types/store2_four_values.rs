use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32]) {
    let v = x.load4(0);
    y.store2(0, v);
}

fn main() {}
