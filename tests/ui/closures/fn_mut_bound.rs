use gpu_dsl::prelude::*;

#[device]
fn apply<F: FnMut(f32) -> f32>(x: f32, f: F) -> f32 {
    f(x)
}

fn main() {}
