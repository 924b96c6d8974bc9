use gpu_dsl::prelude::*;

#[kernel]
fn float_max(x: &[f32], out: &mut [f32]) {
    out[0] = *x.iter().max_by(|a, b| a.partial_cmp(b).unwrap()).unwrap();
}

fn main() {}
