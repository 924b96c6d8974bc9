use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    dbg!(x[0]);
}

#[kernel]
fn debug_panic(x: &mut [f32]) {
    debug_panic!("{}", x[0]);
}

fn main() {}
