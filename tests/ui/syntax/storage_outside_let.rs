use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    x[0] = shared_array::<f32, 4>()[0];
}

fn main() {}
