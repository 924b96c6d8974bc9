use gpu_dsl::prelude::*;

#[device]
fn warp_reduce<T: Number, F: Fn(T, T) -> T>(value: T, op: F) -> T {
    let mut v = value;
    let mut offset = 16u32;
    while offset > 0 {
        v = op(v, shfl_down_sync(0xffff_ffff, v, offset));
        offset /= 2;
    }
    v
}

#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    let total = warp_reduce(x[i], |a| a);
    let double = |a: f32| a * 2.0;
    out[i] = total + double(1.0, 2.0);
}

fn main() {}
