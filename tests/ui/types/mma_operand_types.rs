use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [f32]) {
    let acc = [0.0f32; 4];
    let a = [0u32; 2];
    let b = [0u32; 2];
    let d = mma_m16n8k16_f16(acc, a, b);
    out[0] = d[0];
}

fn main() {}
