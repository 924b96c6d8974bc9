use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [i32], f: f32) {
    match f {
        _ => x[0] = 1,
    }
}

fn main() {}
