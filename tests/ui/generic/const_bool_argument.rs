use gpu_dsl::prelude::*;

#[device]
fn pick<const LARGER: bool>(a: u32, b: u32) -> u32 {
    if LARGER {
        a.max(b)
    } else {
        a.min(b)
    }
}

#[device]
fn repeat<const N: usize>(a: u32) -> u32 {
    a * N as u32
}

#[kernel]
fn k(x: &mut [u32]) {
    // A number for a `bool`, and a `bool` for a number.
    x[0] = pick::<1>(x[0], x[1]);
    x[1] = repeat::<true>(x[0]);
}

fn main() {}
