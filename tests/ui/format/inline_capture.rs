use gpu::prelude::*;

#[kernel]
fn capture(x: &[f32]) {
    let i = global_idx().x;
    println!("x[{i}] = {}", x[i]);
}

fn main() {}
