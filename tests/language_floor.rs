//! The whole kernel language at once: a `#[device]` struct with methods, operators on a complex
//! type, a generic device function taking a closure, tuples, sub-slices, assertions and
//! printing, in the one program every backend must run alike.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
}

#[device]
impl Body {
    pub fn new(pos: [f32; 3], mass: f32) -> Body {
        Body { pos, mass }
    }
    pub fn dist2(&self, other: &Body) -> f32 {
        let d = [
            other.pos[0] - self.pos[0],
            other.pos[1] - self.pos[1],
            other.pos[2] - self.pos[2],
        ];
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    }
    pub fn shift(&mut self, dx: f32) {
        self.pos[0] += dx;
    }
}

#[device]
fn warp_reduce<T: Number, F: Fn(T, T) -> T>(value: T, op: F) -> T {
    let mut v = value;
    let mut offset = 16u32;
    while offset > 0 {
        v = op(v, shfl_down_sync(0xffff_ffff, v, offset));
        offset /= 2;
    }
    v
}

#[device]
fn min_max(a: f32, b: f32) -> (f32, f32) {
    if a < b {
        (a, b)
    } else {
        (b, a)
    }
}

#[device]
fn row_sum(row: &[f32]) -> f32 {
    let mut s = 0.0;
    for j in 0..row.len() {
        s += row[j];
    }
    s
}

#[kernel]
fn demo(bodies: &mut [Body], m: &[f32], n: usize, out: &mut [f32], totals: &mut [f32]) {
    let i = global_idx().x;
    let mut v = 0.0f32;
    if i < bodies.len() {
        let mut b = bodies[i];
        b.shift(1.0);
        bodies[i] = b;
        let origin = Body::new([0.0; 3], 1.0);
        let (lo, hi) = min_max(b.dist2(&origin), b.mass);
        let row = &m[i * n..(i + 1) * n];
        assert!(row.len() == n, "row {} has {} elements", i, row.len());
        let scale = |x: f32| x * hi;
        v = scale(row_sum(row)) + lo;
        out[i] = v;
    }
    let total = warp_reduce(v, |a, b| a + b); // every lane of the warp takes part
    if lane_id() == 0 && i / 32 < totals.len() {
        totals[i / 32] = total;
        if i == 0 {
            println!("warp 0 total {:.3}", total);
        }
    }
}

fn body_at(i: usize) -> Body {
    Body {
        pos: [i as f32 * 0.25, 0.5 - i as f32 * 0.125, 1.0],
        mass: 0.5 + i as f32,
    }
}

#[test]
fn the_language_floor_runs_as_rust_computes_it() {
    assert_compiles_with_nvrtc(&[(&demo::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (count, n) = (96, 6);
    let host_bodies: Vec<Body> = (0..count).map(body_at).collect();
    let m_host = random_f32(count * n, 11);
    let mut bodies = DeviceBuffer::from_host(&stream, &host_bodies).unwrap();
    let m = DeviceBuffer::from_host(&stream, &m_host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, count).unwrap();
    let mut totals = DeviceBuffer::zeroed(&stream, count / 32).unwrap();
    let config = LaunchConfig::for_len(count, 64);
    demo::launch(&stream, config, &mut bodies, &m, n, &mut out, &mut totals).unwrap();
    let got_bodies = bodies.to_host(&stream).unwrap();
    let got = out.to_host(&stream).unwrap();
    let got_totals = totals.to_host(&stream).unwrap();
    let mut expected = vec![0.0f32; count];
    for i in 0..count {
        let mut b = host_bodies[i];
        b.pos[0] += 1.0;
        assert_eq!(got_bodies[i], b, "body {i}");
        let d2: f32 = b.pos.iter().map(|p| p * p).sum();
        let (lo, hi) = if d2 < b.mass {
            (d2, b.mass)
        } else {
            (b.mass, d2)
        };
        let row: f32 = m_host[i * n..(i + 1) * n].iter().sum();
        expected[i] = row * hi + lo;
        let tolerance = 1e-4 * expected[i].abs().max(1.0);
        assert!(
            (got[i] - expected[i]).abs() <= tolerance,
            "out[{i}]: {} vs {}",
            got[i],
            expected[i]
        );
    }
    for (w, total) in got_totals.iter().enumerate() {
        let sum: f32 = expected[w * 32..(w + 1) * 32].iter().sum();
        assert!(
            (total - sum).abs() <= 1e-3 * sum.abs().max(1.0),
            "warp {w}: {total} vs {sum}"
        );
    }
}
