//! Signed index arithmetic as Rust users write neighbour offsets: `isize` and `i64` offsets
//! added to `usize` coordinates, compared with 0 and the image's size, then cast back. Each
//! kernel runs on every backend at hand and is compared with plain Rust; the edge cases take
//! values past 32 bits and below zero, where narrowed code would give other results.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// The mean of the pixels within `radius` of each pixel (fewer at the borders), with the
/// offsets as `isize`, as Rust code spells a signed index.
#[kernel]
fn box_blur(radius: isize, width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let mut sum = 0.0f32;
        let mut count = 0u32;
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                let nx = x as isize + dx;
                let ny = y as isize + dy;
                if nx >= 0 && ny >= 0 && nx < width as isize && ny < height as isize {
                    sum += input[ny as usize * width + nx as usize];
                    count += 1;
                }
            }
        }
        output[y * width + x] = sum / count as f32;
    }
}

fn box_blur_cpu(radius: isize, width: usize, height: usize, input: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; input.len()];
    for y in 0..height {
        for x in 0..width {
            let (mut sum, mut count) = (0.0f32, 0u32);
            for dy in -radius..=radius {
                for dx in -radius..=radius {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx >= 0 && ny >= 0 && nx < width as isize && ny < height as isize {
                        sum += input[ny as usize * width + nx as usize];
                        count += 1;
                    }
                }
            }
            out[y * width + x] = sum / count as f32;
        }
    }
    out
}

#[test]
fn box_blur_with_isize_offsets_matches_plain_rust() {
    let (width, height) = (53, 29);
    let input = random_f32(width * height, 61);
    for radius in [0isize, 1, 3] {
        let expected = box_blur_cpu(radius, width, height, &input);
        for gpu in backends() {
            let stream = gpu.default_stream();
            let x = DeviceBuffer::from_host(&stream, &input).unwrap();
            let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
            let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(8) as u32);
            let config = LaunchConfig::new(grid, Block::xy(16, 8));
            box_blur::launch(&stream, config, radius, width, height, &x, &mut out).unwrap();
            close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        }
    }
}

/// `isize` values through every kind of operation, with Rust's wrapping, rounding toward zero
/// and saturating float conversion; `shift` is added to each thread's index, so a large one
/// takes the sums past 32 bits.
#[kernel]
fn isize_ops(shift: isize, values: &[isize], floats: &[f32], out: &mut [isize]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < values.len() {
        let v = values[i];
        let t = i as isize + shift;
        let o = i * 8;
        out[o] = v.wrapping_mul(3) / 7;
        out[o + 1] = v % 5;
        out[o + 2] = v >> 2;
        out[o + 3] = v.wrapping_add(t);
        out[o + 4] = t - 2 * shift;
        out[o + 5] = floats[i] as isize;
        out[o + 6] = v.min(t).max(isize::MIN + 1);
        out[o + 7] = (t as i64 - 1) as isize;
    }
}

#[test]
fn isize_arithmetic_is_rusts() {
    let n = 300;
    let mut values: Vec<isize> = (0..n as isize)
        .map(|i| (i - 150) * 1_000_003 + i % 7)
        .collect();
    values[0] = isize::MIN;
    values[1] = isize::MAX;
    values[2] = -1;
    let floats: Vec<f32> = (0..n).map(|i| (i as f32 - 150.0) * 1.7e16).collect();
    for shift in [0isize, -5, 3_000_000_000, -3_000_000_000] {
        let expected: Vec<isize> = (0..n)
            .flat_map(|i| {
                let v = values[i];
                let t = i as isize + shift;
                [
                    v.wrapping_mul(3) / 7,
                    v % 5,
                    v >> 2,
                    v.wrapping_add(t),
                    t - 2 * shift,
                    floats[i] as isize,
                    v.min(t).max(isize::MIN + 1),
                    (t as i64 - 1) as isize,
                ]
            })
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let v = DeviceBuffer::from_host(&stream, &values).unwrap();
            let f = DeviceBuffer::from_host(&stream, &floats).unwrap();
            let mut out = DeviceBuffer::<isize>::zeroed(&stream, n * 8).unwrap();
            let config = LaunchConfig::for_len(n, 128);
            isize_ops::launch(&stream, config, shift, &v, &f, &mut out).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "shift {shift}");
        }
    }
}

