use gpu_dsl::prelude::*;

#[device]
fn count(x: f32) -> u32 {
    x * 2.0
}

fn main() {}
