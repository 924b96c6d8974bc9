use gpu_dsl::prelude::*;

#[kernel]
fn k(count: i128, scale: &mut f32, out: &mut [f32]) {
    let i = global_idx().x;
    if i < count as usize && i < out.len() {
        out[i] = out[i] * scale + count as f32;
        let n: u128 = 3;
        out[i] += n as f32 + scale;
    }
}

fn main() {}
