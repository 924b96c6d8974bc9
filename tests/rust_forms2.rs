//! More forms Rust users write that kernels accept: a `const` array inside the kernel, struct
//! update syntax (`P { a, ..base }`), ranges walked down by steps (`(a..b).rev().step_by(s)`),
//! and `f32::from` of the 16-bit floats;
//! each against the same Rust on the host, on the CPU backend and the GPU where there is one.

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;

/// A 3×3 Sobel gradient magnitude with the filter taps as `const` arrays of the kernel.
#[kernel]
fn sobel_taps(width: usize, image: &[i32], out: &mut [i32]) {
    const GX: [[i32; 3]; 3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
    const WEIGHTS: [i32; 3] = [1, 2, 1];
    let i = global_idx().x;
    let (r, c) = (i / width, i % width);
    if i < out.len() && r >= 1 && c >= 1 && r + 1 < image.len() / width && c + 1 < width {
        let (mut gx, mut gy) = (0, 0);
        for dr in 0..3 {
            for dc in 0..3 {
                let v = image[(r + dr - 1) * width + c + dc - 1];
                gx += GX[dr][dc] * v;
                gy += (dr as i32 - 1) * WEIGHTS[dc] * v;
            }
        }
        out[i] = gx.abs() + gy.abs() + WEIGHTS.len() as i32;
    }
}

fn sobel_host(width: usize, image: &[i32]) -> Vec<i32> {
    const GX: [[i32; 3]; 3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
    const WEIGHTS: [i32; 3] = [1, 2, 1];
    let height = image.len() / width;
    (0..image.len())
        .map(|i| {
            let (r, c) = (i / width, i % width);
            if r < 1 || c < 1 || r + 1 >= height || c + 1 >= width {
                return 0;
            }
            let (mut gx, mut gy) = (0, 0);
            for dr in 0..3 {
                for dc in 0..3 {
                    let v = image[(r + dr - 1) * width + c + dc - 1];
                    gx += GX[dr][dc] * v;
                    gy += (dr as i32 - 1) * WEIGHTS[dc] * v;
                }
            }
            gx.abs() + gy.abs() + 3
        })
        .collect()
}

#[test]
fn const_arrays_inside_a_kernel() {
    assert_compiles_with_nvrtc(&[(&sobel_taps::KERNEL, &[])]);
    let (width, height) = (37, 23);
    let image: Vec<i32> = (0..width * height)
        .map(|k| ((k * 7919 + k / 3) % 251) as i32 - 100)
        .collect();
    let expected = sobel_host(width, &image);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dimage = DeviceBuffer::from_host(&stream, &image).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, image.len()).unwrap();
        let config = LaunchConfig::for_len(image.len(), 128);
        sobel_taps::launch(&stream, config, width, &dimage, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// A particle of a simple integrator.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub v: f32,
    pub id: u32,
    pub hits: u32,
}

/// One step: the position moves, and a particle past the wall bounces, each new value built
/// with struct update syntax from the old one.
#[kernel]
fn bounce(particles: &mut [Particle], dt: f32, wall: f32) {
    let i = global_idx().x;
    if i < particles.len() {
        let p = Particle {
            x: particles[i].x + particles[i].v * dt,
            ..particles[i]
        };
        particles[i] = if p.x > wall {
            Particle {
                x: 2.0 * wall - p.x,
                v: -p.v,
                hits: p.hits + 1,
                ..p
            }
        } else {
            p
        };
    }
}

#[test]
fn struct_update_syntax() {
    assert_compiles_with_nvrtc(&[(&bounce::KERNEL, &[])]);
    let start: Vec<Particle> = (0..200u32)
        .map(|id| Particle {
            x: (id % 17) as f32 * 0.5,
            v: (id % 5) as f32 - 1.5,
            id,
            hits: id % 3,
        })
        .collect();
    let (dt, wall) = (0.75, 6.0);
    let expected: Vec<Particle> = start
        .iter()
        .map(|old| {
            let p = Particle {
                x: old.x + old.v * dt,
                ..*old
            };
            if p.x > wall {
                Particle {
                    x: 2.0 * wall - p.x,
                    v: -p.v,
                    hits: p.hits + 1,
                    ..p
                }
            } else {
                p
            }
        })
        .collect();
    assert!(expected.iter().zip(&start).any(|(e, s)| e.hits > s.hits));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut particles = DeviceBuffer::from_host(&stream, &start).unwrap();
        let config = LaunchConfig::for_len(start.len(), 64);
        bounce::launch(&stream, config, &mut particles, dt, wall).unwrap();
        assert_eq!(
            particles.to_host(&stream).unwrap(),
            expected,
            "{}",
            gpu.name()
        );
    }
}

/// Sums of a row walked down by steps, half-open and inclusive, with a labelled `continue`.
#[kernel]
fn down_steps(x: &[u32], width: u32, step: usize, out: &mut [u32]) {
    let row = global_idx().x;
    if row < out.len() {
        let base = row * width as usize;
        let mut sum = 0u32;
        for c in (0..width).rev().step_by(step) {
            sum += x[base + c as usize];
        }
        'cols: for c in (1..=width - 1).rev().step_by(step + 1) {
            if c % 5 == 0 {
                continue 'cols;
            }
            sum += 1000 * x[base + c as usize];
        }
        out[row] = sum;
    }
}

