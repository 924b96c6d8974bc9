use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[i64], y: &mut [i64]) {
    let v = x.load4(0);
    y.store4(0, v);
}

fn main() {}
