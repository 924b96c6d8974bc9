//! What several test files of the kernel library check the same way.

use gpu_dsl_runtime::{check_with_nvrtc, test_nvrtc, Error, Kernel, TemplateArg};

/// `all_kernels()` lists exactly the kernels of `all` that take no template arguments, and,
/// where NVRTC is installed, every instantiation compiles without a warning for sm_80 and
/// sm_90, checked and unchecked; a kernel tied to one architecture (wgmma: sm_90a) compiles
/// for it and is refused for the other.
pub fn assert_instantiations_compile(all: &[(&'static Kernel, Vec<TemplateArg>)]) {
    let listed: Vec<&str> = gpu_dsl_kernels::all_kernels()
        .iter()
        .map(|k| k.name())
        .collect();
    for (kernel, args) in all {
        assert_eq!(
            listed.contains(&kernel.name()),
            args.is_empty(),
            "{}",
            kernel.name()
        );
    }
    if !test_nvrtc() {
        return;
    }
    for (kernel, args) in all {
        for arch in [(8, 0), (9, 0)] {
            if kernel.arch_specific().is_some_and(|only| only != arch) {
                assert!(matches!(
                    check_with_nvrtc(kernel, args, arch, false),
                    Err(Error::ArchSpecificKernel { .. })
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
