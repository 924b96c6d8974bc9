use gpu_dsl::prelude::*;

pub trait Weight {
    fn weight(&self) -> f32;
}

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Body {
    pub mass: f32,
}

#[device]
impl Weight for Body {
    fn weight(&self) -> f32 {
        self.mass
    }
}

#[kernel]
fn k(bodies: &mut [Body]) {
    bodies[0].mass = 1.0;
}

fn main() {}
