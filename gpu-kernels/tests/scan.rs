//! Scans on whichever backend exists, against sequential Rust: sizes around the tile boundary
//! and many tiles (so the look-back runs), every operation, inclusive and exclusive.

use gpu_dsl_kernels::scan::{scan, ScanKind, ScanOp, ScanScratch, TILE};
use gpu_dsl_runtime::{test_device, DeviceBuffer};

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u32
        })
        .collect()
}

const SIZES: [usize; 8] = [0, 1, 2, TILE - 1, TILE, TILE + 1, 100_003, 1 << 20];

fn reference<T: Copy>(x: &[T], identity: T, kind: ScanKind, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = identity;
    x.iter()
        .map(|v| {
            let before = acc;
            acc = f(acc, *v);
            if kind == ScanKind::Inclusive {
                acc
            } else {
                before
            }
        })
        .collect()
}

#[test]
fn integer_scans_match_exactly() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut scratch = ScanScratch::<u32>::new(&stream, 1 << 20).unwrap();
    let mut scratch_i = ScanScratch::<i32>::new(&stream, 1 << 20).unwrap();
    for n in SIZES {
        let xh = random_u32(n, n as u64 + 1);
        let x = DeviceBuffer::from_host(&stream, &xh).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            scan(&stream, &x, &mut y, ScanOp::Sum, kind, &mut scratch).unwrap();
            let expected = reference(&xh, 0u32, kind, u32::wrapping_add);
            assert_eq!(y.to_host(&stream).unwrap(), expected, "sum n={n} {kind:?}");
        }
        let xi: Vec<i32> = xh.iter().map(|v| *v as i32).collect();
        let x = DeviceBuffer::from_host(&stream, &xi).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
        for (op, identity, f) in [
            (ScanOp::Min, i32::MAX, i32::min as fn(i32, i32) -> i32),
            (ScanOp::Max, i32::MIN, i32::max),
        ] {
            scan(&stream, &x, &mut y, op, ScanKind::Inclusive, &mut scratch_i).unwrap();
            let expected = reference(&xi, identity, ScanKind::Inclusive, f);
            assert_eq!(y.to_host(&stream).unwrap(), expected, "{op:?} n={n}");
        }
    }
}

#[test]
fn eight_byte_scans_match() {
    // 8-byte values do not fit beside their state in one word: the flag-and-fence path.
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut scratch = ScanScratch::<i64>::new(&stream, 1 << 20).unwrap();
    let mut scratch_f = ScanScratch::<f64>::new(&stream, 1 << 20).unwrap();
    for n in SIZES {
        // Above 2^32, so a value that lost its upper half would show.
        let xh: Vec<i64> = random_u32(n, n as u64 + 3)
            .iter()
            .map(|v| (*v as i64 - (1 << 31)) << 8)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &xh).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
        for (op, kind, identity, f) in [
            (
                ScanOp::Sum,
                ScanKind::Exclusive,
                0,
                i64::wrapping_add as fn(i64, i64) -> i64,
            ),
            (ScanOp::Min, ScanKind::Inclusive, i64::MAX, i64::min),
            (ScanOp::Max, ScanKind::Inclusive, i64::MIN, i64::max),
        ] {
            scan(&stream, &x, &mut y, op, kind, &mut scratch).unwrap();
            let expected = reference(&xh, identity, kind, f);
            assert_eq!(y.to_host(&stream).unwrap(), expected, "{op:?} n={n}");
        }
        // Multiples of 2^-10 whose sums stay below 2^42 add exactly in f64, in any order.
        let xf: Vec<f64> = xh.iter().map(|v| (*v >> 8) as f64 / 1024.0).collect();
        let x = DeviceBuffer::from_host(&stream, &xf).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
        scan(
            &stream,
            &x,
            &mut y,
            ScanOp::Sum,
            ScanKind::Inclusive,
            &mut scratch_f,
        )
        .unwrap();
        let expected = reference(&xf, 0.0, ScanKind::Inclusive, |a, b| a + b);
        assert_eq!(y.to_host(&stream).unwrap(), expected, "f64 sum n={n}");
    }
}

#[test]
fn float_sums_match_within_rounding() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut scratch = ScanScratch::<f32>::new(&stream, 1 << 20).unwrap();
    for n in SIZES {
        let xh: Vec<f32> = random_u32(n, 7)
            .iter()
            .map(|v| (*v % 1000) as f32 * 1e-3)
            .collect();
        let x = DeviceBuffer::from_host(&stream, &xh).unwrap();
        let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
        scan(
            &stream,
            &x,
            &mut y,
            ScanOp::Sum,
            ScanKind::Inclusive,
            &mut scratch,
        )
        .unwrap();
        let got = y.to_host(&stream).unwrap();
        let mut exact = 0.0f64;
        for i in 0..n {
            exact += xh[i] as f64;
            // Summation order differs from a sequential loop: relative error grows like
            // log(n) ulps at worst, far below 1e-5 here.
            assert!(
                (got[i] as f64 - exact).abs() <= 1e-5 * exact.max(1.0),
                "n={n} i={i}: {} vs {exact}",
                got[i]
            );
        }
    }
}

#[test]
fn too_little_scratch_is_an_error() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let mut scratch = ScanScratch::<u32>::new(&stream, TILE).unwrap();
    let x = DeviceBuffer::from_host(&stream, &vec![1u32; 3 * TILE]).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, 3 * TILE).unwrap();
    assert!(scan(
        &stream,
        &x,
        &mut y,
        ScanOp::Sum,
        ScanKind::Inclusive,
        &mut scratch
    )
    .is_err());
}

#[test]
fn instantiations_compile_with_nvrtc() {
    use gpu_dsl_runtime::{check_with_nvrtc, test_nvrtc, TemplateArg};
    if !test_nvrtc() {
        return;
    }
    for kernel in gpu_dsl_kernels::scan::KERNELS {
        // The last argument: 1 where the state and value share a word (4-byte types).
        for (ty, packed) in [
            (TemplateArg::of::<u32>(), 1),
            (TemplateArg::of::<i32>(), 1),
            (TemplateArg::of::<f32>(), 1),
            (TemplateArg::of::<f64>(), 0),
            (TemplateArg::of::<i64>(), 0),
        ] {
            for op in 0..3 {
                for arch in [(8, 0), (9, 0)] {
                    for checked in [false, true] {
                        let args = [ty, TemplateArg::Const(op), TemplateArg::Const(packed)];
                        check_with_nvrtc(kernel, &args, arch, checked)
                            .unwrap_or_else(|e| panic!("{} {ty:?} op {op}: {e}", kernel.name()));
                    }
                }
            }
        }
    }
}
