//! The seventh set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): ray casting spheres with a `#[device]` struct's method, bilinear
//! resampling through float-to-index casts, and binomial option pricing by backward induction in
//! shared memory.

use gpu_dsl::prelude::*;

/// Time steps of the binomial tree; a block of `BINOMIAL_STEPS` threads prices one option.
pub const BINOMIAL_STEPS: usize = 1024;

/// A sphere of CUDA by Example's ray tracer: its colour, radius and centre.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Sphere {
    pub r: f32,
    pub g: f32,
    pub b: f32,
    pub radius: f32,
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Sphere {
    /// The depth at which the ray through `(ox, oy)` along z meets the sphere and the shading
    /// there (the surface's slope toward the viewer), or minus infinity where it misses.
    pub fn hit(&self, ox: f32, oy: f32) -> (f32, f32) {
        let dx = ox - self.x;
        let dy = oy - self.y;
        let r2 = self.radius * self.radius;
        if dx * dx + dy * dy < r2 {
            let dz = (r2 - dx * dx - dy * dy).sqrt();
            (dz + self.z, dz / self.radius)
        } else {
            (f32::NEG_INFINITY, 0.0)
        }
    }
}

/// CUDA by Example's ray tracer (chapter 6): each pixel takes the colour of the nearest sphere
/// its ray hits, shaded, into RGBA bytes.
#[kernel]
pub fn ray_trace(width: usize, height: usize, spheres: &[Sphere], image: &mut [u8]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let ox = x as f32 - (width / 2) as f32;
        let oy = y as f32 - (height / 2) as f32;
        let (mut r, mut g, mut b) = (0.0f32, 0.0f32, 0.0f32);
        let mut nearest = f32::NEG_INFINITY;
        for s in spheres {
            let (depth, shade) = s.hit(ox, oy);
            if depth > nearest {
                r = s.r * shade;
                g = s.g * shade;
                b = s.b * shade;
                nearest = depth;
            }
        }
        let at = (y * width + x) * 4;
        image[at] = (r * 255.0) as u8;
        image[at + 1] = (g * 255.0) as u8;
        image[at + 2] = (b * 255.0) as u8;
        image[at + 3] = 255;
    }
}

/// Bilinear resampling of a `src_w × src_h` image to `dst_w × dst_h`, pixel centres aligned
/// (OpenCV's `INTER_LINEAR`), edges clamped.
#[kernel]
pub fn resize_bilinear(
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    src: &[f32],
    dst: &mut [f32],
) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < dst_w && y < dst_h {
        let sx = ((x as f32 + 0.5) * (src_w as f32 / dst_w as f32) - 0.5).max(0.0);
        let sy = ((y as f32 + 0.5) * (src_h as f32 / dst_h as f32) - 0.5).max(0.0);
        let x0 = (sx as usize).min(src_w - 1);
        let y0 = (sy as usize).min(src_h - 1);
        let x1 = (x0 + 1).min(src_w - 1);
        let y1 = (y0 + 1).min(src_h - 1);
        let fx = sx - x0 as f32;
        let fy = sy - y0 as f32;
        let top = src[y0 * src_w + x0] * (1.0 - fx) + src[y0 * src_w + x1] * fx;
        let bottom = src[y1 * src_w + x0] * (1.0 - fx) + src[y1 * src_w + x1] * fx;
        dst[y * dst_w + x] = top * (1.0 - fy) + bottom * fy;
    }
}

/// European call prices on a binomial tree (the CUDA samples' `binomialOptions`, without its
/// tiling): a block per option, a thread per node; the leaves' payoffs, then `BINOMIAL_STEPS`
/// steps back to the root, each node the discounted mean of its two children.
#[kernel]
pub fn binomial_options(
    spot: &[f32],
    strike: &[f32],
    years: &[f32],
    rate: f32,
    volatility: f32,
    price: &mut [f32],
) {
    let call = shared_array::<f32, { BINOMIAL_STEPS + 1 }>();
    let opt = block_idx().x as usize;
    let tid = thread_idx().x as usize;
    let dt = years[opt] / BINOMIAL_STEPS as f32;
    let vdt = volatility * dt.sqrt();
    let rdt = rate * dt;
    let growth = rdt.exp();
    let discount = (-rdt).exp();
    let up = vdt.exp();
    let down = (-vdt).exp();
    let pu = (growth - down) / (up - down);
    let pu_df = pu * discount;
    let pd_df = (1.0 - pu) * discount;
    let mut i = tid;
    while i <= BINOMIAL_STEPS {
        let s = spot[opt] * (vdt * (2.0 * i as f32 - BINOMIAL_STEPS as f32)).exp();
        call[i] = (s - strike[opt]).max(0.0);
        i += block_dim().x as usize;
    }
    for step in (0..BINOMIAL_STEPS).rev() {
        sync_threads();
        let value = if tid <= step {
            pu_df * call[tid + 1] + pd_df * call[tid]
        } else {
            0.0
        };
        sync_threads();
        if tid <= step {
            call[tid] = value;
        }
    }
    if tid == 0 {
        price[opt] = call[0];
    }
}
