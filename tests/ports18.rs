//! The classic CUDA programs of `examples/bench/port_kernels18.rs` (timed in `ports18.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels18.rs"]
mod ports18;

use common::{assert_compiles_with_nvrtc, backends, random_f32};
use gpu_dsl::prelude::*;
use ports18::{Deriche, OptionData, PayoffSums, XorShift, MC_THREADS, RADIX, SPLIT_BLOCK};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports18::lud_diagonal::KERNEL, &[]),
        (&ports18::lud_perimeter::KERNEL, &[]),
        (&ports18::lud_internal::KERNEL, &[]),
        (&ports18::recursive_gaussian_rgba::KERNEL, &[]),
        (&ports18::monte_carlo_call::KERNEL, &[]),
        (&ports18::radix_split_4bit::KERNEL, &[]),
    ]);
}

/// A diagonally dominant `n × n` matrix, so LU without pivoting stays well conditioned.
fn dominant_matrix(n: usize, seed: u64) -> Vec<f32> {
    let mut a = random_f32(n * n, seed);
    for i in 0..n {
        a[i * n + i] += n as f32;
    }
    a
}

/// Doolittle's LU decomposition in place: L's multipliers below the diagonal, U on and above.
fn lu_in_place(a: &mut [f32], n: usize) {
    for k in 0..n {
        for i in k + 1..n {
            a[i * n + k] /= a[k * n + k];
            for j in k + 1..n {
                a[i * n + j] -= a[i * n + k] * a[k * n + j];
            }
        }
    }
}

#[test]
fn lud_matches_plain_rust() {
    let n = 80usize;
    let host = dominant_matrix(n, 181);
    let mut expected = host.clone();
    lu_in_place(&mut expected, n);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut a = DeviceBuffer::from_host(&stream, &host).unwrap();
        ports18::lud(&stream, n, &mut a).unwrap();
        let got = a.to_host(&stream).unwrap();
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert!(
                (g - e).abs() <= 1e-4 * (1.0 + e.abs()),
                "{}: element ({}, {}): {g} against {e}",
                gpu.name(),
                i / n,
                i % n
            );
        }
    }
}

/// A byte of each channel of packed pixels.
fn channels(pixels: &[u32]) -> Vec<u8> {
    pixels.iter().flat_map(|p| p.to_le_bytes()).collect()
}

/// The sample's filter of each column in plain Rust, on `[f32; 4]` channels.
fn gaussian_columns(input: &[u32], width: usize, height: usize, f: &Deriche) -> Vec<u32> {
    let unpack = |c: u32| c.to_le_bytes().map(|b| f32::from(b) * (1.0 / 255.0));
    let pack = |v: [f32; 4]| u32::from_le_bytes(v.map(|x| (x.abs().min(1.0) * 255.0) as u8));
    let mut out = vec![0u32; input.len()];
    for x in 0..width {
        let (mut xp, mut yp, mut yb) = (unpack(input[x]), [0.0f32; 4], [0.0f32; 4]);
        for k in 0..4 {
            yb[k] = xp[k] * f.coefp;
            yp[k] = yb[k];
        }
        for y in 0..height {
            let xc = unpack(input[y * width + x]);
            let yc: [f32; 4] =
                core::array::from_fn(|k| xc[k] * f.a0 + xp[k] * f.a1 - yp[k] * f.b1 - yb[k] * f.b2);
            out[y * width + x] = pack(yc);
            (xp, yb, yp) = (xc, yp, yc);
        }
        let mut xn = unpack(input[(height - 1) * width + x]);
        let mut xa = xn;
        let mut yn = xn.map(|v| v * f.coefn);
        let mut ya = yn;
        for y in (0..height).rev() {
            let xc = unpack(input[y * width + x]);
            let yc: [f32; 4] =
                core::array::from_fn(|k| xn[k] * f.a2 + xa[k] * f.a3 - yn[k] * f.b1 - ya[k] * f.b2);
            (xa, xn, ya, yn) = (xn, xc, yn, yc);
            let before = unpack(out[y * width + x]);
            out[y * width + x] = pack(core::array::from_fn(|k| before[k] + yc[k]));
        }
    }
    out
}

