use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
pub enum Op {
    Add,
    Mul,
}

fn main() {}
