use gpu_dsl::prelude::*;

#[kernel]
fn k<F: Fn(f32) -> f32>(x: &[f32], f: F, out: &mut [f32]) {
    let i = global_idx().x;
    out[i] = f(x[i]);
}

fn main() {}
