use gpu_dsl::prelude::*;

#[device]
fn scaled<const K: usize>(x: u32) -> u32 {
    x * K as u32
}

#[kernel]
fn k(n: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < n.len() {
        out[i] = scaled(n[i]);
    }
}

fn main() {}
