use gpu_dsl::prelude::*;

#[device]
fn square<T: Number>(x: T) -> T {
    x * x
}

#[device]
fn plain(x: f32) -> f32 {
    x
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        out[i] = square::<f32, f32>(x[i]) + plain::<f32>(x[i]);
    }
}

fn main() {}
