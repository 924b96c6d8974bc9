use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    for i in ..=3 {
        x[i] = 1.0;
    }
}

fn main() {}
