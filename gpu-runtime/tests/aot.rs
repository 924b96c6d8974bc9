//! Ahead-of-time bundles: built with NVRTC alone (no GPU), then registered and loaded on a GPU
//! without compiling. NVRTC tests skip where NVRTC is absent unless GPU_REQUIRE_NVRTC is set;
//! GPU tests print a skip without a device.

use gpu_dsl_runtime::aot::{self, Builder, ImageKind, Modes};
use gpu_dsl_runtime::{
    test_gpu, test_nvrtc, CacheConfig, DeviceBuffer, ElemType, Error, Kernel, KernelArg,
    LaunchConfig, ModuleOrigin, ParamKind, ScalarType, TemplateArg, TemplateParam,
};

/// `x[i] = a * x[i] + N` for the AOT tests only: its own source text, so no other test's
/// bundle or compile serves it.
static AOT_SCALE: Kernel = Kernel::__generated_generic(
    "aot_scale",
    "// aot test\n\
     template <typename T, unsigned long long N> __global__ void aot_scale(T a, T* x, \
     unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] = a * x[i] + (T)N; }",
    &[
        ParamKind::GenericScalar { param: 0 },
        ParamKind::GenericSlice {
            param: 0,
            mutable: true,
        },
    ],
    &[TemplateParam::Type, TemplateParam::Const],
    "tests/aot.rs",
    false,
);

static AOT_ADD_ONE: Kernel = Kernel::__generated(
    "aot_add_one",
    "aot_add_one",
    "// aot test\n\
     extern \"C\" __global__ void aot_add_one(float* x, unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] += 1.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

/// A kernel pinned to sm_90a, as one using wgmma is.
static AOT_PINNED: Kernel = Kernel::__generated(
    "aot_pinned",
    "aot_pinned",
    "// aot test\n\
     extern \"C\" __global__ void aot_pinned(float* x, unsigned long long x_len) { \
     if (x_len > 0 && threadIdx.x == 0) x[0] = 2.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
)
.__arch_specific(9, 0);

fn scale_args() -> [TemplateArg; 2] {
    [TemplateArg::of::<f32>(), TemplateArg::Const(7)]
}

#[test]
fn builder_compiles_plain_generic_and_pinned_kernels() {
    if !test_nvrtc() {
        return;
    }
    let bytes = Builder::new("test")
        .kernel(&AOT_ADD_ONE)
        .generic(&AOT_SCALE, &scale_args())
        .kernel(&AOT_PINNED)
        .modes(Modes::Both)
        .threads(2)
        .build()
        .expect("NVRTC compiles the bundle");
    let entries = aot::contents(&bytes).unwrap();
    let labels: Vec<&str> = entries.iter().map(|e| e.label).collect();
    assert_eq!(
        labels,
        [
            "aot_add_one (unchecked)",
            "aot_add_one (checked)",
            "aot_scale::<f32, 7> (unchecked)",
            "aot_scale::<f32, 7> (checked)",
            "aot_pinned (unchecked)",
            "aot_pinned (checked)",
        ]
    );
    for entry in &entries[..4] {
        let targets: Vec<(ImageKind, (u32, u32), bool)> = entry
            .images
            .iter()
            .map(|image| (image.kind, image.arch, image.arch_specific))
            .collect();
        assert_eq!(
            targets,
            [
                (ImageKind::Cubin, (8, 0), false),
                (ImageKind::Cubin, (9, 0), false),
                (ImageKind::Ptx, (9, 0), false),
            ],
            "{}",
            entry.label
        );
        for image in &entry.images {
            match image.kind {
                ImageKind::Cubin => assert_eq!(&image.bytes[..4], b"\x7fELF"),
                ImageKind::Ptx => {
                    let ptx = std::str::from_utf8(image.bytes).unwrap();
                    assert!(ptx.contains(".target sm_90"), "{}", entry.label);
                }
            }
        }
    }
    assert_eq!(entries[0].lowered_name, "");
    assert!(
        entries[2].lowered_name.contains("aot_scale"),
        "{}",
        entries[2].lowered_name
    );
    // The pinned kernel: its own sm_90a CUBIN, no PTX and no other architecture.
    for entry in &entries[4..] {
        assert_eq!(entry.images.len(), 1);
        assert_eq!(entry.images[0].kind, ImageKind::Cubin);
        assert_eq!(entry.images[0].arch, (9, 0));
        assert!(entry.images[0].arch_specific);
    }
    assert!(entries[1].checked && !entries[0].checked);
}

#[test]
fn builder_reports_bad_arguments() {
    if !test_nvrtc() {
        return;
    }
    // Template arguments that do not fit the kernel fail the build, naming the kernel.
    let err = Builder::new("test")
        .generic(&AOT_SCALE, &[TemplateArg::of::<f32>()])
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TemplateArgs {
                kernel: "aot_scale",
                ..
            }
        ),
        "{err}"
    );
    let err = Builder::new("test")
        .kernel(&AOT_ADD_ONE)
        .cubin_archs(&[(1, 0)])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("architecture 10"), "{err}");
}

