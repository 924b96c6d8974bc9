use gpu::prelude::*;

#[device]
fn count(x: f32) -> u32 {
    x * 2.0
}

fn main() {}
