//! The classic CUDA programs of `examples/bench/port_kernels5.rs` (timed in `ports5.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels5.rs"]
mod ports5;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports5::{NO_PATH, RADIUS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports5::box_filter::KERNEL, &[]),
        (&ports5::floyd_step::KERNEL, &[]),
        (&ports5::path_row::KERNEL, &[]),
        (&ports5::compact_positive::KERNEL, &[]),
        (&ports5::gemv_rows::KERNEL, &[]),
        (&ports5::heat_ring::KERNEL, &[]),
        (&ports5::murmur_mix::KERNEL, &[]),
    ]);
}

#[test]
fn box_filter_averages_the_window_inside_the_image() {
    let (width, height) = (45, 19);
    let input = random_f32(width * height, 71);
    let mut expected = vec![0.0f32; input.len()];
    for y in 0..height {
        for x in 0..width {
            let (mut sum, mut count) = (0.0f32, 0u32);
            for ny in y.saturating_sub(2)..(y + 3).min(height) {
                for nx in x.saturating_sub(2)..(x + 3).min(width) {
                    sum += input[ny * width + nx];
                    count += 1;
                }
            }
            expected[y * width + x] = sum / count as f32;
        }
    }
    assert_eq!(RADIUS, 2, "the reference above spells the radius out");
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports5::box_filter::launch(&stream, config, width, height, &x, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

#[test]
fn floyd_warshall_finds_every_shortest_path() {
    let n = 40;
    let mut graph = vec![NO_PATH; n * n];
    for i in 0..n {
        graph[i * n + i] = 0;
        // A ring with chords: the shortest paths mix both.
        graph[i * n + (i + 1) % n] = 3;
        graph[i * n + (i * 7 + 5) % n] = 10;
    }
    let mut expected = graph.clone();
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                let via = expected[i * n + k] + expected[k * n + j];
                if via < expected[i * n + j] {
                    expected[i * n + j] = via;
                }
            }
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut dist = DeviceBuffer::from_host(&stream, &graph).unwrap();
        let grid = Grid::xy(n.div_ceil(16) as u32, n.div_ceil(16) as u32);
        let config = LaunchConfig::new(grid, Block::xy(16, 16));
        for k in 0..n {
            ports5::floyd_step::launch(&stream, config, n, k, &mut dist).unwrap();
        }
        assert_eq!(dist.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn pathfinder_rows_take_the_cheapest_of_three() {
    let (width, rows) = (300, 12);
    let wall: Vec<i32> = (0..width * rows)
        .map(|i| ((i * 7919) % 10) as i32)
        .collect();
    let mut expected: Vec<i32> = wall[..width].to_vec();
    for row in 1..rows {
        let prev = expected.clone();
        for j in 0..width {
            let (left, right) = (j.saturating_sub(1), (j + 1).min(width - 1));
            let best = prev[left].min(prev[j]).min(prev[right]);
            expected[j] = wall[row * width + j] + best;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let walls = DeviceBuffer::from_host(&stream, &wall).unwrap();
        let mut prev = DeviceBuffer::from_host(&stream, &wall[..width]).unwrap();
        let mut next = DeviceBuffer::<i32>::zeroed(&stream, width).unwrap();
        let config = LaunchConfig::for_len(width, 128);
        for row in 1..rows {
            ports5::path_row::launch(&stream, config, width, row, &walls, &prev, &mut next)
                .unwrap();
            std::mem::swap(&mut prev, &mut next);
        }
        assert_eq!(prev.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn compaction_keeps_every_positive_value_once() {
    // Not a multiple of the warp: the last warp is partial.
    let input = random_f32(10_000 + 13, 73);
    let mut expected: Vec<u32> = input
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.to_bits())
        .collect();
    expected.sort_unstable();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        let mut count = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::for_len(input.len(), 256);
        ports5::compact_positive::launch(&stream, config, &x, &mut out, &mut count).unwrap();
        let count = count.to_host(&stream).unwrap()[0] as usize;
        assert_eq!(count, expected.len());
        let mut kept: Vec<u32> = out.to_host(&stream).unwrap()[..count]
            .iter()
            .map(|v| v.to_bits())
            .collect();
        kept.sort_unstable();
        assert_eq!(kept, expected);
    }
}

#[test]
fn row_iterator_gemv_heat_ring_and_murmur_match_rust() {
    let (rows, n) = (37, 29);
    let a = random_f32(rows * n, 89);
    let x = random_f32(n, 91);
    let y_expected: Vec<f32> = (0..rows)
        .map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum())
        .collect();
    let u = random_f32(1000, 93);
    let alpha = 0.2f32;
    let ring = u.len();
    let heat_expected: Vec<f32> = (0..ring)
        .map(|i| {
            let (l, r) = ((i + ring - 1) % ring, (i + 1) % ring);
            u[i] + alpha * (u[l] - 2.0 * u[i] + u[r])
        })
        .collect();
    let keys: Vec<u32> = (0..777u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let seed = 0x9747_b28cu32;
    let murmur = |key: u32| {
        let k = key
            .wrapping_mul(0xcc9e_2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b87_3593);
        let mut h = (seed ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64)
            ^ 4;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    };
    let hashes_expected: Vec<u32> = keys.iter().map(|k| murmur(*k)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        ports5::gemv_rows::launch(&stream, config, n, &da, &dx, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &y_expected, 1e-5);
        let du = DeviceBuffer::from_host(&stream, &u).unwrap();
        let mut next = DeviceBuffer::<f32>::zeroed(&stream, ring).unwrap();
        let config = LaunchConfig::for_len(ring, 128);
        ports5::heat_ring::launch(&stream, config, alpha, &du, &mut next).unwrap();
        close(&next.to_host(&stream).unwrap(), &heat_expected, 1e-6);
        let dk = DeviceBuffer::from_host(&stream, &keys).unwrap();
        let mut h = DeviceBuffer::<u32>::zeroed(&stream, keys.len()).unwrap();
        let config = LaunchConfig::for_len(keys.len(), 128);
        ports5::murmur_mix::launch(&stream, config, seed, &dk, &mut h).unwrap();
        assert_eq!(h.to_host(&stream).unwrap(), hashes_expected);
    }
}
