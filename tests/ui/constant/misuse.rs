use gpu_dsl::prelude::*;

#[kernel]
fn written(#[constant] taps: &[f32; 4], y: &mut [f32]) {
    taps[0] = 1.0;
    y[0] = taps[0];
}

#[kernel]
fn by_value(#[constant] taps: [f32; 4], y: &mut [f32]) {
    y[0] = taps[0];
}

#[kernel]
fn of_bool(#[constant] flags: &[bool; 4], y: &mut [f32]) {
    y[0] = 1.0;
}

#[kernel]
fn other_attribute(#[inline] x: f32, y: &mut [f32]) {
    y[0] = x;
}

fn main() {}