#[test]
fn ranges_walked_down_by_steps() {
    assert_compiles_with_nvrtc(&[(&down_steps::KERNEL, &[])]);
    let (rows, width) = (40usize, 23u32);
    let x: Vec<u32> = (0..rows as u32 * width).map(|k| k % 7).collect();
    for step in [1usize, 2, 3, 30] {
        let expected: Vec<u32> = (0..rows)
            .map(|row| {
                let base = row * width as usize;
                let mut sum = 0u32;
                for c in (0..width).rev().step_by(step) {
                    sum += x[base + c as usize];
                }
                for c in (1..=width - 1).rev().step_by(step + 1) {
                    if c % 5 != 0 {
                        sum += 1000 * x[base + c as usize];
                    }
                }
                sum
            })
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::<u32>::zeroed(&stream, rows).unwrap();
            let config = LaunchConfig::for_len(rows, 32);
            down_steps::launch(&stream, config, &dx, width, step, &mut out).unwrap();
            assert_eq!(
                out.to_host(&stream).unwrap(),
                expected,
                "step {step} {}",
                gpu.name()
            );
        }
    }
}

/// `f32::from` and `f64::from` of the 16-bit floats, exact as the `half` crate's `From`.
#[kernel]
fn widen_halves(h: &[f16], b: &[bf16], out: &mut [f32], wide: &mut [f64]) {
    let i = global_idx().x;
    if i < out.len() {
        out[i] = f32::from(h[i]) - f32::from(b[i]);
        wide[i] = f64::from(h[i]) * f64::from(b[i]);
    }
}

#[test]
fn sixteen_bit_floats_widen_by_from() {
    assert_compiles_with_nvrtc(&[(&widen_halves::KERNEL, &[])]);
    let n = 300;
    let h: Vec<f16> = (0..n)
        .map(|k| f16::from_f32(k as f32 * 0.37 - 40.0))
        .collect();
    let b: Vec<bf16> = (0..n)
        .map(|k| bf16::from_f32(k as f32 * -1.3 + 7.0))
        .collect();
    let out: Vec<f32> = h
        .iter()
        .zip(&b)
        .map(|(&x, &y)| f32::from(x) - f32::from(y))
        .collect();
    let wide: Vec<f64> = h
        .iter()
        .zip(&b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dh = DeviceBuffer::from_host(&stream, &h).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut dout = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut dwide = DeviceBuffer::<f64>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        widen_halves::launch(&stream, config, &dh, &db, &mut dout, &mut dwide).unwrap();
        assert_eq!(dout.to_host(&stream).unwrap(), out, "{}", gpu.name());
        assert_eq!(dwide.to_host(&stream).unwrap(), wide, "{}", gpu.name());
    }
}

/// Extremes of the elements a filter keeps, unwrapped and kept as an option.
#[kernel]
fn filtered_extremes(x: &[u32], width: usize, out: &mut [u32]) {
    let row = global_idx().x;
    if row < out.len() / 3 {
        let part = &x[row * width..row * width + width];
        out[3 * row] = part
            .iter()
            .filter(|&&v| v % 2 == 1)
            .max()
            .copied()
            .unwrap_or(0);
        out[3 * row + 1] = part.iter().copied().filter(|v| *v > 3).min().unwrap_or(99);
        out[3 * row + 2] = match part.iter().filter(|v| **v < 5).max() {
            Some(&m) => m,
            None => 77,
        };
    }
}

