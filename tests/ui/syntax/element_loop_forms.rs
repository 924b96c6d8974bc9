use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], y: &[f32]) {
    for v in x.iter_mut() {
        *v = 0.0;
    }
    for v in y[1..].iter() {
        let w = *v;
    }
    for (i, v, z) in y.iter().enumerate() {
        let w = *v;
    }
}

fn main() {}
