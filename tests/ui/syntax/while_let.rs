use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], n: u32) {
    // Taking apart an `Option` is accepted; another pattern is not.
    while let Some(_v) = n.checked_sub(5) {
        x[1] = 2.0;
        break;
    }
    while let 3 = n {
        x[0] = 1.0;
    }
}

fn main() {}
