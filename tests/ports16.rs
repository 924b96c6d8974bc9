//! The classic CUDA programs of `examples/bench/port_kernels16.rs` (timed in `ports16.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels16.rs"]
mod ports16;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports16::{Vec3, TILE_BODIES};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports16::nbody_bodies::KERNEL, &[]),
        (&ports16::spmv_csr_scalar::KERNEL, &[]),
        (&ports16::bit_reverse::KERNEL, &[]),
    ]);
}

#[test]
fn nbody_with_a_vector_type_matches_plain_rust() {
    let n = 600usize;
    let r = random_f32(4 * n, 161);
    let bodies = ports16::bodies(&r);
    let softening = 1e-3f32;
    let expected: Vec<f32> = bodies
        .iter()
        .flat_map(|me| {
            let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
            for other in &bodies {
                let (dx, dy, dz) = (
                    other.pos.x - me.pos.x,
                    other.pos.y - me.pos.y,
                    other.pos.z - me.pos.z,
                );
                let inv = 1.0 / (dx * dx + dy * dy + dz * dz + softening).sqrt();
                let s = other.mass * inv * inv * inv;
                ax += dx * s;
                ay += dy * s;
                az += dz * s;
            }
            [ax, ay, az]
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let b = DeviceBuffer::from_host(&stream, &bodies).unwrap();
        let mut acc = DeviceBuffer::<Vec3>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, TILE_BODIES as u32);
        ports16::nbody_bodies::launch(&stream, config, softening, &b, &mut acc).unwrap();
        let got: Vec<f32> = acc
            .to_host(&stream)
            .unwrap()
            .iter()
            .flat_map(|v| [v.x, v.y, v.z])
            .collect();
        // Sums of 600 pulls, some large where bodies nearly meet.
        close(&got, &expected, 2e-3);
    }
}

#[test]
fn csr_iterator_chain_matches_plain_rust() {
    let (rows, width) = (500usize, 300usize);
    let mut row_ptr = vec![0u32];
    let mut cols = Vec::new();
    for r in 0..rows {
        for k in 0..(r * 7) % 23 {
            cols.push(((r * 31 + k * 17) % width) as u32);
        }
        row_ptr.push(cols.len() as u32);
    }
    let vals = random_f32(cols.len(), 162);
    let x = random_f32(width, 163);
    let expected: Vec<f32> = (0..rows)
        .map(|r| {
            (row_ptr[r] as usize..row_ptr[r + 1] as usize)
                .map(|k| vals[k] * x[cols[k] as usize])
                .sum()
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let (rp, c, v, xs) = (
            DeviceBuffer::from_host(&stream, &row_ptr).unwrap(),
            DeviceBuffer::from_host(&stream, &cols).unwrap(),
            DeviceBuffer::from_host(&stream, &vals).unwrap(),
            DeviceBuffer::from_host(&stream, &x).unwrap(),
        );
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows, 128);
        ports16::spmv_csr_scalar::launch(&stream, config, &rp, &c, &v, &xs, &mut y).unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn bit_reversal_permutes_as_plain_rust() {
    for log_n in [1u32, 5, 12] {
        let n = 1usize << log_n;
        let input = random_f32(n, 164 + u64::from(log_n));
        let mut expected = vec![0.0f32; n];
        for (i, v) in input.iter().enumerate() {
            expected[((i as u32).reverse_bits() >> (32 - log_n)) as usize] = *v;
        }
        for gpu in backends() {
            let stream = gpu.default_stream();
            let inp = DeviceBuffer::from_host(&stream, &input).unwrap();
            let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
            let config = LaunchConfig::for_len(n, 256);
            ports16::bit_reverse::launch(&stream, config, log_n, &inp, &mut out).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "log_n {log_n}");
        }
    }
}
