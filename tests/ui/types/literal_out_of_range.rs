use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [u32]) {
    x[0] = 4294967296;
}

fn main() {}
