use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct V2 {
    x: f32,
    y: f32,
}

#[device]
impl V2 {
    pub const ZERO: V2 = V2 { x: 0.0, y: 0.0 };
}

#[kernel]
fn k(out: &mut [f32]) {
    let z = V2::ZERO;
    out[0] = z.x;
}

fn main() {}
