use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[u8], y: &mut [u32]) {
    y[0] = x[0] as u32;
    y[1] = u8::try_from(y[2]).unwrap_or(0) as u32;
    for i in (0..8usize).step_by(2).rev() {
        y[i] = 0;
    }
    for i in (0..8usize).rev().step_by(2) {
        y[i] = 1;
    }
}

fn main() {}
