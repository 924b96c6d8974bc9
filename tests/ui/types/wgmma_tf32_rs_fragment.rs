use gpu_dsl::prelude::*;

#[kernel]
fn k(out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let d = wgmma_desc(smem, 0, 8192, 1024);
    let mut acc = [0.0f32; 4];
    // A's fragment is four f32 per thread, whatever N is.
    let frag = [0.0f32; 8];
    wgmma_fence();
    wgmma_m64n8k8_tf32_rs(&mut acc, frag, smem, d, true);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0];
}

fn main() {}
