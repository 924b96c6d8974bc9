//! The classic CUDA programs of `examples/bench/port_kernels4.rs` (timed in `ports4.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels4.rs"]
mod ports4;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports4::{HIST_BINS, MASK_WIDTH, SCAN_BLOCK};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports4::stencil7::KERNEL, &[]),
        (&ports4::scan_naive::KERNEL, &[]),
        (&ports4::conv2d::KERNEL, &[]),
        (&ports4::conv2d_i32::KERNEL, &[]),
        (&ports4::kmeans_assign::KERNEL, &[]),
        (&ports4::histogram_f32::KERNEL, &[]),
    ]);
}

#[test]
fn seven_point_stencil_updates_the_interior_only() {
    let (nx, ny, nz) = (37, 11, 6);
    let input = random_f32(nx * ny * nz, 31);
    let (c0, c1) = (0.4f32, 0.1f32);
    let at = |x: usize, y: usize, z: usize| input[(z * ny + y) * nx + x];
    let mut expected = vec![0.0f32; input.len()];
    for z in 1..nz - 1 {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                expected[(z * ny + y) * nx + x] = c0 * at(x, y, z)
                    + c1 * (at(x - 1, y, z)
                        + at(x + 1, y, z)
                        + at(x, y - 1, z)
                        + at(x, y + 1, z)
                        + at(x, y, z - 1)
                        + at(x, y, z + 1));
            }
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        let grid = Grid::xy(nx.div_ceil(32) as u32, ny.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports4::stencil7::launch(&stream, config, nx, ny, nz, c0, c1, &x, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

#[test]
fn naive_scan_gives_each_block_its_exclusive_sums() {
    for block in [SCAN_BLOCK, 64] {
        let n = block * 3;
        let host = random_f32(n, 37);
        let expected: Vec<f32> = host
            .chunks(block)
            .flat_map(|chunk| {
                chunk.iter().scan(0.0f32, |sum, v| {
                    let before = *sum;
                    *sum += v;
                    Some(before)
                })
            })
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let x = DeviceBuffer::from_host(&stream, &host).unwrap();
            let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
            let config = LaunchConfig::new(Grid::x(3), Block::x(block as u32))
                .with_shared_mem((2 * block * 4) as u32);
            ports4::scan_naive::launch(&stream, config, &x, &mut out).unwrap();
            close(&out.to_host(&stream).unwrap(), &expected, 1e-4);
        }
    }
}

#[test]
fn convolution_2d_matches_the_direct_sum_with_zero_outside() {
    let (width, height) = (45, 19);
    let input = random_f32(width * height, 41);
    let mask: [f32; MASK_WIDTH * MASK_WIDTH] = std::array::from_fn(|i| (i as f32 - 12.0) * 0.1);
    let radius = MASK_WIDTH / 2;
    let mut expected = vec![0.0f32; input.len()];
    for row in 0..height {
        for col in 0..width {
            let mut sum = 0.0f32;
            for j in 0..MASK_WIDTH {
                for k in 0..MASK_WIDTH {
                    let (r, c) = ((row + j).checked_sub(radius), (col + k).checked_sub(radius));
                    if let (Some(r), Some(c)) = (r, c) {
                        if r < height && c < width {
                            sum += input[r * width + c] * mask[j * MASK_WIDTH + k];
                        }
                    }
                }
            }
            expected[row * width + col] = sum;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports4::conv2d::launch(&stream, config, &mask, width, height, &x, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, input.len()).unwrap();
        ports4::conv2d_i32::launch(&stream, config, &mask, width, height, &x, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn k_means_assigns_each_point_its_nearest_centre() {
    let (points, nfeatures, nclusters) = (1000, 7, 6);
    let features = random_f32(points * nfeatures, 43);
    let clusters = random_f32(nclusters * nfeatures, 47);
    let expected: Vec<u32> = (0..points)
        .map(|p| {
            let dist = |c: usize| -> f32 {
                (0..nfeatures)
                    .map(|f| features[f * points + p] - clusters[c * nfeatures + f])
                    .fold(0.0, |sum, d| sum + d * d)
            };
            // The first of the nearest, as the kernel's strict `<` keeps it.
            (0..nclusters).fold(0, |best, c| if dist(c) < dist(best) { c } else { best }) as u32
        })
        .collect();
    assert!(
        expected.iter().any(|&c| c != expected[0]),
        "one cluster only"
    );
    for gpu in backends() {
        let stream = gpu.default_stream();
        let f = DeviceBuffer::from_host(&stream, &features).unwrap();
        let c = DeviceBuffer::from_host(&stream, &clusters).unwrap();
        let mut member = DeviceBuffer::<u32>::zeroed(&stream, points).unwrap();
        let config = LaunchConfig::for_len(points, 256);
        ports4::kmeans_assign::launch(&stream, config, nfeatures, &f, &c, &mut member).unwrap();
        assert_eq!(member.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn float_histogram_counts_every_value_once() {
    let n = 10_000;
    let (lo, hi) = (-2.0f32, 3.0f32);
    // Values across the range, some exactly at `hi` and some past it (both in the last bin).
    let mut data: Vec<f32> = random_f32(n, 53).iter().map(|v| 0.5 + 2.5 * v).collect();
    data.extend([hi, hi + 1.0, lo]);
    let scale = HIST_BINS as f32 / (hi - lo);
    let mut expected = vec![0u32; HIST_BINS];
    for v in &data {
        expected[(((v - lo) * scale) as usize).min(HIST_BINS - 1)] += 1;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, HIST_BINS).unwrap();
        let config = LaunchConfig::new(Grid::x(7), Block::x(128));
        ports4::histogram_f32::launch(&stream, config, &x, lo, hi, &mut bins).unwrap();
        let counts = bins.to_host(&stream).unwrap();
        assert_eq!(counts, expected);
        assert_eq!(counts.iter().sum::<u32>() as usize, data.len());
    }
}
