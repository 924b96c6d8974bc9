use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let v = 1.0;
    v = 2.0;
    x[0] = v;
}

fn main() {}
