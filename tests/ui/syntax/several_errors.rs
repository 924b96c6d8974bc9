use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let s = "text";
    println!("{}", 1);
    let t = (1, 2);
}

fn main() {}
