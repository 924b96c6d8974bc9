use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [u32]) {
    let mut rows = [[0u32; 4]; 2];
    rows[1].atomic_add(0, 1);
    out[0] = rows[1][0];
}

fn main() {}
