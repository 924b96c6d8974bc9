use gpu_dsl::prelude::*;

#[device]
fn cell(x: &[i32], i: usize) -> i32 {
    x[i] * 2
}

#[kernel]
fn in_range(x: &[i32], out: &mut [i32]) {
    let i = thread_idx().x as usize;
    out[i] = (0..10).contains(&cell(x, i)) as i32 + matches!(cell(x, i), 1 | 2) as i32;
}

fn main() {}
