use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], n: u32) {
    while let Some(v) = n.checked_sub(1) {
        x[0] = 1.0;
    }
}

fn main() {}
