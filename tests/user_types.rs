//! User-defined data in kernels: shared memory of arrays, `#[device]` structs with methods and
//! operators, and fieldless enums, each run on the test device and compared with the CPU.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

/// The classic transpose through a padded 2D tile: `tile[r][c]` with one column of padding
/// against shared-memory bank conflicts.
#[kernel]
fn transpose_tiled(rows: usize, cols: usize, x: &[f32], y: &mut [f32]) {
    let tile = shared_array::<[f32; 33], 32>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let c = block_idx().x as usize * 32 + tx;
    let r = block_idx().y as usize * 32 + ty;
    if r < rows && c < cols {
        tile[ty][tx] = x[r * cols + c];
    }
    sync_threads();
    let oc = block_idx().y as usize * 32 + tx;
    let or = block_idx().x as usize * 32 + ty;
    if or < cols && oc < rows {
        y[or * rows + oc] = tile[tx][ty];
    }
}

#[test]
fn transpose_through_a_2d_shared_tile() {
    assert_compiles_with_nvrtc(&[(&transpose_tiled::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (rows, cols) = (70, 45);
    let host = random_f32(rows * cols, 7);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, rows * cols).unwrap();
    let grid = Grid::xy(cols.div_ceil(32) as u32, rows.div_ceil(32) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 32));
    transpose_tiled::launch(&stream, config, rows, cols, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(got[c * rows + r], host[r * cols + c], "element ({r}, {c})");
        }
    }
}

/// A body of an n-body system: a `#[device]` struct with an array field.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
}

#[device]
impl Body {
    /// Gravity's strength in these tests' units.
    pub const G: f32 = 0.5;

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

/// A complex number with the arithmetic operators.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Complex {
    pub re: f32,
    pub im: f32,
}

#[device]
impl core::ops::Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}

#[device]
impl core::ops::Sub for Complex {
    type Output = Complex;
    fn sub(self, o: Complex) -> Complex {
        Complex {
            re: self.re - o.re,
            im: self.im - o.im,
        }
    }
}

#[device]
impl core::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

#[device]
impl core::ops::Mul<f32> for Complex {
    type Output = Complex;
    fn mul(self, s: f32) -> Complex {
        Complex {
            re: self.re * s,
            im: self.im * s,
        }
    }
}

#[device]
impl core::ops::Neg for Complex {
    type Output = Complex;
    fn neg(self) -> Complex {
        Complex {
            re: -self.re,
            im: -self.im,
        }
    }
}

#[device]
impl core::ops::AddAssign for Complex {
    fn add_assign(&mut self, o: Complex) {
        self.re += o.re;
        self.im += o.im;
    }
}

