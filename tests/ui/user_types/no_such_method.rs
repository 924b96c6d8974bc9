use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Body {
    pub mass: f32,
}

#[kernel]
fn k(bodies: &mut [Body]) {
    let b = bodies[0];
    bodies[0].mass = b.weight();
}

fn main() {}
