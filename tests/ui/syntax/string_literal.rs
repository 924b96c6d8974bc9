use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let s = "hello";
}

fn main() {}