/// Which combination `combine` computes: a kernel takes `op: Op`, not a `u32` code.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u32)]
pub enum Op {
    Sum,
    Product,
    Distance = 7,
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

#[device]
fn swap(a: &mut f32, b: &mut f32) {
    let t = *a;
    *a = *b;
    *b = t;
}

/// The language floor of user types: struct elements, methods, constants, tuples, sub-slices,
/// references and enums, in one kernel.
#[kernel]
fn bodies_demo(bodies: &mut [Body], m: &[f32], n: usize, op: Op, out: &mut [f32]) {
    let i = global_idx().x;
    if i < bodies.len() {
        let mut b = bodies[i];
        b.shift(1.0);
        bodies[i] = b;
        bodies[i].mass = bodies[i].mass * Body::G * 2.0;
        let origin = Body::new([0.0; 3], 1.0);
        let (lo, hi) = min_max(b.dist2(&origin), b.mass);
        let row = &m[i * n..(i + 1) * n];
        let mut first = row[0];
        let mut last = row[n - 1];
        swap(&mut first, &mut last);
        let v = match op {
            Op::Sum => row_sum(row) * hi + lo,
            Op::Product => first * last,
            Op::Distance => b.dist2(&origin),
        };
        out[i] = if b == origin { -1.0 } else { v + first };
    }
}

fn body_at(i: usize) -> Body {
    Body {
        pos: [i as f32 * 0.5, 1.0 - i as f32, 0.25],
        mass: 1.0 + i as f32,
    }
}

#[test]
fn structs_methods_tuples_sub_slices_and_enums() {
    assert_compiles_with_nvrtc(&[(&bodies_demo::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (count, n) = (70, 5);
    let host_bodies: Vec<Body> = (0..count).map(body_at).collect();
    let m_host = random_f32(count * n, 3);
    for op in [Op::Sum, Op::Product, Op::Distance] {
        let mut bodies = DeviceBuffer::from_host(&stream, &host_bodies).unwrap();
        let m = DeviceBuffer::from_host(&stream, &m_host).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, count).unwrap();
        bodies_demo::launch(
            &stream,
            LaunchConfig::for_len(count, 64),
            &mut bodies,
            &m,
            n,
            op,
            &mut out,
        )
        .unwrap();
        let got_bodies = bodies.to_host(&stream).unwrap();
        let got = out.to_host(&stream).unwrap();
        for i in 0..count {
            let mut b = host_bodies[i];
            b.pos[0] += 1.0;
            let stored = Body {
                mass: b.mass * 0.5 * 2.0,
                ..b
            };
            assert_eq!(got_bodies[i], stored, "body {i}");
            let d2 = b.pos.iter().map(|p| p * p).sum::<f32>();
            let (lo, hi) = if d2 < b.mass {
                (d2, b.mass)
            } else {
                (b.mass, d2)
            };
            let row = &m_host[i * n..(i + 1) * n];
            let (first, last) = (row[n - 1], row[0]);
            let v = match op {
                Op::Sum => row.iter().sum::<f32>() * hi + lo,
                Op::Product => first * last,
                Op::Distance => d2,
            };
            let expected = v + first;
            assert!(
                (got[i] - expected).abs() <= 1e-4 * expected.abs().max(1.0),
                "{op:?} element {i}: {} vs {expected}",
                got[i]
            );
        }
    }
}

/// Mandelbrot iterations with the `Complex` operators.
#[kernel]
fn mandelbrot_rows(width: usize, max_iter: u32, counts: &mut [u32]) {
    let i = global_idx().x;
    if i < counts.len() {
        let x = (i % width) as f32 / width as f32 * 3.0 - 2.0;
        let y = (i / width) as f32 / width as f32 * 3.0 - 1.5;
        let c = Complex { re: x, im: y };
        let mut z = Complex { re: 0.0, im: 0.0 };
        let mut k = 0u32;
        while k < max_iter && z.re * z.re + z.im * z.im <= 4.0 {
            z = z * z + c;
            k += 1;
        }
        // (-a) + a is exactly zero, so this keeps `k`; it exercises Neg, Mul<f32>, AddAssign and ==.
        let mut w = -z * 0.5 - c;
        w += z * 0.5 + c;
        counts[i] = if w == (Complex { re: 0.0, im: 0.0 }) {
            k
        } else {
            u32::MAX
        };
    }
}

#[test]
fn complex_operators() {
    assert_compiles_with_nvrtc(&[(&mandelbrot_rows::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (width, max_iter) = (48usize, 64u32);
    let mut counts = DeviceBuffer::zeroed(&stream, width * width).unwrap();
    mandelbrot_rows::launch(
        &stream,
        LaunchConfig::for_len(width * width, 128),
        width,
        max_iter,
        &mut counts,
    )
    .unwrap();
    let got = counts.to_host(&stream).unwrap();
    // The iteration is chaotic at the set's edge: a GPU that contracts `a * b + c` into one FMA
    // (as CUDA compilers do) escapes a few edge pixels at other iterations than the CPU. The
    // CPU backend computes as Rust does and matches everywhere.
    let mut differing = Vec::new();
    for (i, &count) in got.iter().enumerate() {
        let x = (i % width) as f32 / width as f32 * 3.0 - 2.0;
        let y = (i / width) as f32 / width as f32 * 3.0 - 1.5;
        let (mut zr, mut zi, mut k) = (0.0f32, 0.0f32, 0u32);
        while k < max_iter && zr * zr + zi * zi <= 4.0 {
            let re = zr * zr - zi * zi + x;
            zi = zr * zi + zi * zr + y;
            zr = re;
            k += 1;
        }
        assert_ne!(count, u32::MAX, "pixel {i}: the operators disagree");
        if count != k {
            differing.push(i);
        }
    }
    let allowed = if gpu.backend() == gpu_dsl::runtime::Backend::Cpu {
        0
    } else {
        got.len() / 50
    };
    assert!(
        differing.len() <= allowed,
        "{} pixels differ from the CPU (at most {allowed} may): {differing:?}",
        differing.len()
    );
}

/// A struct holding another `#[device]` struct: C++ and Rust agree on its layout too.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Particle {
    pub body: Body,
    pub alive: bool,
    pub vel: [f64; 2],
}

#[kernel]
fn advance(particles: &mut [Particle], dt: f64) {
    let i = global_idx().x;
    if i < particles.len() && particles[i].alive {
        particles[i].vel[1] += dt;
        particles[i].body.pos[1] += particles[i].vel[1] as f32;
        let mut p = particles[i];
        p.body.shift(0.5);
        particles[i].body = p.body;
    }
}

#[test]
fn nested_structs_in_memory() {
    assert_compiles_with_nvrtc(&[(&advance::KERNEL, &[])]);
    assert_eq!(std::mem::size_of::<Particle>(), 40);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<Particle> = (0..50)
        .map(|i| Particle {
            body: body_at(i),
            alive: i % 3 != 0,
            vel: [0.0, i as f64],
        })
        .collect();
    let mut particles = DeviceBuffer::from_host(&stream, &host).unwrap();
    advance::launch(&stream, LaunchConfig::for_len(50, 32), &mut particles, 0.25).unwrap();
    let got = particles.to_host(&stream).unwrap();
    for (i, (got, before)) in got.iter().zip(&host).enumerate() {
        let mut expected = *before;
        if before.alive {
            expected.vel[1] += 0.25;
            expected.body.pos[1] += expected.vel[1] as f32;
            expected.body.pos[0] += 0.5;
        }
        assert_eq!(*got, expected, "particle {i}");
    }
}

/// `#[device]` structs in a local array: built from a value, indexed, written field by field.
#[kernel]
fn heaviest_of_four(bodies: &[Body], out: &mut [Body]) {
    let i = global_idx().x;
    if i < out.len() {
        let mut group = [Body::new([0.0; 3], 0.0); 4];
        for k in 0..4 {
            group[k] = bodies[i * 4 + k];
            group[k].pos[2] += 1.0;
        }
        let mut best = group[0];
        for k in 1..4 {
            if group[k].mass > best.mass {
                best = group[k];
            }
        }
        out[i] = best;
    }
}

#[test]
fn structs_in_local_arrays() {
    assert_compiles_with_nvrtc(&[(&heaviest_of_four::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<Body> = (0..40)
        .map(|i| Body {
            pos: [i as f32, 0.0, 0.5],
            mass: ((i * 7) % 11) as f32,
        })
        .collect();
    let bodies = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 10).unwrap();
    heaviest_of_four::launch(&stream, LaunchConfig::for_len(10, 32), &bodies, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, got) in got.iter().enumerate() {
        let mut best = host[i * 4];
        for b in &host[i * 4 + 1..i * 4 + 4] {
            if b.mass > best.mass {
                best = *b;
            }
        }
        best.pos[2] += 1.0;
        assert_eq!(*got, best, "group {i}");
    }
}

/// A struct laid out as CUDA's `float4`: `#[repr(C, align(16))]` is C++'s `alignas(16)`, so
/// the GPU moves it in one 16-byte access.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct Float4 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub w: f32,
}

/// An aligned struct inside another, whose size rounds up to its own alignment (32, not 20).
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct Charged {
    pub pos: Float4,
    pub charge: f32,
}

#[kernel]
fn charged_shift(points: &[Charged], shift: Float4, out: &mut [Charged]) {
    let i = global_idx().x;
    if i < out.len() {
        let mut p = points[i];
        p.pos.x += shift.x * p.charge;
        p.pos.w = p.pos.y + shift.w;
        let local = [p; 2];
        out[i] = local[1];
    }
}

#[test]
fn aligned_structs_keep_their_alignment() {
    assert_compiles_with_nvrtc(&[(&charged_shift::KERNEL, &[])]);
    assert!(charged_shift::SOURCE.contains("struct alignas(16) Float4 {"));
    assert_eq!(
        (
            std::mem::size_of::<Charged>(),
            std::mem::align_of::<Charged>()
        ),
        (32, 16)
    );
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<Charged> = (0..37)
        .map(|i| Charged {
            pos: Float4 {
                x: i as f32,
                y: 2.0 * i as f32,
                z: 0.5,
                w: 0.0,
            },
            charge: (i % 3) as f32 - 1.0,
        })
        .collect();
    let shift = Float4 {
        x: 0.25,
        y: 0.0,
        z: 0.0,
        w: -1.0,
    };
    let points = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<Charged>::zeroed(&stream, host.len()).unwrap();
    charged_shift::launch(
        &stream,
        LaunchConfig::for_len(host.len(), 32),
        &points,
        shift,
        &mut out,
    )
    .unwrap();
    for (i, (got, p)) in out.to_host(&stream).unwrap().iter().zip(&host).enumerate() {
        let mut expected = *p;
        expected.pos.x += 0.25 * p.charge;
        expected.pos.w = p.pos.y - 1.0;
        assert_eq!(*got, expected, "point {i}");
    }
}
