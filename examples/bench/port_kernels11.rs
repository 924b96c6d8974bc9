//! The eleventh set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): Sobol quasirandom points by XORs of direction numbers staged in shared
//! memory (the CUDA samples' `SobolQRNG`, without its Gray-code stepping), an explicit particle
//! step with `[f32; 3]` fields bouncing off a box, and a byte histogram privatized per warp in
//! a 2-D shared array (PMPP's privatized histogram).

use gpu_dsl::prelude::*;

/// Bits of a Sobol index, and direction numbers per dimension.
pub const SOBOL_BITS: usize = 32;
/// Warps of the privatized histogram's block: each keeps its own 256 counters.
pub const HIST_WARPS: usize = 8;

/// Point `i` of dimension `blockIdx.y` of a Sobol sequence: the XOR of the direction numbers
/// of `i`'s set bits, scaled to [0, 1).
#[kernel]
pub fn sobol(points: usize, directions: &[u32], out: &mut [f32]) {
    let v = shared_array::<u32, SOBOL_BITS>();
    let dim = block_idx().y as usize;
    let tid = thread_idx().x as usize;
    if tid < SOBOL_BITS {
        v[tid] = directions[dim * SOBOL_BITS + tid];
    }
    sync_threads();
    let mut i = block_idx().x as usize * block_dim().x as usize + tid;
    while i < points {
        let mut x = 0u32;
        let mut bits = i as u32;
        let mut k = 0;
        while bits != 0 {
            if bits & 1 == 1 {
                x ^= v[k];
            }
            bits >>= 1;
            k += 1;
        }
        out[dim * points + i] = x as f32 * (1.0 / 4_294_967_296.0);
        i += grid_size().x;
    }
}

/// A particle: position, velocity.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Particle {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
}

/// One explicit Euler step of `dt` under gravity with drag; a particle leaving the unit box is
/// put back at the wall with its velocity reflected and damped.
#[kernel]
pub fn particles_step(dt: f32, drag: f32, particles: &mut [Particle]) {
    let i = global_idx().x;
    if i < particles.len() {
        let mut p = particles[i];
        p.vel[1] -= 9.81 * dt;
        for d in 0..3 {
            p.vel[d] *= 1.0 - drag * dt;
            p.pos[d] += p.vel[d] * dt;
            if p.pos[d] < 0.0 {
                p.pos[d] = -p.pos[d];
                p.vel[d] = -0.8 * p.vel[d];
            } else if p.pos[d] > 1.0 {
                p.pos[d] = 2.0 - p.pos[d];
                p.vel[d] = -0.8 * p.vel[d];
            }
        }
        particles[i] = p;
    }
}

/// A histogram of bytes: each warp counts into its own 256 counters of a shared array, the
/// warps' counters are summed, and each block adds its sums to `bins` once per bin. The
/// counters are one flat array; a row of a 2-D shared array, `hist[warp].atomic_add(b, 1)`,
/// is the same atomic.
#[kernel]
pub fn histogram_private(data: &[u8], bins: &mut [u32]) {
    let hist = shared_array::<u32, { 256 * HIST_WARPS }>();
    let tid = thread_idx().x as usize;
    let warp = tid / 32;
    for b in (tid..256 * HIST_WARPS).step_by(block_dim().x as usize) {
        hist[b] = 0;
    }
    sync_threads();
    let mut i = global_idx().x;
    while i < data.len() {
        hist.atomic_add(warp * 256 + data[i] as usize, 1);
        i += grid_size().x;
    }
    sync_threads();
    for b in (tid..256).step_by(block_dim().x as usize) {
        let mut sum = 0u32;
        for w in 0..HIST_WARPS {
            sum += hist[w * 256 + b];
        }
        bins.atomic_add(b, sum);
    }
}
