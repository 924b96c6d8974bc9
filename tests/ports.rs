//! The classic CUDA programs of `examples/bench/port_kernels.rs`, `port_kernels2.rs` and
//! `port_kernels3.rs` (timed in `ports.rs`, `ports2.rs` and `ports3.rs` against their CUDA C
//! twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels.rs"]
mod ports;
#[path = "../examples/bench/port_kernels2.rs"]
mod ports2;
#[path = "../examples/bench/port_kernels3.rs"]
mod ports3;

use common::{assert_compiles_with_nvrtc, backends as devices, close, random_f32};
use gpu_dsl::prelude::*;
use ports::{BLOCK, TILE, TRANSPOSE_ROWS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports::matmul_tiled::KERNEL, &[]),
        (&ports::matmul_general::KERNEL, &[]),
        (&ports::transpose_tiled::KERNEL, &[]),
        (&ports::histogram256::KERNEL, &[]),
        (&ports::reduce_sum::KERNEL, &[]),
        (&ports::heat_step::KERNEL, &[]),
        (&ports::nbody_accel::KERNEL, &[]),
        (&ports2::spmv_csr_vector::KERNEL, &[]),
        (&ports2::black_scholes::KERNEL, &[]),
        (&ports2::prescan_blocks::KERNEL, &[]),
        (&ports2::bitonic_sort_shared::KERNEL, &[]),
        (&ports2::convolution_rows::KERNEL, &[]),
        (&ports2::softmax_rows::KERNEL, &[]),
        (&ports2::sobel::KERNEL, &[]),
        (&ports2::mandelbrot::KERNEL, &[]),
        (&ports2::gemv_warp::KERNEL, &[]),
        (&ports2::dot::KERNEL, &[]),
        (&ports2::fwt_batch1::KERNEL, &[]),
        (&ports3::matmul_naive::KERNEL, &[]),
        (&ports3::life_step::KERNEL, &[]),
        (&ports3::rgba_to_gray::KERNEL, &[]),
        (&ports3::reduce_tree::KERNEL, &[]),
    ]);
}

