//! The stencils against plain Rust references: every built-in weight set, both boundary
//! policies, sizes that are not multiples of the tiles; the errors of bad input; NVRTC.
//!
//! The kernels sum each output's products in a fixed order (row by row, left to right), and
//! the references below sum the same products in the same order, so on the CPU backend the
//! results are equal bit for bit. On a GPU the compiler contracts `acc + w * x` into one FMA,
//! which rounds once instead of twice: there the comparison allows 1e-5 of the sum of the
//! products' magnitudes (a relative bound on the result itself would fail where the products
//! cancel, as they do under edge detection).

use gpu_dsl_kernels::stencil::{
    convolve1d, convolve2d, jacobi5, Boundary, DeviceWeights, Weights, Weights1d,
};
use gpu_dsl_runtime::{
    check_with_nvrtc, test_device, test_nvrtc, Backend, DeviceBuffer, Error, Gpu,
};

/// Image sizes (width, height): single pixels, single rows and columns, and sizes that leave
/// partial 32×32 tiles.
const SIZES: [(usize, usize); 6] = [(1, 1), (1, 7), (7, 1), (13, 9), (100, 37), (257, 129)];

/// Deterministic values in [-1, 1) (xorshift), so failures reproduce.
fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// The value a stencil reads at (x, y) of a `width`×`height` image under `boundary`.
fn pixel(image: &[f32], width: usize, height: usize, x: i64, y: i64, boundary: Boundary) -> f32 {
    let inside = (0..width as i64).contains(&x) && (0..height as i64).contains(&y);
    if !inside && boundary == Boundary::Zero {
        return 0.0;
    }
    let x = x.clamp(0, width as i64 - 1) as usize;
    let y = y.clamp(0, height as i64 - 1) as usize;
    image[y * width + x]
}

/// The 2D stencil in the kernel's order, and for each output the sum of its products'
/// magnitudes (the scale of its rounding error).
fn convolve2d_reference(
    image: &[f32],
    width: usize,
    height: usize,
    weights: &Weights,
    boundary: Boundary,
) -> (Vec<f32>, Vec<f32>) {
    let (r, side) = (weights.radius() as i64, weights.side());
    let mut out = Vec::with_capacity(image.len());
    let mut scale = Vec::with_capacity(image.len());
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let (mut acc, mut magnitude) = (0.0f32, 0.0f32);
            for dy in 0..side {
                for dx in 0..side {
                    let w = weights.values()[dy * side + dx];
                    let v = pixel(
                        image,
                        width,
                        height,
                        x + dx as i64 - r,
                        y + dy as i64 - r,
                        boundary,
                    );
                    acc += w * v;
                    magnitude += (w * v).abs();
                }
            }
            out.push(acc);
            scale.push(magnitude);
        }
    }
    (out, scale)
}

/// Fails unless `got` equals `expected` (bit for bit on the CPU backend, within 1e-5 of
/// `scale` on a GPU; see the file's comment).
fn assert_close(gpu: &Gpu, got: &[f32], expected: &[f32], scale: &[f32], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    let exact = gpu.backend() == Backend::Cpu;
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let ok = if exact {
            g.to_bits() == e.to_bits() || (*g == 0.0 && *e == 0.0)
        } else {
            (g - e).abs() <= 1e-5 * scale[i] + f32::MIN_POSITIVE
        };
        assert!(ok, "{what}: element {i}: got {g}, expected {e}");
    }
}

