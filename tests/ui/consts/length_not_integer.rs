use gpu_dsl::prelude::*;

#[kernel]
fn k<const N: usize>(x: &mut [f32]) {
    let a = shared_array::<f32, { N << 1 }>();
    let b = [0.0f32; { N * x.len() }];
    a[0] = b[0];
    x[0] = a[0];
}

fn main() {}
