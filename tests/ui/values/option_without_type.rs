use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], out: &mut [u32]) {
    let mut best = None;
    for j in 0..x.len() {
        if x[j] > 0.0 {
            best = Some(j);
        }
    }
    out[0] = best.unwrap_or(0) as u32;
}

fn main() {}