/// Every built-in weight set, and two user matrices that tell rows from columns.
fn weight_sets() -> Vec<(&'static str, Weights)> {
    let asymmetric3 = Weights::try_from([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    let ramp5: Vec<f32> = (0..25).map(|i| i as f32 * 0.25 - 3.0).collect();
    vec![
        ("box_blur3", Weights::box_blur3()),
        ("gaussian_blur5", Weights::gaussian_blur5()),
        ("sharpen3", Weights::sharpen3()),
        ("laplacian3", Weights::laplacian3()),
        ("sobel_x3", Weights::sobel_x3()),
        ("sobel_y3", Weights::sobel_y3()),
        ("asymmetric3", asymmetric3.unwrap()),
        ("ramp5", Weights::new(&ramp5).unwrap()),
    ]
}

#[test]
fn convolve2d_matches_the_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for (name, weights) in weight_sets() {
        let on_device = weights.upload(&stream).unwrap();
        for (s, &(width, height)) in SIZES.iter().enumerate() {
            let image = random_f32(width * height, s as u64 + 1);
            let input = DeviceBuffer::from_host(&stream, &image).unwrap();
            let mut output = DeviceBuffer::zeroed(&stream, image.len()).unwrap();
            for boundary in [Boundary::Clamp, Boundary::Zero] {
                convolve2d(
                    &stream,
                    &input,
                    width,
                    height,
                    &on_device,
                    boundary,
                    &mut output,
                )
                .unwrap();
                let got = output.to_host(&stream).unwrap();
                let (expected, scale) =
                    convolve2d_reference(&image, width, height, &weights, boundary);
                let what = format!("{name} {width}x{height} {boundary:?}");
                assert_close(&gpu, &got, &expected, &scale, &what);
            }
        }
    }
}

/// Known values, independent of the reference: on the ramp v = 3x + 2y the Sobel filters
/// measure 8·3 and 8·2, the Laplacian 0, and a blur of a constant image is that constant.
#[test]
fn filters_measure_what_they_are_named_for() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (width, height) = (40, 35);
    let ramp: Vec<f32> = (0..width * height)
        .map(|i| (3 * (i % width) + 2 * (i / width)) as f32)
        .collect();
    let input = DeviceBuffer::from_host(&stream, &ramp).unwrap();
    let mut output = DeviceBuffer::zeroed(&stream, ramp.len()).unwrap();
    let mut run = |weights: Weights, input: &DeviceBuffer<f32>| {
        let weights = weights.upload(&stream).unwrap();
        convolve2d(
            &stream,
            input,
            width,
            height,
            &weights,
            Boundary::Clamp,
            &mut output,
        )
        .unwrap();
        output.to_host(&stream).unwrap()
    };
    let interior = |i: usize| {
        let (x, y) = (i % width, i / width);
        x > 0 && y > 0 && x + 1 < width && y + 1 < height
    };
    for (weights, expected) in [
        (Weights::sobel_x3(), 24.0),
        (Weights::sobel_y3(), 16.0),
        (Weights::laplacian3(), 0.0),
    ] {
        let name = format!("{weights:?}");
        for (i, v) in run(weights, &input).into_iter().enumerate() {
            if interior(i) {
                assert_eq!(v, expected, "{name} at {i}");
            }
        }
    }
    let constant = DeviceBuffer::from_host(&stream, &vec![0.75f32; ramp.len()]).unwrap();
    for weights in [Weights::box_blur3(), Weights::gaussian_blur5()] {
        for v in run(weights, &constant) {
            assert!((v - 0.75).abs() < 1e-6, "blur of a constant: {v}");
        }
    }
}

#[test]
fn convolve1d_matches_the_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for radius in [0usize, 1, 2, 5, 8] {
        let taps: Vec<f32> = random_f32(2 * radius + 1, 100 + radius as u64);
        let weights = Weights1d::new(&taps).unwrap();
        assert_eq!(weights.radius(), radius);
        let on_device = weights.upload(&stream).unwrap();
        for n in [1usize, 2, 7, 255, 256, 257, 1000, 4099] {
            let signal = random_f32(n, n as u64);
            let input = DeviceBuffer::from_host(&stream, &signal).unwrap();
            let mut output = DeviceBuffer::zeroed(&stream, n).unwrap();
            for boundary in [Boundary::Clamp, Boundary::Zero] {
                convolve1d(&stream, &input, &on_device, boundary, &mut output).unwrap();
                let got = output.to_host(&stream).unwrap();
                let (mut expected, mut scale) = (Vec::new(), Vec::new());
                for x in 0..n as i64 {
                    let (mut acc, mut magnitude) = (0.0f32, 0.0f32);
                    for (k, w) in taps.iter().enumerate() {
                        let v = pixel(&signal, n, 1, x + k as i64 - radius as i64, 0, boundary);
                        acc += w * v;
                        magnitude += (w * v).abs();
                    }
                    expected.push(acc);
                    scale.push(magnitude);
                }
                let what = format!("radius {radius}, n {n}, {boundary:?}");
                assert_close(&gpu, &got, &expected, &scale, &what);
            }
        }
    }
}