#[test]
fn filtered_extremes_as_in_rust() {
    assert_compiles_with_nvrtc(&[(&filtered_extremes::KERNEL, &[])]);
    let (rows, width) = (64usize, 3usize);
    let x: Vec<u32> = (0..(rows * width) as u32)
        .map(|k| (k * k * 7 + 3 * k + k / 5) % 10)
        .collect();
    let expected: Vec<u32> = x
        .chunks(width)
        .flat_map(|part| {
            [
                part.iter()
                    .filter(|&&v| v % 2 == 1)
                    .max()
                    .copied()
                    .unwrap_or(0),
                part.iter().copied().filter(|v| *v > 3).min().unwrap_or(99),
                part.iter().filter(|v| **v < 5).max().copied().unwrap_or(77),
            ]
        })
        .collect();
    // Each filter keeps nothing of some rows.
    assert!(expected.chunks(3).any(|e| e[0] == 0));
    assert!(expected.chunks(3).any(|e| e[1] == 99));
    assert!(expected.chunks(3).any(|e| e[2] == 77));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 3 * rows).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        filtered_extremes::launch(&stream, config, &dx, width, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// The first element a test passes (`find`), unwrapped, dereferenced and kept as an option.
#[kernel]
fn first_matches(x: &[f32], width: usize, out: &mut [f32]) {
    let row = global_idx().x;
    if row < out.len() / 3 {
        let part = &x[row * width..row * width + width];
        out[3 * row] = part.iter().copied().find(|&v| v > 0.5).unwrap_or(-1.0);
        out[3 * row + 1] = *part.iter().find(|&&v| v < -0.5).unwrap_or(&2.0);
        out[3 * row + 2] = match part.iter().find(|v| v.abs() < 0.1) {
            Some(&v) => v,
            None => 3.0,
        };
    }
}

#[test]
fn find_as_in_rust() {
    assert_compiles_with_nvrtc(&[(&first_matches::KERNEL, &[])]);
    let (rows, width) = (96usize, 4usize);
    let x = common::random_f32(rows * width, 51);
    let expected: Vec<f32> = x
        .chunks(width)
        .flat_map(|part| {
            [
                part.iter().copied().find(|&v| v > 0.5).unwrap_or(-1.0),
                *part.iter().find(|&&v| v < -0.5).unwrap_or(&2.0),
                part.iter().find(|v| v.abs() < 0.1).copied().unwrap_or(3.0),
            ]
        })
        .collect();
    // Each search finds nothing in some rows and something in others.
    for (k, none) in [(0, -1.0), (1, 2.0), (2, 3.0)] {
        assert!(
            expected.chunks(3).any(|e| e[k] == none),
            "search {k} always finds"
        );
        assert!(
            expected.chunks(3).any(|e| e[k] != none),
            "search {k} never finds"
        );
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 3 * rows).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        first_matches::launch(&stream, config, &dx, width, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// `while let` over an `Option` local (a linked list's walk, each link assigned by an `if`) and
/// over a checked operation.
#[kernel]
fn chain_walks(next: &[i32], out: &mut [u32]) {
    let start = global_idx().x;
    if start < next.len() {
        let mut cur: Option<usize> = Some(start);
        let mut steps = 0u32;
        while let Some(j) = cur {
            steps += 1;
            cur = if next[j] < 0 {
                None
            } else if steps < 64 {
                let to = next[j] as usize;
                Some(to)
            } else {
                None
            };
        }
        let mut left = start as u32;
        let mut thirds = 0u32;
        while let Some(rest) = left.checked_sub(3) {
            left = rest;
            thirds += 1;
        }
        out[start] = steps * 1000 + thirds * 10 + left;
    }
}

#[test]
fn while_let_takes_options_apart() {
    assert_compiles_with_nvrtc(&[(&chain_walks::KERNEL, &[])]);
    let n = 200usize;
    // Each node points a few ahead, or ends the list.
    let next: Vec<i32> = (0..n)
        .map(|i| {
            if i % 7 == 6 || i + 3 >= n {
                -1
            } else {
                (i + 1 + i % 3) as i32
            }
        })
        .collect();
    let expected: Vec<u32> = (0..n)
        .map(|start| {
            let (mut cur, mut steps) = (Some(start), 0u32);
            while let Some(j) = cur {
                steps += 1;
                cur = (next[j] >= 0 && steps < 64).then(|| next[j] as usize);
            }
            steps * 1000 + (start as u32 / 3) * 10 + start as u32 % 3
        })
        .collect();
    assert!(expected.iter().any(|&e| e / 1000 > 2));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dnext = DeviceBuffer::from_host(&stream, &next).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        chain_walks::launch(&stream, LaunchConfig::for_len(n, 64), &dnext, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
