use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Complex {
    pub re: f32,
    pub im: f32,
}

#[kernel]
fn k(zs: &mut [Complex]) {
    let z = zs[0];
    zs[0] = z * z;
    let same = z == z;
}

fn main() {}
