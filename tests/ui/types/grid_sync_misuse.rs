use gpu_dsl::prelude::*;

// grid_sync is a statement that takes nothing.
#[kernel]
fn k(out: &mut [u32]) {
    let done = grid_sync();
    grid_sync(1);
    out[0] = 1;
}

fn main() {}
