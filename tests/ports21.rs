//! The classic CUDA programs of `examples/bench/port_kernels21.rs` (timed in `ports21.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels21.rs"]
mod ports21;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::TemplateArg;
use ports21::{Fields, BIN_LENGTH, EPS, FLOAT_N, NBRLIST_MAXLEN, REGION_SIZE, SHARED_SIZE_LIMIT};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports21::corr_mean::KERNEL, &[]),
        (&ports21::corr_std::KERNEL, &[]),
        (&ports21::corr_reduce::KERNEL, &[]),
        (&ports21::corr_corr::KERNEL, &[]),
        (&ports21::fdtd_ey::KERNEL, &[]),
        (&ports21::fdtd_ex::KERNEL, &[]),
        (&ports21::fdtd_hz::KERNEL, &[]),
        (&ports21::cutcp_lattice::KERNEL, &[]),
        (
            &ports21::merge_sort_shared::KERNEL,
            &[TemplateArg::Const(1)],
        ),
        (
            &ports21::merge_sort_shared::KERNEL,
            &[TemplateArg::Const(0)],
        ),
    ]);
}

/// PolyBench's correlation on the host, in `f64`: the means, the deviations, the centred and
/// scaled data, and the correlation matrix.
fn correlation(data: &[f32], m: usize) -> [Vec<f64>; 4] {
    let n = data.len() / m;
    let at = |i: usize, j: usize| f64::from(data[i * m + j]);
    let float_n = f64::from(FLOAT_N);
    let mean: Vec<f64> = (0..m)
        .map(|j| (0..n).map(|i| at(i, j)).sum::<f64>() / float_n)
        .collect();
    let std: Vec<f64> = (0..m)
        .map(|j| {
            let s = ((0..n).map(|i| (at(i, j) - mean[j]).powi(2)).sum::<f64>() / float_n).sqrt();
            if s <= f64::from(EPS) {
                1.0
            } else {
                s
            }
        })
        .collect();
    let reduced: Vec<f64> = (0..n * m)
        .map(|k| (at(k / m, k % m) - mean[k % m]) / (float_n.sqrt() * std[k % m]))
        .collect();
    let mut symmat = vec![0.0; m * m];
    for j1 in 0..m {
        symmat[j1 * m + j1] = 1.0;
        for j2 in j1 + 1..m {
            let s: f64 = (0..n)
                .map(|i| reduced[i * m + j1] * reduced[i * m + j2])
                .sum();
            symmat[j1 * m + j2] = s;
            symmat[j2 * m + j1] = s;
        }
    }
    [mean, std, reduced, symmat]
}

/// `ours` equals the `f64` `expected` within `tolerance` relative to `1 + |expected|`.
fn close_f64(what: &str, ours: &[f32], expected: &[f64], tolerance: f64) {
    assert_eq!(ours.len(), expected.len(), "{what}");
    for (i, (a, b)) in ours.iter().zip(expected).enumerate() {
        assert!(
            (f64::from(*a) - b).abs() <= tolerance * (1.0 + b.abs()),
            "{what}, element {i}: {a} against {b}"
        );
    }
}

#[test]
fn correlation_matches_plain_rust() {
    let (n, m) = (45usize, 37usize);
    // Values in the thousands, so the deviations pass `EPS` (FLOAT_N divides them), but
    // every fifth column's below one, whose deviation `EPS` clamps to 1.
    let mut data: Vec<f32> = random_f32(n * m, 211).iter().map(|v| 2000.0 * v).collect();
    for (k, v) in data.iter_mut().enumerate() {
        if (k % m) % 5 == 3 {
            *v /= 4000.0;
        }
    }
    let [mean, std, reduced, symmat] = correlation(&data, m);
    assert!(std.contains(&1.0));
    assert!(std.iter().any(|&s| s > 0.1));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut d = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut mu = DeviceBuffer::<f32>::zeroed(&stream, m).unwrap();
        let mut sd = DeviceBuffer::<f32>::zeroed(&stream, m).unwrap();
        let mut sym = DeviceBuffer::<f32>::zeroed(&stream, m * m).unwrap();
        ports21::correlation(&stream, m, &mut d, &mut mu, &mut sd, &mut sym).unwrap();
        eprintln!("{}", gpu.name());
        close_f64("mean", &mu.to_host(&stream).unwrap(), &mean, 1e-5);
        close_f64("std", &sd.to_host(&stream).unwrap(), &std, 1e-4);
        close_f64("reduced", &d.to_host(&stream).unwrap(), &reduced, 1e-4);
        close_f64("symmat", &sym.to_host(&stream).unwrap(), &symmat, 1e-4);
    }
}

