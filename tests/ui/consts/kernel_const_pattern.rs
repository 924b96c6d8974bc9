use gpu_dsl::prelude::*;

const N: u8 = 3;

#[kernel]
fn k(x: &mut [u32]) {
    const M: u32 = 4;
    const BAD: u8 = 1;
    let v = match x[1] {
        M => 1,
        _ => BAD as u32 + N as u32,
    };
    x[0] = v;
}

fn main() {}
