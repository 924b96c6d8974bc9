use gpu_dsl::prelude::*;

#[device]
fn apply<F: Fn(f32) -> f32>(x: f32, f: F) -> f32 {
    f(x)
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    out[i] = apply(x[i], |v: u32| v + 1);
}

fn main() {}
