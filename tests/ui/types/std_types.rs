use gpu_dsl::prelude::*;

#[kernel]
fn optional(x: &mut [i32]) {
    let found: Option<[i32; 2]> = None;
    x[0] = 1;
}

#[kernel]
fn wrapped(x: &mut [i32]) {
    let v: Result<i32, u32> = Ok(x[0]);
    x[1] = 2;
}

#[kernel]
fn swapped_values(x: &mut [i32]) {
    core::mem::swap(x[0], x[1]);
}

fn main() {}
