use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32]) {
    let n = 4;
    let v = core::array::from_fn::<f32, 4, _>(|i| x[i]);
    y[0] = v[0] + std::array::from_fn::<f32, 2, _>(|i| x[i + n])[1];
}

fn main() {}
