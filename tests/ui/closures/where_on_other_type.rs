use gpu_dsl::prelude::*;

#[device]
fn apply<F>(x: f32, op: F) -> f32
where
    F: Fn(f32) -> f32,
    [f32; 2]: Copy,
{
    op(x)
}

fn main() {}
