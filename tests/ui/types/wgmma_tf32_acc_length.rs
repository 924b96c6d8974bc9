use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let d = wgmma_desc(smem, 0, 8192, 1024);
    wgmma_fence();
    // N = 64 takes 32 accumulators per thread.
    let mut acc = [0.0f32; 64];
    wgmma_m64n64k8_tf32(&mut acc, smem, d, d, true);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0];
}

fn main() {}
