use gpu::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    'outer: loop {
        break;
    }
}

fn main() {}
