use gpu::prelude::*;

#[kernel]
struct Config {
    n: u32,
}

fn main() {}
