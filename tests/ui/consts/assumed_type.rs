use gpu_dsl::prelude::*;

const MAX_ITER: u32 = 256;
const LIMIT: usize = 8;

// Nothing in these kernels fixes the constant's type, so it is taken as `i32`.
#[kernel]
fn counted(out: &mut [f32]) {
    let mut it = 0;
    while it < MAX_ITER {
        it += 1;
    }
    out[0] = it as f32;
}

#[kernel]
fn ranged(out: &mut [f32]) {
    let mut s = 0.0;
    for _ in 0..LIMIT {
        s += 1.0;
    }
    out[0] = s;
}

fn main() {}