#[test]
fn tiled_matmul_matches_the_plain_product() {
    let n = 64;
    let (a, b) = (random_f32(n * n, 1), random_f32(n * n, 2));
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let (da, db) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut c = DeviceBuffer::zeroed(&stream, n * n).unwrap();
        let tiles = (n / TILE) as u32;
        let config = LaunchConfig::new(Grid::xy(tiles, tiles), Block::xy(32, 32));
        ports::matmul_tiled::launch(&stream, config, n, &da, &db, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

#[test]
fn general_matmul_of_ragged_shapes() {
    for (m, n, k) in [(45, 70, 33), (32, 32, 64), (1, 65, 7)] {
        let (a, b) = (random_f32(m * k, 7), random_f32(k * n, 8));
        let mut expected = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                expected[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        for gpu in devices() {
            let stream = gpu.default_stream();
            let (da, db) = (
                DeviceBuffer::from_host(&stream, &a).unwrap(),
                DeviceBuffer::from_host(&stream, &b).unwrap(),
            );
            let mut c = DeviceBuffer::zeroed(&stream, m * n).unwrap();
            let grid = Grid::xy(n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32);
            let config = LaunchConfig::new(grid, Block::xy(32, 32));
            ports::matmul_general::launch(&stream, config, m, n, k, &da, &db, &mut c).unwrap();
            close(&c.to_host(&stream).unwrap(), &expected, 1e-4);
        }
    }
}

#[test]
fn tiled_transpose_of_a_ragged_matrix() {
    let (width, height) = (70, 45);
    let x = random_f32(width * height, 3);
    let mut expected = vec![0.0f32; width * height];
    for r in 0..height {
        for c in 0..width {
            expected[c * height + r] = x[r * width + c];
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(TILE) as u32, height.div_ceil(TILE) as u32);
        let config = LaunchConfig::new(grid, Block::xy(TILE as u32, TRANSPOSE_ROWS as u32));
        ports::transpose_tiled::launch(&stream, config, width, height, &input, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn histogram_counts_every_byte() {
    let n = 50_001;
    let data: Vec<u8> = (0..n).map(|i| ((i * 7919) >> 3) as u8).collect();
    let mut expected = vec![0u32; 256];
    for &d in &data {
        expected[d as usize] += 1;
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let config = LaunchConfig::new(Grid::x(7), Block::x(BLOCK as u32));
        ports::histogram256::launch(&stream, config, &input, &mut bins).unwrap();
        assert_eq!(bins.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn reduction_sums_everything() {
    let x = random_f32(100_003, 4);
    let expected: f64 = x.iter().map(|&v| f64::from(v)).sum();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut total = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(9), Block::x(BLOCK as u32));
        ports::reduce_sum::launch(&stream, config, &input, &mut total).unwrap();
        let got = f64::from(total.to_host(&stream).unwrap()[0]);
        assert!((got - expected).abs() < 1e-2, "{got} against {expected}");
    }
}

#[test]
fn heat_step_updates_the_interior_only() {
    let (width, height, k) = (67, 41, 0.1f32);
    let u = random_f32(width * height, 5);
    let mut expected = vec![0.0f32; width * height];
    for y in 1..height - 1 {
        for x in 1..width - 1 {
            let i = y * width + x;
            let lap = u[i - 1] + u[i + 1] + u[i - width] + u[i + width] - 4.0 * u[i];
            expected[i] = u[i] + k * lap;
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &u).unwrap();
        let mut next = DeviceBuffer::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports::heat_step::launch(&stream, config, width, height, k, &input, &mut next).unwrap();
        close(&next.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn nbody_accelerations_match_the_direct_sum() {
    let n = 300;
    let v = random_f32(4 * n, 6);
    let bodies: Vec<[f32; 4]> = v
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3].abs() + 0.1])
        .collect();
    let expected: Vec<f32> = bodies
        .iter()
        .flat_map(|me| {
            let mut a = [0.0f32; 3];
            for other in &bodies {
                let d = [other[0] - me[0], other[1] - me[1], other[2] - me[2]];
                let inv = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3).sqrt();
                let s = other[3] * inv * inv * inv;
                for k in 0..3 {
                    a[k] += d[k] * s;
                }
            }
            [a[0], a[1], a[2], 0.0]
        })
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let pos = DeviceBuffer::from_host(&stream, &bodies).unwrap();
        let mut acc = DeviceBuffer::<[f32; 4]>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(Grid::x(n.div_ceil(256) as u32), Block::x(256));
        ports::nbody_accel::launch(&stream, config, &pos, &mut acc).unwrap();
        let got: Vec<f32> = acc
            .to_host(&stream)
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        close(&got, &expected, 2e-3);
    }
}

/// A CSR matrix of `rows × cols` with 0 to 70 nonzeros per row (some rows empty, some longer
/// than a warp), as row pointers, column indices and values.
fn csr(rows: usize, cols: usize) -> (Vec<u32>, Vec<u32>, Vec<f32>) {
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    for r in 0..rows {
        let len = (r * 37) % 71;
        col_idx.extend((0..len).map(|j| ((r * 13 + j * 101) % cols) as u32));
        row_ptr.push(col_idx.len() as u32);
    }
    let vals = random_f32(col_idx.len(), 9);
    (row_ptr, col_idx, vals)
}

#[test]
fn spmv_matches_the_row_by_row_product() {
    let (rows, cols) = (77, 300);
    let (row_ptr, col_idx, vals) = csr(rows, cols);
    let x = random_f32(cols, 10);
    let expected: Vec<f32> = (0..rows)
        .map(|r| {
            (row_ptr[r] as usize..row_ptr[r + 1] as usize)
                .map(|j| vals[j] * x[col_idx[j] as usize])
                .sum()
        })
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let d_ptr = DeviceBuffer::from_host(&stream, &row_ptr).unwrap();
        let d_cols = DeviceBuffer::from_host(&stream, &col_idx).unwrap();
        let d_vals = DeviceBuffer::from_host(&stream, &vals).unwrap();
        let d_x = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::new(Grid::x((rows * 32).div_ceil(128) as u32), Block::x(128));
        ports2::spmv_csr_vector::launch(&stream, config, &d_ptr, &d_cols, &d_vals, &d_x, &mut y)
            .unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn black_scholes_prices_match_the_host_formula() {
    let n = 1000;
    let price: Vec<f32> = random_f32(n, 11).iter().map(|v| 20.0 + 10.0 * v).collect();
    let strike: Vec<f32> = random_f32(n, 12).iter().map(|v| 20.0 + 10.0 * v).collect();
    let years: Vec<f32> = random_f32(n, 13).iter().map(|v| 5.5 + 4.5 * v).collect();
    let (r, v) = (0.02f32, 0.30f32);
    // The same formulas in f64 on the host.
    let cnd = |d: f64| {
        let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
        let poly = k
            * (0.319_381_53
                + k * (-0.356_563_782
                    + k * (1.781_477_937 + k * (-1.821_255_978 + k * 1.330_274_429))));
        let c = (-0.5 * d * d).exp() * poly / (2.0 * std::f64::consts::PI).sqrt();
        if d > 0.0 {
            1.0 - c
        } else {
            c
        }
    };
    let mut expected_call = vec![0.0f32; n];
    let mut expected_put = vec![0.0f32; n];
    for i in 0..n {
        let (s, x, t) = (price[i] as f64, strike[i] as f64, years[i] as f64);
        let (r, v) = (r as f64, v as f64);
        let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * t.sqrt());
        let d2 = d1 - v * t.sqrt();
        let exp_rt = (-r * t).exp();
        expected_call[i] = (s * cnd(d1) - x * exp_rt * cnd(d2)) as f32;
        expected_put[i] = (x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))) as f32;
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let d_price = DeviceBuffer::from_host(&stream, &price).unwrap();
        let d_strike = DeviceBuffer::from_host(&stream, &strike).unwrap();
        let d_years = DeviceBuffer::from_host(&stream, &years).unwrap();
        let mut call = DeviceBuffer::zeroed(&stream, n).unwrap();
        let mut put = DeviceBuffer::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(Grid::x(3), Block::x(ports2::OPTIONS_BLOCK as u32));
        ports2::black_scholes::launch(
            &stream, config, &mut call, &mut put, &d_price, &d_strike, &d_years, r, v,
        )
        .unwrap();
        let (call, put) = (
            call.to_host(&stream).unwrap(),
            put.to_host(&stream).unwrap(),
        );
        close(&call, &expected_call, 1e-4);
        close(&put, &expected_put, 1e-4);
    }
}

#[test]
fn blelloch_scan_gives_each_block_its_exclusive_sums() {
    let blocks = 5;
    let n = blocks * ports2::SCAN_CHUNK;
    let x = random_f32(n, 14);
    let mut expected = vec![0.0f32; n];
    let mut expected_sums = vec![0.0f32; blocks];
    for (b, chunk) in x.chunks(ports2::SCAN_CHUNK).enumerate() {
        let mut running = 0.0f32;
        for (i, v) in chunk.iter().enumerate() {
            expected[b * ports2::SCAN_CHUNK + i] = running;
            running += v;
        }
        expected_sums[b] = running;
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        let mut sums = DeviceBuffer::zeroed(&stream, blocks).unwrap();
        let chunk = ports2::SCAN_CHUNK;
        let padded = chunk + (chunk >> ports2::LOG_NUM_BANKS);
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(chunk as u32 / 2))
            .with_shared_mem((padded * 4) as u32);
        ports2::prescan_blocks::launch(&stream, config, &input, &mut out, &mut sums).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-4);
        close(&sums.to_host(&stream).unwrap(), &expected_sums, 1e-4);
    }
}

#[test]
fn bitonic_sort_orders_each_chunk_with_its_values() {
    let chunks = 3;
    let n = chunks * ports2::SORT_CHUNK;
    // Few distinct keys, so equal keys meet; values remember where each key came from.
    let keys: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % 500).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    for ascending in [true, false] {
        let mut expected = Vec::new();
        for chunk in keys.chunks(ports2::SORT_CHUNK) {
            let mut sorted = chunk.to_vec();
            sorted.sort_unstable();
            if !ascending {
                sorted.reverse();
            }
            expected.extend(sorted);
        }
        for gpu in devices() {
            let stream = gpu.default_stream();
            let src_key = DeviceBuffer::from_host(&stream, &keys).unwrap();
            let src_val = DeviceBuffer::from_host(&stream, &vals).unwrap();
            let mut dst_key = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            let mut dst_val = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            let config = LaunchConfig::new(
                Grid::x(chunks as u32),
                Block::x(ports2::SORT_CHUNK as u32 / 2),
            );
            ports2::bitonic_sort_shared::launch(
                &stream,
                config,
                &mut dst_key,
                &mut dst_val,
                &src_key,
                &src_val,
                ascending,
            )
            .unwrap();
            let got_keys = dst_key.to_host(&stream).unwrap();
            assert_eq!(got_keys, expected, "ascending {ascending}");
            // Each value still names its own key, inside its own chunk.
            for (i, &v) in dst_val.to_host(&stream).unwrap().iter().enumerate() {
                assert_eq!(keys[v as usize], got_keys[i]);
                assert_eq!(v as usize / ports2::SORT_CHUNK, i / ports2::SORT_CHUNK);
            }
        }
    }
}

