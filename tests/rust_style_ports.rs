//! Classic kernels written the way a Rust programmer writes them, the idioms combined: k-means
//! assignment by a `fold` over mapped ranges with sub-slices and zips, a matrix product whose
//! element is `(0..k).map(..).sum()`, and saxpy through `if let Some(&x) = x.get(i)`, on every
//! backend at hand, against the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

#[kernel]
fn kmeans_assign(points: &[f32], centroids: &[f32], dim: usize, labels: &mut [u32]) {
    let i = global_idx().x;
    let n = points.len() / dim;
    if i >= n {
        return;
    }
    let p = &points[i * dim..(i + 1) * dim];
    let k = centroids.len() / dim;
    let (best, _) = (0..k)
        .map(|c| {
            let cent = &centroids[c * dim..(c + 1) * dim];
            let d: f32 = p.iter().zip(cent).map(|(a, b)| (a - b) * (a - b)).sum();
            (c, d)
        })
        .fold(
            (0, f32::INFINITY),
            |(bc, bd), (c, d)| {
                if d < bd {
                    (c, d)
                } else {
                    (bc, bd)
                }
            },
        );
    labels[i] = best as u32;
}

fn kmeans_assign_host(p: &[f32], centroids: &[f32], dim: usize) -> u32 {
    let k = centroids.len() / dim;
    let (best, _) = (0..k)
        .map(|c| {
            let cent = &centroids[c * dim..(c + 1) * dim];
            let d: f32 = p.iter().zip(cent).map(|(a, b)| (a - b) * (a - b)).sum();
            (c, d)
        })
        .fold(
            (0, f32::INFINITY),
            |(bc, bd), (c, d)| {
                if d < bd {
                    (c, d)
                } else {
                    (bc, bd)
                }
            },
        );
    best as u32
}

#[kernel]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize, k: usize) {
    let row = global_idx().y;
    let col = global_idx().x;
    if row < c.len() / n && col < n {
        c[row * n + col] = (0..k).map(|kk| a[row * k + kk] * b[kk * n + col]).sum();
    }
}

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if let Some(&xi) = x.get(i) {
        y[i] += a * xi;
    }
}

#[test]
fn kmeans_assignment_matches_rust() {
    let (n, k, dim) = (300, 7, 3);
    let points = random_f32(n * dim, 1);
    let centroids = random_f32(k * dim, 2);
    let expected: Vec<u32> = points
        .chunks(dim)
        .map(|p| kmeans_assign_host(p, &centroids, dim))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &points).unwrap();
        let dc = DeviceBuffer::from_host(&stream, &centroids).unwrap();
        let mut labels = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        kmeans_assign::launch(&stream, config, &dp, &dc, dim, &mut labels).unwrap();
        assert_eq!(labels.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn matmul_and_saxpy_match_rust() {
    let (m, k, n) = (9, 13, 11);
    let a = random_f32(m * k, 3);
    let b = random_f32(k * n, 4);
    let mut expected = vec![0.0f32; m * n];
    for row in 0..m {
        for col in 0..n {
            expected[row * n + col] = (0..k).map(|kk| a[row * k + kk] * b[kk * n + col]).sum();
        }
    }
    let y0 = random_f32(m * n + 5, 6);
    let x = random_f32(m * n, 5);
    let mut y_expected = y0.clone();
    for (yi, xi) in y_expected.iter_mut().zip(&x) {
        *yi += 0.75 * xi;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut dc = DeviceBuffer::<f32>::zeroed(&stream, m * n).unwrap();
        let config = LaunchConfig::new(Grid::xy(1, 1), Block::xy(16, 16));
        matmul::launch(&stream, config, &da, &db, &mut dc, n, k).unwrap();
        close(&dc.to_host(&stream).unwrap(), &expected, 1e-5);
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut dy = DeviceBuffer::from_host(&stream, &y0).unwrap();
        saxpy::launch(
            &stream,
            LaunchConfig::for_len(y0.len(), 64),
            0.75,
            &dx,
            &mut dy,
        )
        .unwrap();
        close(&dy.to_host(&stream).unwrap(), &y_expected, 1e-6);
    }
}

#[test]
fn rust_style_ports_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&kmeans_assign::KERNEL, &[]),
        (&matmul::KERNEL, &[]),
        (&saxpy::KERNEL, &[]),
    ]);
}
