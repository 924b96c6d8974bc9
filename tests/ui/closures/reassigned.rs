use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    let mut f = |v: f32| v * 2.0;
    f = |v: f32| v * 3.0;
    out[i] = f(x[i]);
}

fn main() {}
