use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    x.atomic_or(0, 1.0);
}

fn main() {}