/// A distance that fits in an `int`, and one that does not.
const NEAR: usize = 5;
const FAR: usize = 3_000_000_000;

/// Signed sums, differences and comparisons of thread indices and constants: `int`
/// arithmetic where the values fit (`NEAR`), 64-bit where a constant takes them past (`FAR`),
/// with the same results either way.
#[kernel]
fn signed_offsets(out: &mut [i64]) {
    let x = thread_idx().x as usize;
    let b = block_idx().x as usize;
    let near = x as i64 - NEAR as i64;
    let far = x as i64 - FAR as i64;
    let sum = near + b as i64 - 2;
    let both = far + near;
    let i = (b * block_dim().x as usize + x) * 4;
    out[i] = near;
    out[i + 1] = far;
    out[i + 2] = sum;
    out[i + 3] = if near >= 0 && near < 100 {
        (near as usize * 3) as i64
    } else if far < near {
        both
    } else {
        0
    };
}

#[test]
fn signed_offsets_past_an_int_give_rusts_values() {
    let (blocks, threads) = (3usize, 128usize);
    let mut expected = vec![0i64; blocks * threads * 4];
    for b in 0..blocks {
        for x in 0..threads {
            let near = x as i64 - NEAR as i64;
            let far = x as i64 - FAR as i64;
            let i = (b * threads + x) * 4;
            expected[i] = near;
            expected[i + 1] = far;
            expected[i + 2] = near + b as i64 - 2;
            expected[i + 3] = if (0..100).contains(&near) {
                near * 3
            } else if far < near {
                far + near
            } else {
                0
            };
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut out = DeviceBuffer::<i64>::zeroed(&stream, expected.len()).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32));
        signed_offsets::launch(&stream, config, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ring_neighbours::KERNEL, &[]),
        (&box_blur::KERNEL, &[]),
        (&isize_ops::KERNEL, &[]),
        (&signed_offsets::KERNEL, &[]),
        (&inclusive_loops::KERNEL, &[]),
        (&reversed_loops::KERNEL, &[]),
    ]);
}

/// Inclusive loops whose end is far from, next to, and at the limits of the widths the
/// counter may be narrowed to, and one whose end only the launch knows.
#[kernel]
fn inclusive_loops(n: usize, out: &mut [u64]) {
    if thread_idx().x == 0 {
        let mut sums = [0u64; 5];
        for d in -3..=3i64 {
            sums[0] += (d + 10) as u64;
        }
        for i in (i32::MAX as usize - 2)..=(i32::MAX as usize) {
            sums[1] += i as u64;
        }
        for i in (u32::MAX as usize - 2)..=(u32::MAX as usize) {
            sums[2] += i as u64;
        }
        for i in (u64::MAX - 2)..=u64::MAX {
            sums[3] = sums[3].wrapping_add(i);
        }
        for i in 0..=n {
            sums[4] += i as u64;
        }
        for k in 0..5 {
            out[k] = sums[k];
        }
    }
}

