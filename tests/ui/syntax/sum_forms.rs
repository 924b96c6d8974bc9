use gpu_dsl::prelude::*;

#[kernel]
fn nested_sum(x: &mut [f32]) {
    x[0] = 1.0 + x.iter().sum::<f32>();
}

#[kernel]
fn untyped_sum(x: &[f32], out: &mut [f32]) {
    let total = x.iter().sum();
    out[0] = total;
}

fn main() {}
