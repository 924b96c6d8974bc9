use gpu_dsl::prelude::*;

#[device]
fn zero<T: Integer>(x: u32) -> T {
    (x - x) as T
}

#[kernel]
fn k(n: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < n.len() {
        let z = zero(n[i]);
        out[i] = n[i];
    }
}

fn main() {}
