use gpu_dsl::prelude::*;

const TAPS: [f32; 3] = [0.25, 0.5, 0.25];
const BITS: [u8; 4] = [0, 1, 1, 2];

#[kernel]
fn table_as_value(x: &mut [f32]) {
    let copy = TAPS;
    x[0] = 1.0;
}

#[kernel]
fn table_written(x: &mut [f32]) {
    TAPS[0] = x[0];
}

#[kernel]
fn table_type_unknown(x: &mut [u32]) {
    x[0] = (BITS[0] + BITS[1]) as u32;
}

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

const PAIRS: [Pair; 2] = [Pair { a: 1.0, b: 2.0 }, Pair { a: 3.0, b: 4.0 }];

#[kernel]
fn table_of_structs(x: &mut [f32]) {
    let p: Pair = PAIRS[0];
    x[0] = p.a;
}

fn main() {}
