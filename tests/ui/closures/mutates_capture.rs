use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    let mut sum = 0.0f32;
    let add = |v: f32| {
        sum += v;
        sum
    };
    let store = |v: f32| {
        out[i] = v;
        v
    };
    out[i] = add(x[i]) + store(1.0);
}

fn main() {}
