use gpu_dsl::prelude::*;

#[kernel]
fn k(a: bool, x: &mut [f32]) {
    let b = a + true;
}

fn main() {}
