use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let i = global_idx().x;
    x[i] = reduce_add_sync(0xffff_ffff, x[i]);
}

fn main() {}
