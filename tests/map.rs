//! The map API: built-in element-wise operations and `elementwise!` for user-defined ones, on
//! whichever backend exists, at sizes that exercise the vector path and its scalar tail.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::kernels::map;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

gpu_dsl::kernels::elementwise! {
    /// `out = a * x + b * y`, with a clamp: a user-defined operation.
    fn blend(a: f32, b: f32; x: f32, y: f32) -> f32 {
        (a * x + b * y).clamp(-1.0, 1.0)
    }
}

gpu_dsl::kernels::elementwise! {
    /// Integer and mixed types work too.
    pub fn mix(shift: u32; x: u32, y: i64) -> i64 {
        (x >> shift) as i64 - y
    }
}

const SIZES: [usize; 6] = [0, 1, 3, 4, 1001, 1 << 16];

#[test]
fn built_in_operations_match_the_cpu() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in SIZES {
        let xh = random_f32(n, 1);
        let yh = random_f32(n, 2);
        let x = DeviceBuffer::from_host(&stream, &xh).unwrap();
        let y = DeviceBuffer::from_host(&stream, &yh).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();

        let mut ya = DeviceBuffer::from_host(&stream, &yh).unwrap();
        map::axpy(&stream, 1.5, &x, &mut ya).unwrap();
        let got = ya.to_host(&stream).unwrap();
        for i in 0..n {
            assert_eq!(got[i], 1.5f32.mul_add(xh[i], yh[i]), "axpy n={n} i={i}");
        }
        map::add(&stream, &x, &y, &mut out).unwrap();
        assert_eq!(
            out.to_host(&stream).unwrap(),
            (0..n).map(|i| xh[i] + yh[i]).collect::<Vec<_>>()
        );
        map::mul(&stream, &x, &y, &mut out).unwrap();
        assert_eq!(
            out.to_host(&stream).unwrap(),
            (0..n).map(|i| xh[i] * yh[i]).collect::<Vec<_>>()
        );

        let mut z = DeviceBuffer::from_host(&stream, &xh).unwrap();
        map::scale(&stream, -2.0, &mut z).unwrap();
        map::relu(&stream, &mut z).unwrap();
        map::sigmoid(&stream, &mut z).unwrap();
        let got = z.to_host(&stream).unwrap();
        for i in 0..n {
            let expected = 1.0 / (1.0 + (-(-2.0 * xh[i]).max(0.0)).exp());
            assert!(
                (got[i] - expected).abs() < 1e-6,
                "unary n={n} i={i}: {} vs {expected}",
                got[i]
            );
        }
    }
}

#[test]
fn elementwise_defines_kernels_without_index_code() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in SIZES {
        let xh = random_f32(n, 3);
        let yh = random_f32(n, 4);
        let x = DeviceBuffer::from_host(&stream, &xh).unwrap();
        let y = DeviceBuffer::from_host(&stream, &yh).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        blend(&stream, 0.7, 0.9, &x, &y, &mut out).unwrap();
        let got = out.to_host(&stream).unwrap();
        for i in 0..n {
            let expected = (0.7 * xh[i] + 0.9 * yh[i]).clamp(-1.0, 1.0);
            assert!((got[i] - expected).abs() <= 1e-6, "blend n={n} i={i}");
        }
        let xu: Vec<u32> = xh.iter().map(|v| (v.abs() * 1e9) as u32).collect();
        let yi: Vec<i64> = yh.iter().map(|v| (v * 1e12) as i64).collect();
        let xu_d = DeviceBuffer::from_host(&stream, &xu).unwrap();
        let yi_d = DeviceBuffer::from_host(&stream, &yi).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        mix(&stream, 3, &xu_d, &yi_d, &mut out).unwrap();
        let expected: Vec<i64> = (0..n).map(|i| (xu[i] >> 3) as i64 - yi[i]).collect();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
    let short = DeviceBuffer::from_host(&stream, &[1.0f32]).unwrap();
    let long = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0]).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 2).unwrap();
    let error = blend(&stream, 1.0, 1.0, &short, &long, &mut out).unwrap_err();
    assert!(error.to_string().contains("blend: x and out"), "{error}");
}

#[test]
fn map_kernels_compile_with_nvrtc() {
    let kernels = gpu_dsl::kernels::all_kernels();
    let cases: Vec<(&gpu_dsl::runtime::Kernel, &[gpu_dsl::runtime::TemplateArg])> =
        kernels.iter().map(|k| (*k, &[][..])).collect();
    assert_compiles_with_nvrtc(&cases);
}
