use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    #[unroll(0)]
    for i in 0..4 {
        x[i] = 1.0;
    }
    #[unroll(four)]
    for i in 0..4 {
        x[i] = 2.0;
    }
    #[unroll]
    #[unroll(2)]
    for i in 0..4 {
        x[i] = 3.0;
    }
}

fn main() {}
