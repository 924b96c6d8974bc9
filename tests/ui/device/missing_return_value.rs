use gpu_dsl::prelude::*;

#[device]
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        return 1.0;
    }
}

fn main() {}
