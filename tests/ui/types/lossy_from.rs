use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[i32], y: &mut [u32], z: &mut [f32]) {
    y[0] = u32::from(x[0]);
    z[0] = f32::from(x[1]);
    y[1] = u32::from(x[2] > 0);
}

fn main() {}