#[test]
fn recursive_gaussian_matches_plain_rust() {
    let (width, height) = (45usize, 31usize);
    let input: Vec<u32> = random_f32(width * height, 182)
        .iter()
        .map(|v| (v.to_bits() ^ (v.to_bits() >> 11)).wrapping_mul(0x9E37_79B9))
        .collect();
    let f = Deriche::gaussian(3.0);
    let expected = gaussian_columns(&input, width, height, &f);
    // Smoothing changes the image: a filter that copied its input would fail here.
    assert_ne!(expected, input);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let inp = DeviceBuffer::from_host(&stream, &input).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, input.len()).unwrap();
        let config = LaunchConfig::for_len(width, 32);
        ports18::recursive_gaussian_rgba::launch(&stream, config, &inp, &mut out, width, height, f)
            .unwrap();
        let got = channels(&out.to_host(&stream).unwrap());
        // A GPU contracts to FMAs, which may move a channel across a rounding step.
        for (i, (g, e)) in got.iter().zip(channels(&expected)).enumerate() {
            assert!(
                g.abs_diff(e) <= 1,
                "{}: byte {i}: {g} against {e}",
                gpu.name()
            );
        }
    }
}

/// The kernel's sums of each option in plain Rust: each thread's paths, then the block's tree.
fn payoff_sums(seed: u32, path_n: usize, options: &[OptionData]) -> Vec<PayoffSums> {
    let mut out = Vec::new();
    for (o, opt) in options.iter().enumerate() {
        let mu_by_t = (opt.r - 0.5 * opt.v * opt.v) * opt.t;
        let v_by_sqrt_t = opt.v * opt.t.sqrt();
        let mut partial: Vec<PayoffSums> = (0..MC_THREADS)
            .map(|t| {
                let mut rng = XorShift::new(seed, (o * MC_THREADS + t) as u32);
                let mut acc = PayoffSums::default();
                for _ in (t..path_n / 2).step_by(MC_THREADS) {
                    let (z0, z1) = rng.normal_pair();
                    for z in [z0, z1] {
                        let payoff = (opt.s * (mu_by_t + v_by_sqrt_t * z).exp() - opt.x).max(0.0);
                        acc.sum += payoff;
                        acc.sum_sq += payoff * payoff;
                    }
                }
                acc
            })
            .collect();
        let mut stride = MC_THREADS / 2;
        while stride > 0 {
            for t in 0..stride {
                partial[t].sum += partial[t + stride].sum;
                partial[t].sum_sq += partial[t + stride].sum_sq;
            }
            stride /= 2;
        }
        out.push(partial[0]);
    }
    out
}

/// The standard normal distribution function (Abramowitz and Stegun 26.2.17, as the CUDA
/// samples' BlackScholes has it).
fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k
        * (0.319_381_530
            + k * (-0.356_563_782
                + k * (1.781_477_937 + k * (-1.821_255_978 + k * 1.330_274_429))));
    let tail = (-0.5 * d * d).exp() / (2.0 * std::f64::consts::PI).sqrt() * poly;
    if d > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The Black–Scholes price of a European call.
fn black_scholes_call(o: &OptionData) -> f64 {
    let (s, x, t, r, v) = (o.s as f64, o.x as f64, o.t as f64, o.r as f64, o.v as f64);
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * t.sqrt());
    let d2 = d1 - v * t.sqrt();
    s * cnd(d1) - x * (-r * t).exp() * cnd(d2)
}

