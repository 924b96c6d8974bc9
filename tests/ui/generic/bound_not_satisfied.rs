use gpu_dsl::prelude::*;

#[device]
fn soft<T: Float>(x: T) -> T {
    x / (x.abs() + 1.0)
}

#[kernel]
fn k(n: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < n.len() {
        out[i] = soft(n[i]);
    }
}

fn main() {}
