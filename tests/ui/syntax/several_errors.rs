use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &mut [f32]) {
    let s = "text";
    let r = 0..4;
    let u = unsafe { x[0] };
}

fn main() {}
