//! The twelfth set of classic CUDA programs, as a Rust programmer ports them (see
//! `port_kernels.rs`): CUDA by Example's Julia set through a `#[device]` complex type with
//! operator overloading, and PMPP's 7-point 3-D stencil with register tiling along z (each
//! thread walks a column, rotating the planes below, at and above through three variables).

use gpu_dsl::prelude::*;

/// Iterations of the Julia set before a point counts as inside.
pub const JULIA_ITERATIONS: u32 = 200;

/// A complex number, as CUDA by Example's `cuComplex`.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Complex {
    pub r: f32,
    pub i: f32,
}

#[device]
impl Complex {
    /// `|z|²`.
    pub fn magnitude2(self) -> f32 {
        self.r * self.r + self.i * self.i
    }
}

#[device]
impl core::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex {
            r: self.r * o.r - self.i * o.i,
            i: self.i * o.r + self.r * o.i,
        }
    }
}

#[device]
impl core::ops::Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex {
            r: self.r + o.r,
            i: self.i + o.i,
        }
    }
}

/// 255 where pixel `(x, y)` of a `dim × dim` image lies in the Julia set of `c`, else 0
/// (its red channel; the others are left).
#[kernel]
pub fn julia(dim: usize, c: Complex, image: &mut [u8]) {
    let x = block_idx().x as usize;
    let y = block_idx().y as usize * block_dim().x as usize + thread_idx().x as usize;
    if y < dim {
        let scale = 1.5f32;
        let jx = scale * (dim as f32 / 2.0 - x as f32) / (dim as f32 / 2.0);
        let jy = scale * (dim as f32 / 2.0 - y as f32) / (dim as f32 / 2.0);
        let mut a = Complex { r: jx, i: jy };
        let mut inside = 255u8;
        for _ in 0..JULIA_ITERATIONS as u32 {
            a = a * a + c;
            if a.magnitude2() > 1000.0 {
                inside = 0;
                break;
            }
        }
        image[(y * dim + x) * 4] = inside;
    }
}

/// One 7-point stencil step on an `n³` grid (interior points), a thread per (x, y) column
/// walking z with the planes below, at and above in registers.
#[kernel]
pub fn stencil_z(n: usize, c0: f32, c1: f32, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x >= 1 && x < n - 1 && y >= 1 && y < n - 1 {
        let plane = n * n;
        let column = y * n + x;
        let mut below = input[column];
        let mut here = input[plane + column];
        for z in 1..n - 1 {
            let at = z * plane + column;
            let above = input[at + plane];
            output[at] = c0 * here
                + c1 * (input[at - 1]
                    + input[at + 1]
                    + input[at - n]
                    + input[at + n]
                    + below
                    + above);
            below = here;
            here = above;
        }
    }
}
