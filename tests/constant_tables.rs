//! `#[constant]` tables: small read-only arrays (filter taps) that travel with each launch in
//! the constant bank, indexed in the kernel like an array.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

/// A 9-tap 1D convolution (zero outside the signal) with the taps in constant memory.
#[kernel]
fn convolve(#[constant] taps: &[f32; 9], x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        let mut acc = 0.0f32;
        for k in 0..taps.len() {
            let j = i + k;
            if j >= 4 && j - 4 < x.len() {
                acc += taps[k] * x[j - 4];
            }
        }
        y[i] = acc;
    }
}

fn convolve_cpu(taps: &[f32; 9], x: &[f32]) -> Vec<f32> {
    (0..x.len())
        .map(|i| {
            let mut acc = 0.0f32;
            for (k, tap) in taps.iter().enumerate() {
                let j = i + k;
                if j >= 4 && j - 4 < x.len() {
                    acc += tap * x[j - 4];
                }
            }
            acc
        })
        .collect()
}

#[test]
fn filter_taps_in_constant_memory() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 5000;
    let host = random_f32(n, 11);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::for_len(n, 128);
    let blur = [1.0, 2.0, 3.0, 4.0, 5.0, 4.0, 3.0, 2.0, 1.0].map(|t: f32| t / 25.0);
    let edge = [0.0, 0.0, 0.0, -1.0, 2.0, -1.0, 0.0, 0.0, 0.0];
    for taps in [blur, edge] {
        convolve::launch(&stream, config, &taps, &x, &mut y).unwrap();
        let got = y.to_host(&stream).unwrap();
        let expected = convolve_cpu(&taps, &host);
        for i in 0..n {
            assert!(
                (got[i] - expected[i]).abs() <= 1e-5,
                "{i}: {} vs {}",
                got[i],
                expected[i]
            );
        }
    }
}

/// Several tables of different types, read at run-time and constant indices.
#[kernel]
fn lookup(
    #[constant] bytes: &[u8; 256],
    #[constant] weights: &[f64; 3],
    #[constant] offsets: &[i32; 4],
    codes: &[u8],
    out: &mut [f64],
) {
    let i = global_idx().x;
    if i < codes.len() {
        let code = codes[i];
        let mapped = bytes[code as usize];
        out[i] = mapped as f64 * weights[0] + weights[2] + offsets[(i % 4) as usize] as f64;
    }
}

#[test]
fn tables_of_several_types() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut bytes = [0u8; 256];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i as u8).reverse_bits();
    }
    let weights = [0.5, -1.0, 0.25];
    let offsets = [-3, 7, 100, 0];
    let codes_host: Vec<u8> = (0..1000).map(|i| (i * 37 % 256) as u8).collect();
    let codes = DeviceBuffer::from_host(&stream, &codes_host).unwrap();
    let mut out = DeviceBuffer::<f64>::zeroed(&stream, codes_host.len()).unwrap();
    let config = LaunchConfig::for_len(codes_host.len(), 64);
    lookup::launch(
        &stream, config, &bytes, &weights, &offsets, &codes, &mut out,
    )
    .unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, &code) in codes_host.iter().enumerate() {
        let expected =
            bytes[code as usize] as f64 * weights[0] + weights[2] + offsets[i % 4] as f64;
        assert_eq!(got[i], expected, "{i}");
    }
}

/// Each launch carries its own table: launches queued back to back on two streams with
/// different tables each see theirs.
#[test]
fn concurrent_launches_keep_their_own_tables() {
    let gpu = test_device();
    let streams = [gpu.new_stream().unwrap(), gpu.new_stream().unwrap()];
    let n = 1 << 14;
    let host = random_f32(n, 5);
    let tables: Vec<[f32; 9]> = (0..8)
        .map(|t| std::array::from_fn(|k| (t * 9 + k) as f32 * 0.01))
        .collect();
    let inputs: Vec<DeviceBuffer<f32>> = streams
        .iter()
        .map(|s| DeviceBuffer::from_host(s, &host).unwrap())
        .collect();
    let mut outputs: Vec<Vec<DeviceBuffer<f32>>> = streams
        .iter()
        .map(|s| {
            (0..tables.len() / 2)
                .map(|_| DeviceBuffer::zeroed(s, n).unwrap())
                .collect()
        })
        .collect();
    let config = LaunchConfig::for_len(n, 256);
    for (t, taps) in tables.iter().enumerate() {
        let s = t % 2;
        convolve::launch(
            &streams[s],
            config,
            taps,
            &inputs[s],
            &mut outputs[s][t / 2],
        )
        .unwrap();
    }
    for (t, taps) in tables.iter().enumerate() {
        let s = t % 2;
        let got = outputs[s][t / 2].to_host(&streams[s]).unwrap();
        let expected = convolve_cpu(taps, &host);
        for i in (0..n).step_by(97) {
            assert!((got[i] - expected[i]).abs() <= 1e-5, "table {t} at {i}");
        }
    }
}