#[test]
fn registered_bundle_serves_the_first_launch() {
    let Some(gpu) = test_gpu() else { return };
    if !test_nvrtc() {
        return;
    }
    let cc = gpu.compute_capability();
    let bytes = Builder::new("test")
        .kernel(&AOT_ADD_ONE)
        .generic(&AOT_SCALE, &scale_args())
        .cubin_archs(&[cc])
        .ptx_archs(&[])
        .build()
        .expect("NVRTC compiles the bundle");
    let before = gpu_dsl_runtime::compile_stats();
    let held = aot::register(Box::leak(bytes.into_boxed_slice())).unwrap();
    assert_eq!(held, 2);
    assert!(aot::registered_variants() >= 2);

    let off = CacheConfig::Disabled;
    let plain = gpu
        .precompile_variant(&AOT_ADD_ONE, &[], false, &off)
        .unwrap();
    assert_eq!(plain.origin, ModuleOrigin::AotCubin, "{plain}");
    let generic = gpu
        .precompile_variant(&AOT_SCALE, &scale_args(), false, &off)
        .unwrap();
    assert_eq!(generic.origin, ModuleOrigin::AotCubin, "{generic}");
    let after = gpu_dsl_runtime::compile_stats();
    assert_eq!(after.aot_cubin_loads - before.aot_cubin_loads, 2);

    let stream = gpu.default_stream();
    let host: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let config = LaunchConfig::for_len(host.len(), 256);
    stream
        .launch(&AOT_ADD_ONE, config, &[KernelArg::slice_mut(&mut x)])
        .unwrap();
    stream
        .launch_generic(
            &AOT_SCALE,
            &scale_args(),
            config,
            &[KernelArg::scalar(2.0f32), KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let expected: Vec<f32> = host.iter().map(|v| 2.0 * (v + 1.0) + 7.0).collect();
    assert_eq!(x.to_host(&stream).unwrap(), expected);
    // The checked build was not in the bundle: compiled at run time, and listed as such.
    let checked = gpu
        .precompile_variant(&AOT_ADD_ONE, &[], true, &off)
        .unwrap();
    assert_eq!(checked.origin, ModuleOrigin::Nvrtc);
    assert!(aot::compiled_at_run_time()
        .iter()
        .any(|label| label == "`aot_add_one` (checked)"));
}

#[test]
fn damaged_bundles_are_refused_at_registration() {
    let err = aot::register(b"GPUAOT\0\x01\x02\0\0\0").unwrap_err();
    assert!(matches!(err, Error::AotBundle { .. }), "{err}");
    let err = aot::register(b"not a bundle").unwrap_err();
    assert!(err.to_string().contains("magic"), "{err}");
}
