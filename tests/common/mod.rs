//! Helpers shared by the integration tests.
#![allow(dead_code)]

use gpu_dsl::runtime::{check_with_nvrtc, test_nvrtc, Kernel, TemplateArg};

/// A deterministic pseudo-random sequence (xorshift) in [-1, 1), so failures reproduce.
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
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

/// Every kernel (instantiated with `template_args`) compiles with NVRTC, without a warning, for
/// sm_80 and sm_90, checked and unchecked; where NVRTC is not installed this says so and passes.
/// A kernel limited to one compute capability (wgmma's sm_90a) is refused for the other.
pub fn assert_compiles_with_nvrtc(kernels: &[(&Kernel, &[TemplateArg])]) {
    if !test_nvrtc() {
        return;
    }
    for (kernel, args) in kernels {
        for arch in [(8, 0), (9, 0)] {
            if kernel.arch_specific().is_some_and(|only| only != arch) {
                assert!(matches!(
                    check_with_nvrtc(kernel, args, arch, false),
                    Err(gpu_dsl::runtime::Error::ArchSpecificKernel { .. })
                ));
                continue;
            }
            for checked in [false, true] {
                check_with_nvrtc(kernel, args, arch, checked).unwrap_or_else(|e| {
                    panic!(
                        "{}{args:?} (sm_{}{}, checked {checked}): {e}",
                        kernel.name(),
                        arch.0,
                        arch.1
                    )
                });
            }
        }
    }
}

/// Both backends: the CPU always, and the best device too when it is a GPU (saying so when
/// there is none, so a CPU-only pass is visible).
pub fn backends() -> Vec<gpu_dsl::runtime::Gpu> {
    use gpu_dsl::runtime::{test_device, Backend, Gpu};
    let best = test_device();
    if best.backend() == Backend::Cuda {
        vec![Gpu::cpu(), best]
    } else {
        eprintln!("skipped the GPU half: no CUDA device");
        vec![Gpu::cpu()]
    }
}

/// `ours` equals `expected` element by element within `tolerance`, relative to `1 + |expected|`.
pub fn close(ours: &[f32], expected: &[f32], tolerance: f32) {
    assert_eq!(ours.len(), expected.len());
    for (i, (a, b)) in ours.iter().zip(expected).enumerate() {
        assert!(
            (a - b).abs() <= tolerance * (1.0 + b.abs()),
            "element {i}: {a} against {b}"
        );
    }
}

/// The message of the kernel panic `err` must be; any other error fails the test.
pub fn panic_message(err: &gpu_dsl::runtime::Error) -> &str {
    match err {
        gpu_dsl::runtime::Error::KernelPanic { message, .. } => message,
        other => panic!("expected a kernel panic, got {other}"),
    }
}
