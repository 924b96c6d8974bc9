use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    for v in x {
        let w = v;
    }
}

fn main() {}