#[test]
fn table_kernels_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&convolve::KERNEL, &[]), (&lookup::KERNEL, &[])]);
}

/// Half the taps of a filter whose length is a constant outside the kernel, as the CUDA
/// samples size their `__constant__` arrays with a `#define`.
const RADIUS: usize = 3;
/// Its length.
const TAPS: usize = 2 * RADIUS + 1;

/// A symmetric filter over `x`, its taps a table sized by a named constant.
#[kernel]
fn convolve_named(#[constant] taps: &[f32; TAPS], x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        let mut acc = 0.0f32;
        for k in 0..TAPS {
            let j = i + k;
            if j >= RADIUS && j - RADIUS < x.len() {
                acc += taps[k] * x[j - RADIUS];
            }
        }
        y[i] = acc;
    }
}

#[test]
fn a_table_sized_by_a_named_constant() {
    assert_compiles_with_nvrtc(&[(&convolve_named::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let taps: [f32; TAPS] = [0.5, 1.0, 2.0, 4.0, 2.0, 1.0, 0.5];
    let x_host = random_f32(1000, 31);
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, x_host.len()).unwrap();
    let config = LaunchConfig::try_for_len(x_host.len(), 128).unwrap();
    convolve_named::launch(&stream, config, &taps, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for (i, got) in got.iter().enumerate() {
        let expected: f32 = (0..TAPS)
            .filter(|k| i + k >= RADIUS && i + k - RADIUS < x_host.len())
            .map(|k| taps[k] * x_host[i + k - RADIUS])
            .sum();
        assert!(
            (got - expected).abs() <= 1e-5 * (1.0 + expected.abs()),
            "{i}"
        );
    }
}

/// Neighbours a cell's stencil reads.
const NEIGHBOURS: usize = 5;

/// A stencil over a `width`-wide grid whose neighbours' offsets are a table of rows, `[dx, dy]`
/// each (Parboil's cutcp keeps its bins' offsets as `int3`s in `__constant__` memory), with
/// a weight per row in a second table; neighbours off the grid are skipped.
#[kernel]
fn stencil_rows(
    #[constant] offsets: &[[i32; 2]; NEIGHBOURS],
    #[constant] weights: &[f32; NEIGHBOURS],
    width: usize,
    x: &[f32],
    y: &mut [f32],
) {
    let i = global_idx().x;
    if i < y.len() {
        let (col, row) = ((i % width) as i32, (i / width) as i32);
        let mut acc = 0.0f32;
        for (k, [dx, dy]) in offsets.iter().copied().enumerate() {
            let (c, r) = (col + dx, row + dy);
            if c >= 0 && (c as usize) < width && r >= 0 && (r as usize) < x.len() / width {
                acc += weights[k] * x[r as usize * width + c as usize];
            }
        }
        y[i] = acc + offsets[offsets.len() - 1][1] as f32;
    }
}

#[test]
fn a_table_of_rows() {
    assert_compiles_with_nvrtc(&[(&stencil_rows::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let offsets = [[0, 0], [1, 0], [-1, 0], [0, 2], [0, -1]];
    let weights = [4.0, -1.0, -1.0, 0.5, -1.5];
    let (width, height) = (19usize, 13usize);
    let x_host = random_f32(width * height, 32);
    let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, x_host.len()).unwrap();
    let config = LaunchConfig::try_for_len(x_host.len(), 64).unwrap();
    stencil_rows::launch(&stream, config, &offsets, &weights, width, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for (i, got) in got.iter().enumerate() {
        let (col, row) = ((i % width) as i32, (i / width) as i32);
        let mut expected = -1.0f32;
        for (k, [dx, dy]) in offsets.iter().enumerate() {
            let (c, r) = (col + dx, row + dy);
            if (0..width as i32).contains(&c) && (0..height as i32).contains(&r) {
                expected += weights[k] * x_host[r as usize * width + c as usize];
            }
        }
        assert!(
            (got - expected).abs() <= 1e-5 * (1.0 + expected.abs()),
            "{i}: {got} against {expected}"
        );
    }
}
