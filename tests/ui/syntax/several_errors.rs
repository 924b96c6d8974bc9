use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let f = |v: f32| v;
    dbg!(1);
    let t = (1, 2);
}

fn main() {}
