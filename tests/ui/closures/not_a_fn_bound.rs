use gpu_dsl::prelude::*;

#[device]
fn twice(x: f32) -> f32 {
    x + x
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        out[i] = twice(|v: f32| v * 2.0);
    }
}

fn main() {}
