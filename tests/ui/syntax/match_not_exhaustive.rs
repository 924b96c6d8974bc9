use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [i32], n: i32) {
    let v = match n {
        0 => 1,
        1..=9 => 2,
    };
    x[0] = v;
}

fn main() {}