/// PolyBench's fdtd-2d on the host: `steps` time steps over `nx × ny`, as the CPU reference
/// of the benchmark computes them.
fn fdtd(fict: &[f32], steps: usize, nx: usize, ny: usize, fields: &mut [Vec<f32>; 3]) {
    let [ex, ey, hz] = fields;
    for &source in &fict[..steps] {
        ey[..ny].fill(source);
        for i in 1..nx {
            for j in 0..ny {
                ey[i * ny + j] -= 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
            }
        }
        for i in 0..nx {
            for j in 1..ny {
                ex[i * (ny + 1) + j] -= 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
            }
        }
        for i in 0..nx {
            for j in 0..ny {
                hz[i * ny + j] -= 0.7
                    * (ex[i * (ny + 1) + j + 1] - ex[i * (ny + 1) + j] + ey[(i + 1) * ny + j]
                        - ey[i * ny + j]);
            }
        }
    }
}

#[test]
fn fdtd_2d_matches_plain_rust() {
    let (nx, ny, steps) = (37usize, 45usize, 5usize);
    let fict = random_f32(steps, 212);
    let start = [
        random_f32(nx * (ny + 1), 213),
        random_f32((nx + 1) * ny, 214),
        random_f32(nx * ny, 215),
    ];
    let mut expected = start.clone();
    fdtd(&fict, steps, nx, ny, &mut expected);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let fict_buf = DeviceBuffer::from_host(&stream, &fict).unwrap();
        let [ex, ey, hz] = start
            .each_ref()
            .map(|f| DeviceBuffer::from_host(&stream, f).unwrap());
        let mut fields = Fields { ex, ey, hz };
        for t in 0..steps {
            ports21::fdtd_step(&stream, &fict_buf, t, &mut fields, nx, ny).unwrap();
        }
        eprintln!("{}", gpu.name());
        close(&fields.ex.to_host(&stream).unwrap(), &expected[0], 1e-5);
        close(&fields.ey.to_host(&stream).unwrap(), &expected[1], 1e-5);
        close(&fields.hz.to_host(&stream).unwrap(), &expected[2], 1e-5);
    }
}

#[test]
fn cutcp_neighbourhood_covers_the_cutoff() {
    // Two bin lengths of cutoff: the 5³ bins around a region's, every one of them.
    let list = ports21::cutcp_neighbours(2.0 * BIN_LENGTH);
    assert_eq!(list.len(), NBRLIST_MAXLEN);
    assert_eq!(list[0], [-2, -2, -2]);
    assert_eq!(list[1], [-1, -2, -2]);
    // Three bin lengths (Parboil's 12 Å): the corners of the 7³ lie beyond the cutoff plus a
    // bin's diagonal, the bins beside them within it.
    let three = ports21::cutcp_neighbours(3.0 * BIN_LENGTH);
    assert_eq!(three.len(), 7 * 7 * 7 - 8);
    assert!(!three.contains(&[3, 3, -3]) && three.contains(&[3, 3, 2]));
}

/// The potential at every lattice point, summed over every atom within the cutoff, region
/// after region as `cutcp_lattice` stores it.
fn cutcp_potential(atoms: &[[f32; 4]], dims: [usize; 3], h: f32, cutoff: f32) -> Vec<f64> {
    let regions = [dims[0] / 8, dims[1] / 8];
    let mut out = vec![0.0; dims.iter().product()];
    let cutoff2 = f64::from(cutoff * cutoff);
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                let point = [x, y, z].map(|c| c as f64 * f64::from(h));
                let mut e = 0.0;
                for atom in atoms {
                    let r2: f64 = (0..3)
                        .map(|d| (f64::from(atom[d]) - point[d]).powi(2))
                        .sum();
                    if r2 < cutoff2 {
                        let s = 1.0 - r2 / cutoff2;
                        e += f64::from(atom[3]) / r2.sqrt() * s * s;
                    }
                }
                let region = (z / 8 * regions[1] + y / 8) * regions[0] + x / 8;
                out[region * REGION_SIZE + (z % 8) * 64 + (y % 8) * 8 + x % 8] = e;
            }
        }
    }
    out
}

