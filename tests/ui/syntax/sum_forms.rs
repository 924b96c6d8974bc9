use gpu_dsl::prelude::*;

#[kernel]
fn conditional_sum(x: &mut [f32]) {
    if x.len() > 2 && x[2..].iter().sum::<f32>() > 0.0 {
        x[0] = 1.0;
    }
}

#[kernel]
fn untyped_sum(x: &[f32], out: &mut [f32]) {
    let total = x.iter().sum();
    out[0] = total;
}

fn main() {}
