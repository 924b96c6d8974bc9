use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [i32], n: i32) {
    match n {
        v if v > 3 => x[0] = 1,
        _ => x[0] = 2,
    }
}

fn main() {}
