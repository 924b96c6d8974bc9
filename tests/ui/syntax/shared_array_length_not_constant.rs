use gpu_dsl::prelude::*;

#[kernel]
fn k(n: usize, x: &mut [f32]) {
    let tile = shared_array::<f32, n>();
}

fn main() {}
