use gpu_dsl::prelude::*;

#[kernel]
fn k(a: u32, x: &mut [u32]) {
    x[0] = -a;
}

fn main() {}
