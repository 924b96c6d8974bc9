use gpu_dsl::prelude::*;

#[device]
fn is_even(n: u32) -> bool {
    if n == 0 {
        return true;
    }
    is_odd(n - 1)
}

#[device]
fn is_odd(n: u32) -> bool {
    if n == 0 {
        return false;
    }
    is_even(n - 1)
}

#[kernel]
fn k(out: &mut [u32]) {
    out[0] = is_even(10) as u32;
}

fn main() {}
