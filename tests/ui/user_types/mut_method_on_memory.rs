use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Body {
    pub mass: f32,
}

#[device]
impl Body {
    pub fn grow(&mut self, by: f32) {
        self.mass += by;
    }
}

#[kernel]
fn k(bodies: &mut [Body]) {
    bodies[0].grow(1.0);
}

fn main() {}
