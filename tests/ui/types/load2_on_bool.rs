use gpu_dsl::prelude::*;

#[kernel]
fn k(flags: &[bool], out: &mut [u32]) {
    let pair = flags.load2(0);
    out[0] = pair[0] as u32;
}

fn main() {}