/// Widths that are multiples of 4 take the 16-byte kernel, others the scalar one: both, with
/// 4-wide images whose single vector touches both side edges. The Jacobi step adds four values
/// and multiplies by 0.25: nothing to contract, so it is exact on every backend.
#[test]
fn jacobi5_matches_the_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let vector_widths = [
        (4, 1),
        (4, 4),
        (8, 3),
        (64, 5),
        (100, 37),
        (1000, 3),
        (260, 130),
    ];
    for (s, &(width, height)) in SIZES.iter().chain(&vector_widths).enumerate() {
        let grid = random_f32(width * height, 50 + s as u64);
        let input = DeviceBuffer::from_host(&stream, &grid).unwrap();
        let mut output = DeviceBuffer::zeroed(&stream, grid.len()).unwrap();
        for boundary in [Boundary::Clamp, Boundary::Zero] {
            jacobi5(&stream, &input, width, height, boundary, &mut output).unwrap();
            let got = output.to_host(&stream).unwrap();
            for y in 0..height as i64 {
                for x in 0..width as i64 {
                    let at =
                        |dx: i64, dy: i64| pixel(&grid, width, height, x + dx, y + dy, boundary);
                    let expected = 0.25 * (at(0, -1) + at(0, 1) + at(1, 0) + at(-1, 0));
                    let i = y as usize * width + x as usize;
                    assert_eq!(
                        got[i], expected,
                        "{width}x{height} {boundary:?} at ({x}, {y})"
                    );
                }
            }
        }
    }
}

/// Repeated Jacobi steps with ping-pong buffers relax towards the mean under Clamp (no flux
/// through the edges) and towards 0 under Zero (a cold border).
#[test]
fn jacobi5_iterations_relax() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (width, height) = (16, 12);
    let start: Vec<f32> = (0..width * height).map(|i| (i % 5) as f32).collect();
    let spread = |v: &[f32]| {
        let max = v.iter().cloned().fold(f32::MIN, f32::max);
        let min = v.iter().cloned().fold(f32::MAX, f32::min);
        (min, max)
    };
    for boundary in [Boundary::Clamp, Boundary::Zero] {
        let mut a = DeviceBuffer::from_host(&stream, &start).unwrap();
        let mut b = DeviceBuffer::zeroed(&stream, start.len()).unwrap();
        for _ in 0..200 {
            jacobi5(&stream, &a, width, height, boundary, &mut b).unwrap();
            std::mem::swap(&mut a, &mut b);
        }
        let (min, max) = spread(&a.to_host(&stream).unwrap());
        match boundary {
            Boundary::Clamp => assert!(max - min < 0.5, "{boundary:?}: {min}..{max}"),
            Boundary::Zero => assert!(max < 0.5 && min >= 0.0, "{boundary:?}: {min}..{max}"),
        }
    }
}

