use gpu_dsl::prelude::*;

#[kernel]
fn k(n: u32, x: &mut [u32]) {
    if n {
        x[0] = 1;
    }
}

fn main() {}
