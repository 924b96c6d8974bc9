//! The classic CUDA programs of `examples/bench/port_kernels11.rs` (timed in `ports11.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels11.rs"]
mod ports11;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports11::{Particle, SOBOL_BITS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports11::sobol::KERNEL, &[]),
        (&ports11::particles_step::KERNEL, &[]),
        (&ports11::histogram_private::KERNEL, &[]),
    ]);
}

#[test]
fn sobol_points_xor_the_direction_numbers_of_set_bits() {
    let (points, dims) = (1000usize, 3usize);
    let v: Vec<u32> = (0..dims * SOBOL_BITS)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761) | 1)
        .collect();
    let mut expected = vec![0.0f32; points * dims];
    for d in 0..dims {
        for i in 0..points {
            let x = (0..32)
                .filter(|k| (i >> k) & 1 == 1)
                .fold(0u32, |x, k| x ^ v[d * SOBOL_BITS + k]);
            expected[d * points + i] = x as f32 * (1.0 / 4_294_967_296.0);
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dv = DeviceBuffer::from_host(&stream, &v).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, points * dims).unwrap();
        let config = LaunchConfig::new(Grid::xy(2, dims as u32), Block::x(128));
        ports11::sobol::launch(&stream, config, points, &dv, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn particles_fall_and_bounce_inside_the_box() {
    let n = 300;
    let r = random_f32(6 * n, 17);
    let host: Vec<Particle> = r
        .chunks(6)
        .map(|c| Particle {
            pos: [(c[0] + 1.0) * 0.5, (c[1] + 1.0) * 0.5, (c[2] + 1.0) * 0.5],
            vel: [50.0 * c[3], 50.0 * c[4], 50.0 * c[5]],
        })
        .collect();
    let (dt, drag) = (0.01f32, 0.1f32);
    let expected: Vec<Particle> = host
        .iter()
        .map(|&p| {
            let mut p = p;
            p.vel[1] -= 9.81 * dt;
            for d in 0..3 {
                p.vel[d] *= 1.0 - drag * dt;
                p.pos[d] += p.vel[d] * dt;
                if p.pos[d] < 0.0 {
                    p.pos[d] = -p.pos[d];
                    p.vel[d] *= -0.8;
                } else if p.pos[d] > 1.0 {
                    p.pos[d] = 2.0 - p.pos[d];
                    p.vel[d] *= -0.8;
                }
            }
            p
        })
        .collect();
    assert!(
        expected
            .iter()
            .zip(&host)
            .any(|(e, h)| e.vel[0] * h.vel[0] < 0.0),
        "some particle bounces"
    );
    let flat = |ps: &[Particle]| -> Vec<f32> {
        ps.iter()
            .flat_map(|p| p.pos.into_iter().chain(p.vel))
            .collect()
    };
    for gpu in backends() {
        let stream = gpu.default_stream();
        let mut dp = DeviceBuffer::from_host(&stream, &host).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        ports11::particles_step::launch(&stream, config, dt, drag, &mut dp).unwrap();
        close(&flat(&dp.to_host(&stream).unwrap()), &flat(&expected), 1e-5);
    }
}

#[test]
fn per_warp_histogram_counts_every_byte() {
    let data: Vec<u8> = (0..100_003u32).map(|i| (i * 7919 % 251) as u8).collect();
    let mut expected = vec![0u32; 256];
    for &b in &data {
        expected[b as usize] += 1;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dd = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let config = LaunchConfig::new(Grid::x(5), Block::x(256));
        ports11::histogram_private::launch(&stream, config, &dd, &mut bins).unwrap();
        assert_eq!(bins.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