#[test]
fn row_convolution_matches_the_direct_sum() {
    use ports2::{KERNEL_LENGTH, KERNEL_RADIUS, ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y};
    let tile = ports2::ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X;
    let (width, height) = (3 * tile, 2 * ROWS_BLOCKDIM_Y);
    let image = random_f32(width * height, 15);
    let taps: [f32; KERNEL_LENGTH] = std::array::from_fn(|k| 1.0 + k as f32 * 0.25);
    let mut expected = vec![0.0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            // Output x sees input x + k - R through tap R - (k - R), zero outside the row.
            expected[y * width + x] = (0..KERNEL_LENGTH)
                .filter(|&k| x + k >= KERNEL_RADIUS && x + k - KERNEL_RADIUS < width)
                .map(|k| taps[KERNEL_LENGTH - 1 - k] * image[y * width + x + k - KERNEL_RADIUS])
                .sum();
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let src = DeviceBuffer::from_host(&stream, &image).unwrap();
        let mut dst = DeviceBuffer::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy((width / tile) as u32, (height / ROWS_BLOCKDIM_Y) as u32);
        let config = LaunchConfig::new(
            grid,
            Block::xy(ROWS_BLOCKDIM_X as u32, ROWS_BLOCKDIM_Y as u32),
        );
        ports2::convolution_rows::launch(&stream, config, &taps, width, &src, &mut dst).unwrap();
        close(&dst.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn softmax_rows_match_the_host_softmax() {
    let (rows, cols) = (6, 1000);
    let x: Vec<f32> = random_f32(rows * cols, 16)
        .iter()
        .map(|v| 8.0 * v)
        .collect();
    let expected: Vec<f32> = x
        .chunks(cols)
        .flat_map(|row| {
            let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let sum: f32 = row.iter().map(|&v| (v - max).exp()).sum();
            row.iter().map(move |&v| (v - max).exp() / sum)
        })
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, rows * cols).unwrap();
        let config = LaunchConfig::new(Grid::x(rows as u32), Block::x(256));
        ports2::softmax_rows::launch(&stream, config, cols, &input, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn sobel_edges_match_the_host_filter() {
    let (width, height, scale) = (45, 37, 0.75f32);
    let image: Vec<u8> = (0..width * height)
        .map(|i| ((i * 7919) >> 2) as u8)
        .collect();
    let mut expected = vec![0u8; width * height];
    for y in 0..height {
        for x in 0..width {
            let at = |dx: isize, dy: isize| {
                let px = (x as isize + dx).clamp(0, width as isize - 1) as usize;
                let py = (y as isize + dy).clamp(0, height as isize - 1) as usize;
                i32::from(image[py * width + px])
            };
            let horz = at(1, -1) + 2 * at(1, 0) + at(1, 1) - at(-1, -1) - 2 * at(-1, 0) - at(-1, 1);
            let vert = at(-1, -1) + 2 * at(0, -1) + at(1, -1) - at(-1, 1) - 2 * at(0, 1) - at(1, 1);
            let sum = (scale * (horz.abs() + vert.abs()) as f32) as i32;
            expected[y * width + x] = sum.clamp(0, 255) as u8;
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &image).unwrap();
        let mut edges = DeviceBuffer::<u8>::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(16) as u32);
        let config = LaunchConfig::new(grid, Block::xy(16, 16));
        ports2::sobel::launch(&stream, config, width, height, scale, &input, &mut edges).unwrap();
        assert_eq!(edges.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn mandelbrot_counts_match_the_host_loop() {
    let (width, height, max_iter) = (40, 30, 200u32);
    let (x_min, y_min, step) = (-2.0f32, -1.125f32, 0.075f32);
    let mut expected = vec![0u32; width * height];
    for py in 0..height {
        for px in 0..width {
            let (cx, cy) = (x_min + px as f32 * step, y_min + py as f32 * step);
            let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0);
            while i < max_iter && x * x + y * y <= 4.0 {
                let xt = x * x - y * y + cx;
                y = 2.0 * x * y + cy;
                x = xt;
                i += 1;
            }
            expected[py * width + px] = i;
        }
    }
    // Pixels inside the set run to the limit, others escape early: the loop's trip count varies.
    assert!(expected.contains(&max_iter) && expected.contains(&1));
    for gpu in devices() {
        let stream = gpu.default_stream();
        let mut counts = DeviceBuffer::<u32>::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(16) as u32);
        let config = LaunchConfig::new(grid, Block::xy(16, 16));
        ports2::mandelbrot::launch(
            &stream,
            config,
            width,
            height,
            x_min,
            y_min,
            step,
            max_iter,
            &mut counts,
        )
        .unwrap();
        let got = counts.to_host(&stream).unwrap();
        // A GPU contracts to FMAs, which may move a point on the set's edge by an iteration or so.
        let differing = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
        if gpu.backend() == gpu_dsl::runtime::Backend::Cpu {
            assert_eq!(got, expected);
        } else {
            assert!(differing * 100 <= got.len(), "{differing} pixels differ");
        }
    }
}

#[test]
fn gemv_matches_the_row_by_row_product() {
    let (rows, cols) = (37, 333);
    let a = random_f32(rows * cols, 17);
    let x = random_f32(cols, 18);
    let expected: Vec<f32> = a
        .chunks(cols)
        .map(|row| row.iter().zip(&x).map(|(a, x)| a * x).sum())
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let (da, dx) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &x).unwrap(),
        );
        let mut y = DeviceBuffer::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::new(Grid::x((rows * 32).div_ceil(256) as u32), Block::x(256));
        ports2::gemv_warp::launch(&stream, config, cols, &da, &dx, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

#[test]
fn dot_product_of_two_vectors() {
    let n = 70_001;
    let (a, b) = (random_f32(n, 19), random_f32(n, 20));
    let expected: f64 = a.iter().zip(&b).map(|(&x, &y)| f64::from(x * y)).sum();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let (da, db) = (
            DeviceBuffer::from_host(&stream, &a).unwrap(),
            DeviceBuffer::from_host(&stream, &b).unwrap(),
        );
        let mut total = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(11), Block::x(ports2::DOT_BLOCK as u32));
        ports2::dot::launch(&stream, config, &da, &db, &mut total).unwrap();
        let got = f64::from(total.to_host(&stream).unwrap()[0]);
        assert!((got - expected).abs() < 1e-2, "{got} against {expected}");
    }
}

#[test]
fn walsh_transform_matches_the_direct_sum() {
    // Odd and even sizes: the odd one ends in the radix-2 stage.
    for log2n in [5u32, 6] {
        let (n, chunks) = (1usize << log2n, 3);
        let x = random_f32(n * chunks, 21);
        // H[k] = sum over i of x[i] · (-1)^popcount(i & k), in Hadamard order.
        let expected: Vec<f32> = x
            .chunks(n)
            .flat_map(|chunk| {
                (0..n).map(move |k| {
                    (0..n)
                        .map(|i| {
                            if (i & k).count_ones() % 2 == 0 {
                                chunk[i]
                            } else {
                                -chunk[i]
                            }
                        })
                        .sum::<f32>()
                })
            })
            .collect();
        for gpu in devices() {
            let stream = gpu.default_stream();
            let input = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::zeroed(&stream, n * chunks).unwrap();
            let config = LaunchConfig::new(Grid::x(chunks as u32), Block::x(n as u32 / 4))
                .with_shared_mem((n * 4) as u32);
            ports2::fwt_batch1::launch(&stream, config, &mut out, &input, log2n).unwrap();
            close(&out.to_host(&stream).unwrap(), &expected, 1e-4);
        }
    }
}

#[test]
fn naive_matmul_matches_the_plain_product() {
    let n = 37;
    let a_host = random_f32(n * n, 21);
    let b_host = random_f32(n * n, 22);
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[i * n + j] = (0..n).map(|k| a_host[i * n + k] * b_host[k * n + j]).sum();
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, n * n).unwrap();
        let grid = Grid::xy(n.div_ceil(16) as u32, n.div_ceil(16) as u32);
        let config = LaunchConfig::new(grid, Block::xy(16, 16));
        ports3::matmul_naive::launch(&stream, config, n, &a, &b, &mut c).unwrap();
        close(&c.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn game_of_life_step_on_a_torus() {
    let (width, height) = (41, 23);
    let cells: Vec<u8> = (0..width * height)
        .map(|i| u8::from((i * 2_654_435_761usize) >> 13 & 3 == 0))
        .collect();
    let mut expected = vec![0u8; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut alive = 0;
            for dy in [height - 1, 0, 1] {
                for dx in [width - 1, 0, 1] {
                    if (dx, dy) != (0, 0) {
                        alive += cells[(y + dy) % height * width + (x + dx) % width];
                    }
                }
            }
            let me = cells[y * width + x];
            expected[y * width + x] = u8::from(alive == 3 || (alive == 2 && me == 1));
        }
    }
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &cells).unwrap();
        let mut next = DeviceBuffer::<u8>::zeroed(&stream, width * height).unwrap();
        let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let config = LaunchConfig::new(grid, Block::xy(32, 8));
        ports3::life_step::launch(&stream, config, width, height, &input, &mut next).unwrap();
        assert_eq!(next.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn rgba_pixels_to_gray_bytes() {
    let pixels = 1000;
    let rgba: Vec<u8> = (0..pixels * 4).map(|i| ((i * 7919) >> 3) as u8).collect();
    let expected: Vec<u8> = rgba
        .chunks(4)
        .map(|px| (0.299f32 * px[0] as f32 + 0.587 * px[1] as f32 + 0.114 * px[2] as f32) as u8)
        .collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let input = DeviceBuffer::from_host(&stream, &rgba).unwrap();
        let mut gray = DeviceBuffer::<u8>::zeroed(&stream, pixels).unwrap();
        let config = LaunchConfig::try_for_len(pixels, 256).unwrap();
        ports3::rgba_to_gray::launch(&stream, config, &input, &mut gray).unwrap();
        let got = gray.to_host(&stream).unwrap();
        // The GPU may contract the weighted sum into fused multiply-adds: a byte apart at most.
        for (p, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert!(g.abs_diff(*e) <= 1, "pixel {p}: {g} against {e}");
        }
    }
}

#[test]
fn tree_reduction_with_a_halving_stride() {
    let block = ports3::REDUCE_BLOCK;
    let n = block * 2 * 5 + 77;
    let host = random_f32(n, 23);
    let blocks = n.div_ceil(block * 2);
    let expected: Vec<f32> = host.chunks(block * 2).map(|c| c.iter().sum()).collect();
    for gpu in devices() {
        let stream = gpu.default_stream();
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let mut sums = DeviceBuffer::<f32>::zeroed(&stream, blocks).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(block as u32));
        ports3::reduce_tree::launch(&stream, config, &x, &mut sums).unwrap();
        close(&sums.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}
