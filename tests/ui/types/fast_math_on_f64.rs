use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f64]) {
    x[0] = x[0].fast_exp();
}

fn main() {}
