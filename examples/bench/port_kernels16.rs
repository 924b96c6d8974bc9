//! The sixteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): the all-pairs N-body step written with a `#[device]` vector type and
//! its operators (shared tiles of `#[device]` structs), a CSR matrix-vector product with a
//! thread per row as an iterator chain, and the bit-reversal permutation of an FFT.

use gpu_dsl::prelude::*;

/// Bodies a block stages in shared memory at a time, one a thread.
pub const TILE_BODIES: usize = 256;

/// A vector of three `f32`s.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    /// `|self|²`.
    pub fn length_squared(self) -> f32 {
        self.x * self.x + self.y * self.y + self.z * self.z
    }
}

#[device]
impl core::ops::Sub for Vec3 {
    type Output = Vec3;
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

#[device]
impl core::ops::Mul<f32> for Vec3 {
    type Output = Vec3;
    fn mul(self, s: f32) -> Vec3 {
        Vec3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

#[device]
impl core::ops::AddAssign for Vec3 {
    fn add_assign(&mut self, o: Vec3) {
        self.x += o.x;
        self.y += o.y;
        self.z += o.z;
    }
}

/// A body: its position and mass.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Body {
    pub pos: Vec3,
    pub mass: f32,
}

/// Bodies from four numbers each: a position, and a mass of at least 0.1 from the fourth.
pub fn bodies(words: &[f32]) -> Vec<Body> {
    words
        .chunks(4)
        .map(|c| Body {
            pos: Vec3 {
                x: c[0],
                y: c[1],
                z: c[2],
            },
            mass: c[3].abs() + 0.1,
        })
        .collect()
}

/// The acceleration of each body from all the others (GPU Gems 3, chapter 31): blocks of
/// `TILE_BODIES` threads stage the bodies a tile at a time in shared memory, and each thread
/// sums the pulls on its own body.
#[kernel]
pub fn nbody_bodies(softening: f32, bodies: &[Body], acc: &mut [Vec3]) {
    let tile = shared_array::<Body, TILE_BODIES>();
    let n = bodies.len();
    let i = global_idx().x;
    let t = thread_idx().x as usize;
    let me = if i < n {
        bodies[i].pos
    } else {
        Vec3::default()
    };
    let mut a = Vec3::default();
    for start in (0..n).step_by(TILE_BODIES) {
        tile[t] = if start + t < n {
            bodies[start + t]
        } else {
            Body::default()
        };
        sync_threads();
        for other in tile.iter() {
            let d = other.pos - me;
            let inv = 1.0 / (d.length_squared() + softening).sqrt();
            a += d * (other.mass * inv * inv * inv);
        }
        sync_threads();
    }
    if i < n {
        acc[i] = a;
    }
}

/// `y = A·x` for `A` in CSR form, a thread per row, the row's dot product as an iterator
/// chain over its values and column indices.
#[kernel]
pub fn spmv_csr_scalar(row_ptr: &[u32], cols: &[u32], vals: &[f32], x: &[f32], y: &mut [f32]) {
    let row = global_idx().x;
    if row < y.len() {
        let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
        y[row] = vals[start..end]
            .iter()
            .zip(&cols[start..end])
            .map(|(v, &c)| v * x[c as usize])
            .sum();
    }
}

/// The bit-reversal permutation of `2^log_n` values (`log_n >= 1`): element `i` moves to the
/// index whose `log_n` bits are `i`'s reversed.
#[kernel]
pub fn bit_reverse(log_n: u32, input: &[f32], output: &mut [f32]) {
    let i = global_idx().x;
    if i < input.len() {
        let j = (i as u32).reverse_bits() >> (32 - log_n);
        output[j as usize] = input[i];
    }
}