#[test]
fn monte_carlo_matches_plain_rust_and_black_scholes() {
    let path_n = 1usize << 15;
    let options: Vec<OptionData> = random_f32(4 * 5, 183)
        .chunks(5)
        .map(|c| OptionData {
            s: 30.0 + 5.0 * c[0],
            x: 30.0 + 5.0 * c[1],
            t: 1.0 + 0.5 * c[2],
            r: 0.03,
            v: 0.25 + 0.05 * c[4],
        })
        .collect();
    let expected = payoff_sums(7, path_n, &options);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let opts = DeviceBuffer::from_host(&stream, &options).unwrap();
        let mut sums = DeviceBuffer::<PayoffSums>::zeroed(&stream, options.len()).unwrap();
        let config = LaunchConfig::new(Grid::x(options.len() as u32), Block::x(MC_THREADS as u32));
        ports18::monte_carlo_call::launch(&stream, config, 7, path_n, &opts, &mut sums).unwrap();
        let got = sums.to_host(&stream).unwrap();
        for (o, ((g, e), opt)) in got.iter().zip(&expected).zip(&options).enumerate() {
            assert!(
                (g.sum - e.sum).abs() <= 1e-3 * e.sum.abs()
                    && (g.sum_sq - e.sum_sq).abs() <= 1e-3 * e.sum_sq.abs(),
                "{}: option {o}: {g:?} against {e:?}",
                gpu.name()
            );
            // The estimate is within five standard errors of the closed form.
            let n = path_n as f64;
            let discount = (-(opt.r * opt.t) as f64).exp();
            let mean = g.sum as f64 / n;
            let std_error = ((g.sum_sq as f64 / n - mean * mean) / n).sqrt();
            let exact = black_scholes_call(opt);
            assert!(
                (discount * mean - exact).abs() <= 5.0 * discount * std_error,
                "{}: option {o}: {} against {exact} (standard error {std_error})",
                gpu.name(),
                discount * mean
            );
        }
    }
}

/// Each chunk's keys stably sorted by the digit at `shift`, and the digit counts laid out by
/// digit, then chunk.
fn radix_split(keys: &[u32], shift: u32) -> (Vec<u32>, Vec<u32>) {
    let chunks = keys.len() / SPLIT_BLOCK;
    let digit = |k: u32| ((k >> shift) & 15) as usize;
    let mut sorted = Vec::new();
    let mut counts = vec![0u32; RADIX * chunks];
    for (c, chunk) in keys.chunks(SPLIT_BLOCK).enumerate() {
        let mut part = chunk.to_vec();
        part.sort_by_key(|&k| digit(k));
        for &k in chunk {
            counts[digit(k) * chunks + c] += 1;
        }
        sorted.extend(part);
    }
    (sorted, counts)
}

#[test]
fn radix_split_matches_plain_rust() {
    let n = 5 * SPLIT_BLOCK;
    let keys: Vec<u32> = random_f32(n, 184)
        .iter()
        .map(|v| v.to_bits().wrapping_mul(0x85EB_CA6B).rotate_left(7))
        .collect();
    for shift in [0u32, 4, 28] {
        let (expected, expected_counts) = radix_split(&keys, shift);
        for gpu in backends() {
            let stream = gpu.default_stream();
            let k = DeviceBuffer::from_host(&stream, &keys).unwrap();
            let mut sorted = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
            let mut counts =
                DeviceBuffer::<u32>::zeroed(&stream, RADIX * (n / SPLIT_BLOCK)).unwrap();
            let config = LaunchConfig::new(
                Grid::x((n / SPLIT_BLOCK) as u32),
                Block::x(SPLIT_BLOCK as u32),
            );
            ports18::radix_split_4bit::launch(&stream, config, shift, &k, &mut sorted, &mut counts)
                .unwrap();
            assert_eq!(
                sorted.to_host(&stream).unwrap(),
                expected,
                "{} shift {shift}",
                gpu.name()
            );
            assert_eq!(
                counts.to_host(&stream).unwrap(),
                expected_counts,
                "{}",
                gpu.name()
            );
        }
    }
}
