use gpu_dsl::prelude::*;

#[device]
fn tap(#[constant] taps: &[f32; 4], i: usize) -> f32 {
    taps[i]
}

fn main() {}
