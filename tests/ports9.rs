//! The classic CUDA programs of `examples/bench/port_kernels9.rs` (timed in `ports9.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels9.rs"]
mod ports9;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports9::{BILATERAL_RADIUS, HOT_BLOCK, NW_BLOCK};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports9::nw_diagonal::KERNEL, &[]),
        (&ports9::hotspot_step::KERNEL, &[]),
        (&ports9::bilateral::KERNEL, &[]),
    ]);
}

#[test]
fn needleman_wunsch_fills_the_upper_half_as_the_recurrence_does() {
    let (n, penalty) = (3 * NW_BLOCK, 4);
    let cols = n + 1;
    let mut score = vec![0i32; cols * cols];
    for i in 0..cols {
        score[i * cols] = -(i as i32) * penalty;
        score[i] = -(i as i32) * penalty;
    }
    let reference: Vec<i32> = (0..cols * cols).map(|i| (i * 37 % 19) as i32 - 9).collect();
    let tiles = n / NW_BLOCK;
    let mut expected = score.clone();
    for i in 1..cols {
        for j in 1..cols {
            if (i - 1) / NW_BLOCK + (j - 1) / NW_BLOCK < tiles {
                let at = i * cols + j;
                expected[at] = (expected[at - cols - 1] + reference[at])
                    .max(expected[at - 1] - penalty)
                    .max(expected[at - cols] - penalty);
            }
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dref = DeviceBuffer::from_host(&stream, &reference).unwrap();
        let mut dscore = DeviceBuffer::from_host(&stream, &score).unwrap();
        for diagonal in 1..=tiles {
            let config = LaunchConfig::new(Grid::x(diagonal as u32), Block::x(NW_BLOCK as u32));
            ports9::nw_diagonal::launch(
                &stream,
                config,
                &dref,
                &mut dscore,
                cols,
                penalty,
                diagonal,
            )
            .unwrap();
        }
        assert_eq!(dscore.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn hotspot_step_updates_every_cell_from_its_clamped_neighbours() {
    let (rows, cols) = (37usize, 30usize);
    let power = random_f32(rows * cols, 21);
    let temp: Vec<f32> = random_f32(rows * cols, 22)
        .iter()
        .map(|v| 320.0 + 10.0 * v)
        .collect();
    let (cap, rx, ry, rz) = (0.5f32, 0.1f32, 0.2f32, 0.02f32);
    let mut expected = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            let t = |r: usize, c: usize| temp[r * cols + c];
            let here = t(r, c);
            let (n, s) = (r.saturating_sub(1), (r + 1).min(rows - 1));
            let (w, e) = (c.saturating_sub(1), (c + 1).min(cols - 1));
            expected[r * cols + c] = here
                + cap
                    * (power[r * cols + c]
                        + (t(s, c) + t(n, c) - 2.0 * here) * ry
                        + (t(r, e) + t(r, w) - 2.0 * here) * rx
                        + (80.0 - here) * rz);
        }
    }
    let small = HOT_BLOCK - 2;
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dpower = DeviceBuffer::from_host(&stream, &power).unwrap();
        let dtemp = DeviceBuffer::from_host(&stream, &temp).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, rows * cols).unwrap();
        let grid = Grid::xy(cols.div_ceil(small) as u32, rows.div_ceil(small) as u32);
        let config = LaunchConfig::new(grid, Block::xy(HOT_BLOCK as u32, HOT_BLOCK as u32));
        ports9::hotspot_step::launch(
            &stream, config, &dpower, &dtemp, &mut out, cols, rows, cap, rx, ry, rz,
        )
        .unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

#[test]
fn bilateral_filter_weights_by_distance_and_difference() {
    let (w, h) = (29usize, 19usize);
    let src: Vec<f32> = random_f32(w * h, 31)
        .iter()
        .map(|v| (v + 1.0) * 0.5)
        .collect();
    let r = BILATERAL_RADIUS;
    let gaussian: Vec<f32> = (-r..=r).map(|d| (-((d * d) as f32) / 8.0).exp()).collect();
    let inv_2r2 = 1.0 / (2.0 * 0.2f32 * 0.2);
    let mut expected = vec![0.0f32; w * h];
    for y in 0..h as i32 {
        for x in 0..w as i32 {
            let center = src[(y * w as i32 + x) as usize];
            let (mut sum, mut total) = (0.0f32, 0.0f32);
            for dy in -r..=r {
                for dx in -r..=r {
                    let sy = (y + dy).clamp(0, h as i32 - 1);
                    let sx = (x + dx).clamp(0, w as i32 - 1);
                    let v = src[(sy * w as i32 + sx) as usize];
                    let f = gaussian[(dy + r) as usize]
                        * gaussian[(dx + r) as usize]
                        * (-(v - center) * (v - center) * inv_2r2).exp();
                    sum += f * v;
                    total += f;
                }
            }
            expected[(y * w as i32 + x) as usize] = sum / total;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dsrc = DeviceBuffer::from_host(&stream, &src).unwrap();
        let dg = DeviceBuffer::from_host(&stream, &gaussian).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, w * h).unwrap();
        let config = LaunchConfig::new(Grid::xy(2, 2), Block::xy(16, 16));
        ports9::bilateral::launch(&stream, config, w, h, &dg, inv_2r2, &dsrc, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}
