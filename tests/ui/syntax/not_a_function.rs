use gpu_dsl::prelude::*;

#[kernel]
struct Config {
    n: u32,
}

fn main() {}
