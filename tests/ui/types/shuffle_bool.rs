use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [u32], flag: bool) {
    let other = shfl_xor_sync(0xffff_ffff, flag, 1);
}

fn main() {}
