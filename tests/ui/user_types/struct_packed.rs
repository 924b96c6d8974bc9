use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C, packed)]
pub struct Sample {
    pub tag: u8,
    pub value: f32,
}

fn main() {}
