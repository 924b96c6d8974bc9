use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    if x.len() == 0 {
        return 1;
    }
}

fn main() {}
