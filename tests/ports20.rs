//! The classic CUDA programs of `examples/bench/port_kernels20.rs` (timed in `ports20.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels20.rs"]
mod ports20;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::Backend;
use ports20::{Cartesian, Float4, PF_THREADS, TPACF_BINS, TPACF_THREADS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports20::tpacf_histogram::KERNEL, &[]),
        (&ports20::md_lj_force::KERNEL, &[]),
        (&ports20::dwt_haar_1d::KERNEL, &[]),
        (&ports20::pf_find_index::KERNEL, &[]),
        (&ports20::pf_normalize_weights::KERNEL, &[]),
    ]);
}

/// The histogram of the angles between every data point and every random point, each pair's
/// bin found by walking the boundaries (`None` past the first or the last).
fn tpacf_reference(bounds: &[f32], data: &[Cartesian], random: &[Cartesian]) -> Vec<u32> {
    let mut hist = vec![0u32; TPACF_BINS];
    for r in random {
        for p in data {
            let d = p.x * r.x + p.y * r.y + p.z * r.z;
            if let Some(bin) = (0..TPACF_BINS).find(|&b| d < bounds[b] && d >= bounds[b + 1]) {
                hist[bin] += 1;
            }
        }
    }
    hist
}

#[test]
fn tpacf_matches_plain_rust() {
    // Not a multiple of the block: the last tile of data points is partial.
    let (n, sets) = (300usize, 3usize);
    let bounds = ports20::tpacf_bounds();
    assert!(bounds.windows(2).all(|w| w[0] > w[1]), "{bounds:?}");
    let data = ports20::sphere_points(&random_f32(3 * n, 211), n);
    // Random points near the data ones too, so the small angles' bins fill as well.
    let mut random = ports20::sphere_points(&random_f32(3 * n * sets, 212), n * sets);
    for (k, r) in random.iter_mut().enumerate().step_by(7) {
        let p = data[k % n];
        let jitter = 1e-3 * (k % 13) as f32;
        *r = ports20::sphere_points(&[p.x + jitter, p.y, p.z - 1e-3], 1)[0];
    }
    let expected = tpacf_reference(&bounds, &data, &random);
    assert!(
        expected.iter().filter(|&&c| c > 0).count() >= TPACF_BINS / 2,
        "{expected:?}"
    );
    let counted: u32 = expected.iter().sum();
    assert!(counted > (n * n * sets / 2) as u32, "{counted}");
    for gpu in backends() {
        let stream = gpu.default_stream();
        let b = DeviceBuffer::from_host(&stream, &bounds).unwrap();
        let d = DeviceBuffer::from_host(&stream, &data).unwrap();
        let r = DeviceBuffer::from_host(&stream, &random).unwrap();
        let mut hist = DeviceBuffer::<u32>::zeroed(&stream, TPACF_BINS).unwrap();
        let config = LaunchConfig::new(Grid::x(sets as u32), Block::x(TPACF_THREADS as u32));
        ports20::tpacf_histogram::launch(&stream, config, &b, &d, &r, &mut hist).unwrap();
        let got = hist.to_host(&stream).unwrap();
        eprintln!("{}", gpu.name());
        if gpu.backend() == Backend::Cpu {
            assert_eq!(got, expected);
        } else {
            // A fused multiply-add may move a dot product at a boundary to the next bin.
            let moved: u32 = got.iter().zip(&expected).map(|(g, e)| g.abs_diff(*e)).sum();
            assert!(moved <= 8, "{got:?} against {expected:?}");
        }
    }
}

#[test]
fn md_matches_plain_rust() {
    let (side, max_neighbors) = (6usize, 128usize);
    let n = side * side * side;
    let (positions, neighbors) = ports20::md_atoms(&random_f32(3 * n, 213), side, max_neighbors);
    let (cutsq, lj1, lj2) = (6.25f32, 1.5f32, 2.0f32);
    let mut within = 0;
    let expected: Vec<f32> = (0..n)
        .flat_map(|i| {
            let me = positions[i];
            let mut f = [0.0f64; 3];
            for j in 0..max_neighbors {
                let other = positions[neighbors[j * n + i] as usize];
                let d = [me.x - other.x, me.y - other.y, me.z - other.z];
                let r2 = d.iter().map(|c| c * c).sum::<f32>();
                if r2 < cutsq {
                    within += 1;
                    let r2inv = 1.0 / f64::from(r2);
                    let r6inv = r2inv * r2inv * r2inv;
                    let force = r2inv * r6inv * (f64::from(lj1) * r6inv - f64::from(lj2));
                    for c in 0..3 {
                        f[c] += f64::from(d[c]) * force;
                    }
                }
            }
            f.map(|c| c as f32)
        })
        .collect();
    // Some neighbours lie within the cutoff, and some beyond it.
    assert!(within > n * 10 && within < n * max_neighbors, "{within}");
    for gpu in backends() {
        let stream = gpu.default_stream();
        let p = DeviceBuffer::from_host(&stream, &positions).unwrap();
        let nb = DeviceBuffer::from_host(&stream, &neighbors).unwrap();
        let mut forces = DeviceBuffer::<Float4>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, ports20::MD_THREADS);
        ports20::md_lj_force::launch(
            &stream,
            config,
            &p,
            &nb,
            &mut forces,
            max_neighbors,
            cutsq,
            lj1,
            lj2,
        )
        .unwrap();
        let got: Vec<f32> = forces
            .to_host(&stream)
            .unwrap()
            .iter()
            .flat_map(|f| [f.x, f.y, f.z])
            .collect();
        eprintln!("{}", gpu.name());
        close(&got, &expected, 1e-4);
    }
}

