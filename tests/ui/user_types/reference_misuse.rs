use gpu_dsl::prelude::*;

#[device]
fn bump(v: &mut f32) {
    *v += 1.0;
}

#[kernel]
fn k(x: &mut [f32]) {
    let v = 1.0f32;
    bump(&mut v);
    let mut w = 2.0f32;
    bump(&w);
    x[0] = v + w;
}

fn main() {}
