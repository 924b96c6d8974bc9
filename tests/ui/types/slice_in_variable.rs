use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32], y: &mut [f32], first: bool) {
    let alias = if first { x } else { y };
}

fn main() {}
