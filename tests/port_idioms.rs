//! Idioms of ports from CUDA samples written the way Rust writes them: a `#[device]` vector
//! type with its own `len` method beside slices' `len()`, on every backend at hand, against
//! the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// A 3-vector, as n-body and ray-tracing ports define it.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    /// The Euclidean length.
    pub fn len(&self) -> f32 {
        (self.x * self.x + self.y * self.y + self.z * self.z).sqrt()
    }

    /// This vector scaled to length 1 (or left as it is when it has none).
    pub fn normalized(self) -> Vec3 {
        let l = self.len();
        if l > 0.0 {
            Vec3 {
                x: self.x / l,
                y: self.y / l,
                z: self.z / l,
            }
        } else {
            self
        }
    }
}

/// Each point's length, the length of its normalized copy, and the slice's own length.
#[kernel]
fn lengths(points: &[Vec3], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < points.len() {
        let p = points[i];
        out[i] = p.len() + 10.0 * p.normalized().len() + points[i].len() * out.len() as f32;
    }
}

/// `n` points, the first at the origin (which has no direction).
fn points(n: usize) -> Vec<Vec3> {
    let v = random_f32(3 * n, 5);
    (0..n)
        .map(|i| {
            let k = if i == 0 { 0.0 } else { 1.0 };
            Vec3 {
                x: k * v[3 * i],
                y: k * v[3 * i + 1],
                z: k * v[3 * i + 2],
            }
        })
        .collect()
}

#[test]
fn a_type_with_a_len_method_matches_rust() {
    let n = 200;
    let pts = points(n);
    let expected: Vec<f32> = pts
        .iter()
        .map(|p| p.len() + 10.0 * p.normalized().len() + p.len() * n as f32)
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &pts).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        lengths::launch(&stream, LaunchConfig::for_len(n, 64), &dp, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn port_idioms_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&lengths::KERNEL, &[])]);
}
