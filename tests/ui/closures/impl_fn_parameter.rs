use gpu_dsl::prelude::*;

#[device]
fn apply(x: f32, op: impl Fn(f32) -> f32) -> f32 {
    op(x)
}

fn main() {}
