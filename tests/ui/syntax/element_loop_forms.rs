use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], y: &[f32]) {
    for v in x.iter_mut() {
        let w = v.max(1.0);
    }
    for (a, b) in y.iter().zip(y.iter().rev()) {
        let w = a * b;
    }
    for (i, v, z) in y.iter().enumerate() {
        let w = *v;
    }
}

fn main() {}
