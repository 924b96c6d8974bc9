use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    for i in 0..4 {
        if i == 2 {
            break 'outer;
        }
    }
}

fn main() {}