/// The Haar decomposition of `signal` in `f64`: the final approximation, then the details
/// from the coarsest level to the finest, as the CUDA sample lays them out.
fn haar_reference(signal: &[f32]) -> Vec<f64> {
    let mut out = vec![0.0f64; signal.len()];
    let mut approx: Vec<f64> = signal.iter().map(|&v| f64::from(v)).collect();
    let s = std::f64::consts::FRAC_1_SQRT_2;
    while approx.len() > 1 {
        let half = approx.len() / 2;
        let next: Vec<f64> = approx.chunks(2).map(|p| (p[0] + p[1]) * s).collect();
        for (k, p) in approx.chunks(2).enumerate() {
            out[half + k] = (p[0] - p[1]) * s;
        }
        approx = next;
    }
    out[0] = approx[0];
    out
}

#[test]
fn dwt_haar_matches_plain_rust() {
    // One launch of one block, one launch of several, and two launches (8 blocks, then 4
    // threads over their approximations).
    for len in [2usize, 64, 2048, 8192] {
        let signal = random_f32(len, 214 + len as u64);
        let expected: Vec<f32> = haar_reference(&signal).iter().map(|&v| v as f32).collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let s = DeviceBuffer::from_host(&stream, &signal).unwrap();
            let mut details = DeviceBuffer::<f32>::zeroed(&stream, len).unwrap();
            let blocks = (len / 2 / ports20::haar_launch(len).0).max(1);
            let zeros = || DeviceBuffer::<f32>::zeroed(&stream, blocks).unwrap();
            let mut scratch = [zeros(), zeros()];
            let out = ports20::dwt_haar(&stream, &s, &mut details, &mut scratch).unwrap();
            let mut got = details.to_host(&stream).unwrap();
            assert_eq!(got[0], 0.0, "element 0 holds no detail");
            got[0] = scratch[out].to_host(&stream).unwrap()[0];
            eprintln!("{} {len}", gpu.name());
            close(&got, &expected, 1e-5);
        }
    }
}

#[test]
fn pf_find_index_matches_plain_rust() {
    let n = 777usize;
    let weights: Vec<f32> = random_f32(n, 215).iter().map(|w| 1.5 + w).collect();
    let total: f32 = weights.iter().sum();
    let cdf: Vec<f32> = weights
        .iter()
        .scan(0.0f32, |acc, w| {
            *acc += w / total;
            Some(*acc)
        })
        .collect();
    let mut u: Vec<f32> = (0..n)
        .map(|i| 0.3 / n as f32 + i as f32 / n as f32)
        .collect();
    // Past the CDF's end: the last particle.
    u[n - 1] = 2.0;
    let (x, y) = (random_f32(n, 216), random_f32(n, 217));
    let chosen: Vec<usize> = u
        .iter()
        .map(|&ui| (0..n).find(|&k| cdf[k] >= ui).unwrap_or(n - 1))
        .collect();
    // Heavy particles are chosen more than once and light ones not at all.
    assert!(chosen.windows(2).any(|w| w[0] == w[1]));
    assert!(chosen.windows(2).any(|w| w[1] > w[0] + 1));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let [xb, yb, cb, ub] =
            [&x, &y, &cdf, &u].map(|v| DeviceBuffer::from_host(&stream, v).unwrap());
        let mut xj = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut yj = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, PF_THREADS as u32);
        ports20::pf_find_index::launch(&stream, config, &xb, &yb, &cb, &ub, &mut xj, &mut yj)
            .unwrap();
        let (got_x, got_y) = (xj.to_host(&stream).unwrap(), yj.to_host(&stream).unwrap());
        eprintln!("{}", gpu.name());
        for (i, &k) in chosen.iter().enumerate() {
            assert_eq!((got_x[i], got_y[i]), (x[k], y[k]), "particle {i} takes {k}");
        }
    }
}

#[test]
fn pf_normalize_weights_matches_plain_rust() {
    // More particles than threads, and not a multiple of them.
    let n = 3001usize;
    let weights: Vec<f32> = random_f32(n, 218).iter().map(|w| 1.5 + w).collect();
    let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let normalized: Vec<f32> = weights
        .iter()
        .map(|&w| (f64::from(w) / total) as f32)
        .collect();
    let cdf: Vec<f32> = normalized
        .iter()
        .scan(0.0f64, |acc, &w| {
            *acc += f64::from(w);
            Some(*acc as f32)
        })
        .collect();
    let u1 = 0.37 / n as f32;
    let u: Vec<f32> = (0..n).map(|i| u1 + i as f32 / n as f32).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut w = DeviceBuffer::from_host(&stream, &weights).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut ub = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(PF_THREADS as u32));
        ports20::pf_normalize_weights::launch(&stream, config, &mut w, &mut c, &mut ub, u1)
            .unwrap();
        eprintln!("{}", gpu.name());
        close(&w.to_host(&stream).unwrap(), &normalized, 1e-5);
        close(&c.to_host(&stream).unwrap(), &cdf, 1e-5);
        close(&ub.to_host(&stream).unwrap(), &u, 1e-6);
    }
}
