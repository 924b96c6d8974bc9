use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let a = shared_array::<f32, 4>();
    let b = a;
    x[0] = b[0];
}

fn main() {}
