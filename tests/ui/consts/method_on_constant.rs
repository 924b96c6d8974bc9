use gpu_dsl::prelude::*;

const SCALE: f32 = 2.0;
const WIDTH: u32 = 64;

#[kernel]
fn k(x: &mut [f32]) {
    // A method on a constant whose type only a later use gives (`SCALE.sqrt() * x[0]`) is
    // fine; these are not: a method whose result's type depends on the receiver's, and one
    // that the type the constant takes lacks.
    let bits = SCALE.to_bits();
    x[1] = SCALE;
    x[0] = WIDTH.sqrt() as f32;
    let w: u32 = WIDTH;
}

fn main() {}
