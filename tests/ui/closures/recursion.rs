use gpu_dsl::prelude::*;

#[kernel]
fn k(x: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    let fact = |n: u32| if n == 0 { 1 } else { n * fact(n - 1) };
    out[i] = fact(x[i]);
}

fn main() {}
