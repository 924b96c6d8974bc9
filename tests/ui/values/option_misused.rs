use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], out: &mut [u32]) {
    let mut best: Option<usize> = None;
    if x[0] > 0.0 {
        best = Some(0);
    }
    out[0] = best as u32;
}

fn main() {}
