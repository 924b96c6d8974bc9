use gpu_dsl::prelude::*;

#[device]
fn factorial(n: u32) -> u32 {
    if n == 0 {
        return 1;
    }
    n * factorial(n - 1)
}

#[kernel]
fn k(out: &mut [u32]) {
    out[0] = factorial(5);
}

fn main() {}
