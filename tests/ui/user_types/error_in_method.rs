use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Body {
    pub mass: f32,
}

#[device]
impl Body {
    pub fn heavier(&self, by: u32) -> f32 {
        self.mass + by
    }
}

#[kernel]
fn k(bodies: &mut [Body]) {
    let b = bodies[0];
    bodies[0].mass = b.heavier(2);
}

fn main() {}
