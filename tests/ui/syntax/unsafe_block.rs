use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    unsafe {
        x[0] = 1.0;
    }
}

fn main() {}
