use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let v = [x[0], x[1], x[2]];
    let [first, ..] = v;
    x[0] = first;
}

fn main() {}
