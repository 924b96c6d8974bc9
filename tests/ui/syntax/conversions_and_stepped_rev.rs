use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[u8], y: &mut [u32]) {
    y[0] = x[0] as u32;
    y[1] = u8::try_from(y[2]).unwrap_or(0) as u32;
    for i in (0..8usize).step_by(2).rev() {
        y[i] = 0;
    }
    // Walked down by steps from the top: accepted.
    for i in (0..8usize).rev().step_by(2) {
        y[i] = 1;
    }
    // Over a slice's elements, `.rev().step_by(s)` asks for the indices.
    for v in x.iter().rev().step_by(2) {
        y[3] = *v as u32;
    }
}

fn main() {}
