use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let i = thread_idx().x;
    x[i] = 1.0;
}

fn main() {}
