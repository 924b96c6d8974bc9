use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [f32], trans: usize) {
    let smem = dynamic_shared::<u32>();
    let mut acc = [0.0f32; 64];
    let d = wgmma_desc(smem, 0, 8192, 1024);
    wgmma_fence();
    // N = 128 takes 64 accumulators per thread.
    let mut small = [0.0f32; 32];
    wgmma_m64n128k16_bf16(&mut small, smem, d, d, true, 0, 0);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0] + trans as f32;
}

fn main() {}