#[test]
fn cutcp_matches_plain_rust() {
    let (dims, h, cutoff) = ([16usize, 24, 8], 0.5f32, 2.0 * BIN_LENGTH);
    // Atoms over the lattice's box and a little beyond it, charges away from zero.
    let extent = dims.map(|d| d as f32 * h);
    let atoms: Vec<[f32; 4]> = random_f32(4 * 150, 216)
        .chunks(4)
        .map(|c| {
            let q = if c[3] < 0.0 { c[3] - 0.5 } else { c[3] + 0.5 };
            [
                (c[0] * 0.6 + 0.5) * extent[0],
                (c[1] * 0.6 + 0.5) * extent[1],
                (c[2] * 0.6 + 0.5) * extent[2],
                q,
            ]
        })
        .collect();
    let bins = ports21::cutcp_bins(&atoms, dims, h, cutoff);
    // The bins hold most atoms, and some bins are full (their extra atoms left out).
    assert!(bins.kept.len() > atoms.len() / 2 && bins.kept.len() < atoms.len());
    let expected = cutcp_potential(&bins.kept, dims, h, cutoff);
    assert!(expected.iter().any(|&e| e > 1.0) && expected.iter().any(|&e| e < -1.0));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let words = DeviceBuffer::from_host(&stream, &bins.words).unwrap();
        let mut regions = DeviceBuffer::<f32>::zeroed(&stream, expected.len()).unwrap();
        let list = ports21::cutcp_neighbours(cutoff);
        let table = ports21::cutcp_table(&list);
        ports21::cutcp(
            &stream,
            &table,
            list.len(),
            &bins,
            &words,
            dims,
            h,
            cutoff,
            &mut regions,
        )
        .unwrap();
        eprintln!("{}", gpu.name());
        close_f64(
            "potential",
            &regions.to_host(&stream).unwrap(),
            &expected,
            1e-4,
        );
    }
}

/// Each run of `run` pairs of `keys` and `values` stably sorted by key, up or down.
fn sorted_runs(keys: &[u32], values: &[u32], run: usize, ascending: bool) -> (Vec<u32>, Vec<u32>) {
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    for chunk in pairs.chunks_mut(run) {
        if ascending {
            chunk.sort_by_key(|p| p.0);
        } else {
            chunk.sort_by_key(|p| std::cmp::Reverse(p.0));
        }
    }
    pairs.into_iter().unzip()
}

#[test]
fn merge_sort_shared_matches_plain_rust() {
    let n = 3 * SHARED_SIZE_LIMIT;
    // Few distinct keys, so the merges' ties show whether they keep the order.
    let keys: Vec<u32> = random_f32(n, 217)
        .iter()
        .map(|v| ((v + 1.0) * 40.0) as u32)
        .collect();
    let values: Vec<u32> = (0..n as u32).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let k = DeviceBuffer::from_host(&stream, &keys).unwrap();
        let v = DeviceBuffer::from_host(&stream, &values).unwrap();
        let config = ports21::merge_sort_config(n).unwrap();
        for (ascending, run) in [
            (true, SHARED_SIZE_LIMIT),
            (false, SHARED_SIZE_LIMIT),
            (true, 128),
        ] {
            let mut dk = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            let mut dv = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            if ascending {
                ports21::merge_sort_shared::launch::<true>(
                    &stream, config, &k, &v, &mut dk, &mut dv, run,
                )
            } else {
                ports21::merge_sort_shared::launch::<false>(
                    &stream, config, &k, &v, &mut dk, &mut dv, run,
                )
            }
            .unwrap();
            let (ek, ev) = sorted_runs(&keys, &values, run, ascending);
            eprintln!("{}: ascending {ascending}, runs of {run}", gpu.name());
            assert_eq!(dk.to_host(&stream).unwrap(), ek);
            assert_eq!(dv.to_host(&stream).unwrap(), ev);
        }
    }
}
