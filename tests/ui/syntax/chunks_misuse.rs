use gpu_dsl::prelude::*;

#[kernel]
fn size_zero(x: &[f32], out: &mut [f32]) {
    for w in x.windows(0) {
        out[0] += w[0];
    }
}

#[kernel]
fn not_a_slice_name(x: &[f32], out: &mut [f32]) {
    for c in (&x).chunks(2) {
        out[0] += c[0];
    }
}

#[kernel]
fn two_sizes(x: &[f32], out: &mut [f32]) {
    for c in x.chunks_exact(2, 3) {
        out[0] += c[0];
    }
}

fn main() {}
