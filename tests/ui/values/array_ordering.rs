use gpu_dsl::prelude::*;

#[kernel]
fn sorted_pairs(x: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    let a = [x[0], x[1]];
    let pair = (x[2], x[3]);
    if a < [1, 2] && pair >= (3, 4) {
        out[i] = 1;
    }
}

fn main() {}
