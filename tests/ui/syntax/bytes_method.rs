use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[u32], y: &mut [u8]) {
    y[0] = x[0].to_le_bytes()[1];
}

fn main() {}
