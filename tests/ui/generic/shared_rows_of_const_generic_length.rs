use gpu_dsl::prelude::*;

#[kernel]
fn tiles<const BLOCK: usize>(out: &mut [f32]) {
    let tile = shared_array::<[f32; BLOCK], BLOCK>();
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    tile[ty][tx] = 1.0;
    sync_threads();
    out[ty * BLOCK + tx] = tile[tx][ty];
}

fn main() {}
