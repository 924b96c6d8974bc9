use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let mut acc = [0.0f32; 64];
    let d = wgmma_desc(smem, 0, 8192, 1024);
    wgmma_fence();
    // TF32 operands are K-major: PTX has no transpose flags for them.
    wgmma_m64n128k8_tf32(&mut acc, smem, d, d, true, 0, 1);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0];
}

fn main() {}
