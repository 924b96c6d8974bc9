use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    for v in x.rchunks(4) {
        let w = v;
    }
}

fn main() {}