#[test]
fn weights_are_validated() {
    for bad in [&[1.0f32; 8][..], &[1.0; 10], &[1.0; 49], &[]] {
        let error = Weights::new(bad).unwrap_err();
        assert!(matches!(error, Error::InvalidLaunch(_)), "{error}");
        assert!(error.to_string().contains("3×3 or 5×5"), "{error}");
    }
    let mut nan = [0.0f32; 9];
    nan[4] = f32::NAN;
    let error = Weights::new(&nan).unwrap_err();
    assert!(error.to_string().contains("weight 4 is NaN"), "{error}");
    let error = Weights::try_from([[f32::INFINITY; 5]; 5]).unwrap_err();
    assert!(error.to_string().contains("finite"), "{error}");
    for bad in [&[1.0f32; 2][..], &[1.0; 19], &[]] {
        let error = Weights1d::new(bad).unwrap_err();
        assert!(matches!(error, Error::InvalidLaunch(_)), "{error}");
    }
    assert!(Weights1d::new(&[f32::NAN]).is_err());
    assert_eq!(Weights1d::new(&[0.5; 17]).unwrap().radius(), 8);

    let rows = [[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]];
    assert_eq!(Weights::try_from(rows).unwrap(), Weights::sharpen3());
    let gaussian = Weights::gaussian_blur5();
    assert_eq!((gaussian.radius(), gaussian.side()), (2, 5));
    assert_eq!(gaussian.values()[12], 36.0 / 256.0);
    assert_eq!(gaussian.values().iter().sum::<f32>(), 1.0);
    for weights in [Weights::sharpen3(), Weights::box_blur3()] {
        assert!((weights.values().iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    for weights in [
        Weights::laplacian3(),
        Weights::sobel_x3(),
        Weights::sobel_y3(),
    ] {
        assert_eq!(weights.values().iter().sum::<f32>(), 0.0);
    }
}

/// Runs `f` and returns its error, for the cases that must fail.
fn error_of(f: impl FnOnce() -> gpu_dsl_runtime::Result<()>) -> Error {
    f().expect_err("bad input must be an error")
}

#[test]
fn bad_images_are_errors() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let weights = Weights::box_blur3().upload(&stream).unwrap();
    let input = DeviceBuffer::from_host(&stream, &[1.0f32; 12]).unwrap();
    let mut output = DeviceBuffer::<f32>::zeroed(&stream, 12).unwrap();
    let mut short = DeviceBuffer::<f32>::zeroed(&stream, 11).unwrap();
    let run2d = |w: usize, h: usize, out: &mut DeviceBuffer<f32>, weights: &DeviceWeights| {
        let conv = convolve2d(&stream, &input, w, h, weights, Boundary::Clamp, out);
        let jacobi = jacobi5(&stream, &input, w, h, Boundary::Zero, out);
        [conv.expect_err("convolve2d"), jacobi.expect_err("jacobi5")]
    };
    // width × height disagrees with the input, then with the output.
    for error in run2d(5, 2, &mut output, &weights) {
        assert!(
            matches!(
                error,
                Error::LengthMismatch {
                    expected: 10,
                    found: 12,
                    ..
                }
            ),
            "{error}"
        );
    }
    for error in run2d(4, 3, &mut short, &weights) {
        assert!(
            matches!(
                error,
                Error::LengthMismatch {
                    expected: 12,
                    found: 11,
                    ..
                }
            ),
            "{error}"
        );
    }
    for (w, h) in [(0, 12), (12, 0), (0, 0)] {
        for error in run2d(w, h, &mut output, &weights) {
            assert!(matches!(error, Error::InvalidLaunch(_)), "{error}");
            assert!(error.to_string().contains("at least 1"), "{error}");
        }
    }
    for error in run2d(usize::MAX / 2, 3, &mut output, &weights) {
        assert!(error.to_string().contains("overflows"), "{error}");
    }

    let weights1d = Weights1d::new(&[1.0, 2.0, 1.0])
        .unwrap()
        .upload(&stream)
        .unwrap();
    let error = error_of(|| convolve1d(&stream, &input, &weights1d, Boundary::Zero, &mut short));
    assert!(
        matches!(
            error,
            Error::LengthMismatch {
                expected: 12,
                found: 11,
                ..
            }
        ),
        "{error}"
    );
    let empty = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    let mut empty_out = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
    let error =
        error_of(|| convolve1d(&stream, &empty, &weights1d, Boundary::Zero, &mut empty_out));
    assert!(matches!(error, Error::InvalidLaunch(_)), "{error}");
}

#[test]
fn images_taller_than_the_grid_are_errors() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    // One column of 2^19 rows: the scalar Jacobi kernel covers 8 rows a block, so its grid
    // would need 65536 blocks along y, one over the limit.
    let height = 1 << 19;
    let input = DeviceBuffer::<f32>::zeroed(&stream, height).unwrap();
    let mut output = DeviceBuffer::<f32>::zeroed(&stream, height).unwrap();
    let error = error_of(|| jacobi5(&stream, &input, 1, height, Boundary::Zero, &mut output));
    match error {
        Error::InvalidLaunch(message) => {
            assert!(
                message.contains("grid y dimension of 65536 blocks"),
                "{message}"
            )
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
}

/// The kernels of `gpu_dsl_kernels::stencil`.
const STENCIL_KERNELS: [&str; 4] = [
    "convolve2d_f32",
    "convolve1d_f32",
    "jacobi5_vec4_f32",
    "jacobi5_f32",
];

/// Every kernel of the module compiles with NVRTC for sm_80 and sm_90, checked and unchecked,
/// without a warning.
#[test]
fn stencil_kernels_compile_with_nvrtc() {
    if !test_nvrtc() {
        return;
    }
    let kernels = gpu_dsl_kernels::all_kernels();
    let stencils: Vec<_> = kernels
        .iter()
        .filter(|k| STENCIL_KERNELS.contains(&k.name()))
        .collect();
    assert_eq!(
        stencils.len(),
        STENCIL_KERNELS.len(),
        "all_kernels() lists the stencil kernels"
    );
    for kernel in stencils {
        for arch in [(8, 0), (9, 0)] {
            for checked in [false, true] {
                check_with_nvrtc(kernel, &[], arch, checked).unwrap_or_else(|e| {
                    panic!(
                        "{} (sm_{}{}, checked {checked}): {e}",
                        kernel.name(),
                        arch.0,
                        arch.1
                    )
                });
            }
        }
    }
}
