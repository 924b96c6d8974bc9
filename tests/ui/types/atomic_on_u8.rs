use gpu_dsl::prelude::*;

#[kernel]
fn histogram(pixels: &[u8], bins: &mut [u8]) {
    let i = global_idx().x;
    if i < pixels.len() {
        bins.atomic_add(pixels[i] as usize, 1);
    }
}

fn main() {}