#[test]
fn inclusive_loops_reach_their_end_and_stop() {
    let n = 1000usize;
    let expected = vec![
        (-3..=3i64).map(|d| (d + 10) as u64).sum::<u64>(),
        ((i32::MAX as u64 - 2)..=i32::MAX as u64).sum(),
        ((u32::MAX as u64 - 2)..=u32::MAX as u64).sum(),
        ((u64::MAX - 2)..=u64::MAX).fold(0u64, |a, i| a.wrapping_add(i)),
        (0..=n as u64).sum(),
    ];
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut out = DeviceBuffer::<u64>::zeroed(&stream, 5).unwrap();
        inclusive_loops::launch(&stream, LaunchConfig::for_len(1, 32), n, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

/// Reversed loops: exclusive and inclusive, empty, down to a type's minimum, with `continue`
/// and `break`, narrowed and at launch-time bounds; each appends to a running hash so the
/// order counts.
#[kernel]
fn reversed_loops(n: usize, out: &mut [u64]) {
    if thread_idx().x == 0 {
        let mut h = [0u64; 6];
        for i in (0..n).rev() {
            h[0] = h[0].wrapping_mul(31).wrapping_add(i as u64);
        }
        for d in (-3..=3i64).rev() {
            h[1] = h[1].wrapping_mul(31).wrapping_add((d + 10) as u64);
        }
        for i in (5..5usize).rev() {
            h[2] += i as u64 + 1;
        }
        for i in (0..=2u8).rev() {
            h[3] = h[3].wrapping_mul(31).wrapping_add(i as u64 + 1);
        }
        for i in (i64::MIN..=(i64::MIN + 2)).rev() {
            h[4] = h[4].wrapping_mul(31).wrapping_add(i as u64);
        }
        for i in (0..20u32).rev() {
            if i % 3 == 0 {
                continue;
            }
            if i < 4 {
                break;
            }
            h[5] = h[5].wrapping_mul(31).wrapping_add(i as u64);
        }
        for k in 0..6 {
            out[k] = h[k];
        }
    }
}

#[test]
fn reversed_loops_walk_down_in_order() {
    let n = 1000usize;
    let fold = |values: &mut dyn Iterator<Item = u64>| {
        values.fold(0u64, |h, v| h.wrapping_mul(31).wrapping_add(v))
    };
    let expected = vec![
        fold(&mut (0..n as u64).rev()),
        fold(&mut (-3..=3i64).rev().map(|d| (d + 10) as u64)),
        0,
        fold(&mut (0..=2u64).rev().map(|i| i + 1)),
        fold(&mut (i64::MIN..=i64::MIN + 2).rev().map(|i| i as u64)),
        fold(
            &mut (0..20u64)
                .rev()
                .filter(|i| i % 3 != 0)
                .take_while(|i| *i >= 4),
        ),
    ];
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut out = DeviceBuffer::<u64>::zeroed(&stream, 6).unwrap();
        reversed_loops::launch(&stream, LaunchConfig::for_len(1, 32), n, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

/// Ring neighbours by `rem_euclid`: one and two to the left (the unsigned `(a + n) % n`
/// form where the offset is at most the length's lower bound), of the length and of a
/// constant, at every element including both ends.
#[kernel]
fn ring_neighbours(step: isize, values: &[u32], out: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let n = values.len();
    if i < n {
        let left = (i as isize - 1).rem_euclid(n as isize) as usize;
        let left2 = (i as isize - 2).rem_euclid(n as isize) as usize;
        let far = (i as isize - step).rem_euclid(n as isize) as usize;
        let right = (i + 1) % n;
        let seven = (i as i64 - 1).rem_euclid(7) as usize;
        out[i] = values[left]
            + 3 * values[left2]
            + 5 * values[far]
            + 7 * values[right]
            + 11 * seven as u32;
    }
}

#[test]
fn ring_neighbours_wrap_at_both_ends() {
    for (n, step) in [(1usize, 1isize), (2, 3), (5, 7), (1000, 999), (1000, -3)] {
        let values: Vec<u32> = (0..n as u32).map(|v| v * 13 + 1).collect();
        let expected: Vec<u32> = (0..n)
            .map(|i| {
                let at = |d: isize| values[(i as isize - d).rem_euclid(n as isize) as usize];
                at(1)
                    + 3 * at(2)
                    + 5 * at(step)
                    + 7 * values[(i + 1) % n]
                    + 11 * (i as i64 - 1).rem_euclid(7) as u32
            })
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dv = DeviceBuffer::from_host(&stream, &values).unwrap();
            let mut out = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            ring_neighbours::launch(&stream, LaunchConfig::for_len(n, 128), step, &dv, &mut out)
                .unwrap();
            assert_eq!(
                out.to_host(&stream).unwrap(),
                expected,
                "{} n={n}",
                gpu.name()
            );
        }
    }
}
