use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    println!("{}", x[0]);
}

fn main() {}
