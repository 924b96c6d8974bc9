use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
struct Pair(f32, f32);

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
struct Named {
    a: f32,
}

#[kernel]
fn wrong_arity(x: &mut [f32]) {
    let p = Pair(x[0]);
    x[0] = 1.0;
}

#[kernel]
fn named_by_position(x: &mut [f32]) {
    let n = Named(x[0]);
    x[0] = n.a;
}

fn main() {}
