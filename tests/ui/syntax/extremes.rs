use gpu_dsl::prelude::*;

#[kernel]
fn float_max(x: &[f32], out: &mut [f32]) {
    out[0] = *x.iter().min_by(|a, b| if a < b { a.total_cmp(b) } else { b.total_cmp(a) }).unwrap();
}

fn main() {}
