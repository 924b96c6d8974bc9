use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [i32], n: i32) {
    let v = match n {
        0 => 1,
        1..=9 => 2,
    };
    x[0] = v;
}

// Ranges open at an end that miss one value (-1).
#[kernel]
fn gap(x: &mut [i32], n: i32) {
    x[0] = match n {
        0.. => 1,
        ..=-2 => 2,
    };
}

fn main() {}
