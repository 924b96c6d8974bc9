//! The classic CUDA programs of `examples/bench/port_kernels7.rs` (timed in `ports7.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels7.rs"]
mod ports7;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports7::{Sphere, BINOMIAL_STEPS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports7::ray_trace::KERNEL, &[]),
        (&ports7::resize_bilinear::KERNEL, &[]),
        (&ports7::binomial_options::KERNEL, &[]),
    ]);
}

/// Plain Rust's ray caster: the nearest sphere's colour, shaded, per pixel.
fn trace_on_host(width: usize, height: usize, spheres: &[Sphere]) -> Vec<u8> {
    let mut image = vec![0u8; width * height * 4];
    for y in 0..height {
        for x in 0..width {
            let ox = x as f32 - (width / 2) as f32;
            let oy = y as f32 - (height / 2) as f32;
            let mut best = (f32::NEG_INFINITY, [0.0f32; 3]);
            for s in spheres {
                let (dx, dy) = (ox - s.x, oy - s.y);
                let r2 = s.radius * s.radius;
                if dx * dx + dy * dy < r2 {
                    let dz = (r2 - dx * dx - dy * dy).sqrt();
                    let shade = dz / s.radius;
                    if dz + s.z > best.0 {
                        best = (dz + s.z, [s.r * shade, s.g * shade, s.b * shade]);
                    }
                }
            }
            let at = (y * width + x) * 4;
            for c in 0..3 {
                image[at + c] = (best.1[c] * 255.0) as u8;
            }
            image[at + 3] = 255;
        }
    }
    image
}

#[test]
fn ray_trace_colours_each_pixel_by_its_nearest_sphere() {
    let (width, height) = (70, 45);
    let v = random_f32(7 * 12, 3);
    let spheres: Vec<Sphere> = v
        .chunks(7)
        .map(|r| Sphere {
            r: (r[0] + 1.0) * 0.5,
            g: (r[1] + 1.0) * 0.5,
            b: (r[2] + 1.0) * 0.5,
            radius: 4.0 + 8.0 * (r[3] + 1.0),
            x: r[4] * 35.0,
            y: r[5] * 22.0,
            z: r[6] * 30.0,
        })
        .collect();
    let expected = trace_on_host(width, height, &spheres);
    assert!(
        expected.chunks(4).any(|p| p[..3] != [0, 0, 0]),
        "some sphere is in view"
    );
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dspheres = DeviceBuffer::from_host(&stream, &spheres).unwrap();
        let mut image = DeviceBuffer::<u8>::zeroed(&stream, expected.len()).unwrap();
        let config = LaunchConfig::new(Grid::xy(5, 3), Block::xy(16, 16));
        ports7::ray_trace::launch(&stream, config, width, height, &dspheres, &mut image).unwrap();
        let image = image.to_host(&stream).unwrap();
        // sqrt may round differently on the GPU: a byte may move by one.
        for (i, (a, b)) in image.iter().zip(&expected).enumerate() {
            assert!(
                a.abs_diff(*b) <= 1,
                "{}: byte {i}: {a} against {b}",
                gpu.name()
            );
        }
    }
}

#[test]
fn bilinear_resize_interpolates_between_the_four_nearest_pixels() {
    for (sw, sh, dw, dh) in [(13, 9, 31, 20), (40, 33, 17, 8), (1, 1, 5, 3)] {
        let src = random_f32(sw * sh, 7);
        let mut expected = vec![0.0f32; dw * dh];
        for y in 0..dh {
            for x in 0..dw {
                let sx = ((x as f32 + 0.5) * (sw as f32 / dw as f32) - 0.5).max(0.0);
                let sy = ((y as f32 + 0.5) * (sh as f32 / dh as f32) - 0.5).max(0.0);
                let (x0, y0) = ((sx as usize).min(sw - 1), (sy as usize).min(sh - 1));
                let (x1, y1) = ((x0 + 1).min(sw - 1), (y0 + 1).min(sh - 1));
                let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
                let at = |r: usize, c: usize| src[r * sw + c];
                let top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
                let bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
                expected[y * dw + x] = top + (bottom - top) * fy;
            }
        }
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dsrc = DeviceBuffer::from_host(&stream, &src).unwrap();
            let mut dst = DeviceBuffer::<f32>::zeroed(&stream, dw * dh).unwrap();
            let grid = Grid::xy(dw.div_ceil(32) as u32, dh.div_ceil(8) as u32);
            let config = LaunchConfig::new(grid, Block::xy(32, 8));
            ports7::resize_bilinear::launch(&stream, config, sw, sh, dw, dh, &dsrc, &mut dst)
                .unwrap();
            close(&dst.to_host(&stream).unwrap(), &expected, 1e-5);
        }
    }
}

#[test]
fn binomial_prices_approach_black_scholes() {
    let spot = [30.0f32, 25.0, 42.0];
    let strike = [32.0f32, 20.0, 40.0];
    let years = [1.0f32, 0.5, 2.0];
    let (rate, volatility) = (0.05f32, 0.3f32);
    // Black-Scholes' call, in f64, which the tree converges to as its steps grow.
    let expected: Vec<f32> = (0..spot.len())
        .map(|i| {
            let (s, k, t) = (spot[i] as f64, strike[i] as f64, years[i] as f64);
            let (r, v) = (rate as f64, volatility as f64);
            let d1 = ((s / k).ln() + (r + v * v / 2.0) * t) / (v * t.sqrt());
            let d2 = d1 - v * t.sqrt();
            (s * normal_cdf(d1) - k * (-r * t).exp() * normal_cdf(d2)) as f32
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let upload = |v: &[f32]| DeviceBuffer::from_host(&stream, v).unwrap();
        let (ds, dk, dt) = (upload(&spot), upload(&strike), upload(&years));
        let mut price = DeviceBuffer::<f32>::zeroed(&stream, spot.len()).unwrap();
        let config = LaunchConfig::new(Grid::x(3), Block::x(BINOMIAL_STEPS as u32));
        ports7::binomial_options::launch(
            &stream, config, &ds, &dk, &dt, rate, volatility, &mut price,
        )
        .unwrap();
        // A tree of 1024 steps is within about a cent of the closed form.
        close(&price.to_host(&stream).unwrap(), &expected, 2e-3);
    }
}

/// The standard normal distribution function, by Abramowitz and Stegun's 7.1.26 (error below
/// 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.3275911 * x.abs() / std::f64::consts::SQRT_2);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-(x * x) / 2.0).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}
