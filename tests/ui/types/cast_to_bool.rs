use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [i32]) {
    let b = x[0] as bool;
}

fn main() {}
