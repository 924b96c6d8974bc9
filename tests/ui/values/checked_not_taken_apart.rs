use gpu_dsl::prelude::*;

#[kernel]
fn k(a: u32, b: u32, out: &mut [u32]) {
    out[0] = a.checked_div(b).unwrap_or(0);
    out[1] = a.checked_add(b).map(|v| v * 2).unwrap_or(0);
}

fn main() {}
