//! The classic CUDA programs of `examples/bench/port_kernels15.rs` (timed in `ports15.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels15.rs"]
mod ports15;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports15::{LBM_EX, LBM_EY, LBM_W};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports15::lbm_step::KERNEL, &[]),
        (&ports15::fan1::KERNEL, &[]),
        (&ports15::fan2::KERNEL, &[]),
        (&ports15::srad_coefficients::KERNEL, &[]),
    ]);
}

/// One D2Q9 step in plain Rust, as `lbm_step` computes it.
fn lbm_reference(nx: usize, ny: usize, omega: f32, f: &[f32]) -> Vec<f32> {
    let cells = nx * ny;
    let mut out = vec![0.0f32; 9 * cells];
    for y in 0..ny {
        for x in 0..nx {
            let dist: Vec<f32> = (0..9)
                .map(|q| {
                    let sx = (x as i32 - LBM_EX[q]).rem_euclid(nx as i32) as usize;
                    let sy = (y as i32 - LBM_EY[q]).rem_euclid(ny as i32) as usize;
                    f[q * cells + sy * nx + sx]
                })
                .collect();
            let rho: f32 = dist.iter().sum();
            let ux = (0..9).map(|q| dist[q] * LBM_EX[q] as f32).sum::<f32>() / rho;
            let uy = (0..9).map(|q| dist[q] * LBM_EY[q] as f32).sum::<f32>() / rho;
            let usq = 1.5 * (ux * ux + uy * uy);
            for q in 0..9 {
                let eu = 3.0 * (LBM_EX[q] as f32 * ux + LBM_EY[q] as f32 * uy);
                let feq = LBM_W[q] * rho * (1.0 + eu + 0.5 * eu * eu - usq);
                out[q * cells + y * nx + x] = dist[q] + omega * (feq - dist[q]);
            }
        }
    }
    out
}

#[test]
fn lattice_boltzmann_step_matches_plain_rust_and_keeps_mass() {
    let (nx, ny, omega) = (70usize, 9usize, 1.2f32);
    let f_host: Vec<f32> = random_f32(9 * nx * ny, 151)
        .iter()
        .enumerate()
        .map(|(i, v)| LBM_W[i / (nx * ny)] * (1.0 + 0.1 * v))
        .collect();
    let expected = lbm_reference(nx, ny, omega, &f_host);
    let mass: f32 = f_host.iter().sum();
    let after: f32 = expected.iter().sum();
    assert!((mass - after).abs() < 1e-3 * mass, "{mass} against {after}");
    for gpu in backends() {
        let stream = gpu.default_stream();
        let f = DeviceBuffer::from_host(&stream, &f_host).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 9 * nx * ny).unwrap();
        let config = LaunchConfig::new(Grid::xy(nx.div_ceil(32) as u32, ny as u32), Block::x(32));
        ports15::lbm_step::launch(&stream, config, nx, ny, omega, &f, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn gaussian_elimination_solves_the_system() {
    let size = 40usize;
    // Diagonally dominant, so elimination without pivoting is stable.
    let mut a_host = random_f32(size * size, 152);
    for i in 0..size {
        a_host[i * size + i] += size as f32;
    }
    let x_true = random_f32(size, 153);
    let b_host: Vec<f32> = (0..size)
        .map(|i| (0..size).map(|j| a_host[i * size + j] * x_true[j]).sum())
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let mut b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let mut m = DeviceBuffer::<f32>::zeroed(&stream, size * size).unwrap();
        for t in 0..size - 1 {
            let config = LaunchConfig::for_len(size, 64);
            ports15::fan1::launch(&stream, config, size, t, &a, &mut m).unwrap();
            let config = LaunchConfig::new(
                Grid::xy(size.div_ceil(8) as u32, size.div_ceil(8) as u32),
                Block::xy(8, 8),
            );
            ports15::fan2::launch(&stream, config, size, t, &m, &mut a, &mut b).unwrap();
        }
        let (a, b) = (a.to_host(&stream).unwrap(), b.to_host(&stream).unwrap());
        // Back substitution on the host, as Rodinia's does.
        let mut x = vec![0.0f32; size];
        for i in (0..size).rev() {
            let rest: f32 = (i + 1..size).map(|j| a[i * size + j] * x[j]).sum();
            x[i] = (b[i] - rest) / a[i * size + i];
        }
        close(&x, &x_true, 1e-3);
    }
}

#[test]
fn srad_coefficients_match_plain_rust() {
    let (rows, cols, q0sqr) = (33usize, 21usize, 0.05f32);
    let j_host: Vec<f32> = random_f32(rows * cols, 154)
        .iter()
        .map(|v| 1.5 + v)
        .collect();
    let n = rows * cols;
    let mut expected = [
        vec![0.0f32; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
    ];
    for k in 0..n {
        let (row, col) = (k % rows, k / rows);
        let nb = [
            if row == 0 { k } else { k - 1 },
            if row == rows - 1 { k } else { k + 1 },
            if col == 0 { k } else { k - rows },
            if col == cols - 1 { k } else { k + rows },
        ];
        let jc = j_host[k];
        let d: Vec<f32> = nb.iter().map(|&i| j_host[i] - jc).collect();
        let g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
        let l = (d[0] + d[1] + d[2] + d[3]) / jc;
        let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
        let den = 1.0 + 0.25 * l;
        let qsqr = num / (den * den);
        let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
        expected[4][k] = (1.0 / (1.0 + den)).clamp(0.0, 1.0);
        for (out, v) in expected.iter_mut().zip(&d) {
            out[k] = *v;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let j = DeviceBuffer::from_host(&stream, &j_host).unwrap();
        let mut outs: Vec<DeviceBuffer<f32>> = (0..5)
            .map(|_| DeviceBuffer::zeroed(&stream, n).unwrap())
            .collect();
        let [dn, ds, dw, de, c] = &mut outs[..] else {
            unreachable!("five buffers")
        };
        let config = LaunchConfig::for_len(n, 128);
        ports15::srad_coefficients::launch(
            &stream, config, rows, cols, q0sqr, &j, dn, ds, dw, de, c,
        )
        .unwrap();
        for (got, want) in outs.iter().zip(&expected) {
            close(&got.to_host(&stream).unwrap(), want, 1e-5);
        }
    }
}
