use gpu_dsl::prelude::*;

fn helper(x: f32) -> f32 {
    x * 2.0
}

#[kernel]
fn k(out: &mut [f32]) {
    out[0] = helper(1.0);
}

fn main() {}
