use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
}

fn main() {}
