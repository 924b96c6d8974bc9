use gpu::prelude::*;

#[device]
fn twice<T: Float>(x: T) -> T {
    x + x
}

fn main() {}
