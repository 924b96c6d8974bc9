use gpu_dsl::prelude::*;

#[kernel]
fn optional(x: &mut [i32]) {
    let found: Option<i32> = None;
    x[0] = 1;
}

#[kernel]
fn wrapped(x: &mut [i32]) {
    let v = Some(x[0]);
    x[1] = 2;
}

#[kernel]
fn swapped_values(x: &mut [i32]) {
    core::mem::swap(x[0], x[1]);
}

fn main() {}
