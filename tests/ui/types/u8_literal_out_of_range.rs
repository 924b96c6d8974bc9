use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [u8], signed: &mut [i8]) {
    out[0] = 256;
    signed[0] = -129;
}

fn main() {}
