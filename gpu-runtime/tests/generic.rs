//! Generic kernels: C++ templates instantiated at launch. NVRTC-only tests run wherever NVRTC
//! is installed; GPU tests print a skip without a device.

use gpu_dsl_runtime::{
    compile_to_ptx, compile_to_ptx_generic, test_gpu, test_nvrtc, CacheConfig, DeviceBuffer,
    ElemType, Error, Float, Kernel, KernelArg, LaunchConfig, ModuleOrigin, ParamKind, Scalar,
    ScalarType, TemplateArg, TemplateParam,
};

/// `x[i] = a * x[i] + N`, generic over the element type and a const.
static SCALE: Kernel = Kernel::__generated_generic(
    "scale",
    "template <typename T, unsigned long long N> __global__ void scale(T a, T* __restrict__ x, \
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
    "tests/generic.rs",
    false,
);

/// Same code as SCALE but its own source text, so only the disk-cache test compiles it.
static SCALE_DISK: Kernel = Kernel::__generated_generic(
    "scale",
    "// disk cache test\n\
     template <typename T, unsigned long long N> __global__ void scale(T a, T* __restrict__ x, \
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
    "tests/generic.rs",
    false,
);

static PLAIN: Kernel = Kernel::__generated(
    "plain",
    "plain",
    "extern \"C\" __global__ void plain(float* x, unsigned long long x_len) { \
     if (x_len > 0 && threadIdx.x == 0) x[0] = 1.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

fn f32_256() -> [TemplateArg; 2] {
    [TemplateArg::of::<f32>(), TemplateArg::Const(256)]
}

fn f64_128() -> [TemplateArg; 2] {
    [TemplateArg::of::<f64>(), TemplateArg::Const(128)]
}

fn template_reason<T: std::fmt::Debug>(result: gpu_dsl_runtime::Result<T>) -> String {
    match result {
        Err(Error::TemplateArgs { reason, .. }) => reason,
        other => panic!("expected Error::TemplateArgs, got {other:?}"),
    }
}

#[test]
fn two_instantiations_have_two_lowered_names() {
    if !test_nvrtc() {
        return;
    }
    let a = compile_to_ptx_generic(&SCALE, &f32_256(), (9, 0)).unwrap();
    let b = compile_to_ptx_generic(&SCALE, &f64_128(), (9, 0)).unwrap();
    assert_eq!(a.name_expression, "scale<float, 256ULL>");
    assert_eq!(b.name_expression, "scale<double, 128ULL>");
    assert_ne!(a.lowered_name, b.lowered_name);
    for inst in [&a, &b] {
        assert!(
            inst.lowered_name.starts_with("_Z5scaleI"),
            "{}",
            inst.lowered_name
        );
        assert!(
            inst.ptx.contains(&format!(".entry {}", inst.lowered_name)),
            "{}",
            inst.ptx
        );
    }
    assert!(a.ptx.contains(".f32") && b.ptx.contains(".f64"));
    eprintln!("lowered: {} and {}", a.lowered_name, b.lowered_name);
}

#[test]
fn wrong_template_arguments_are_errors_before_nvrtc() {
    let r = template_reason(compile_to_ptx_generic(
        &SCALE,
        &[TemplateArg::of::<f32>()],
        (9, 0),
    ));
    assert!(r.contains("takes 2 template argument(s)"), "{r}");
    let r = template_reason(compile_to_ptx_generic(
        &SCALE,
        &[TemplateArg::Const(1), TemplateArg::Const(2)],
        (9, 0),
    ));
    assert!(r.contains("argument 0 must be a type"), "{r}");
    let r = template_reason(compile_to_ptx(&SCALE, (9, 0)));
    assert!(r.contains("launch_generic"), "{r}");
    let r = template_reason(compile_to_ptx_generic(&PLAIN, &[], (9, 0)));
    assert!(r.contains("not generic"), "{r}");
}

fn scale_matches_cpu<T>(args: [TemplateArg; 2], a: T, to_t: fn(f64) -> T)
where
    T: Float + PartialEq + std::fmt::Debug,
{
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let n = 10_001;
    let TemplateArg::Const(offset) = args[1] else {
        unreachable!()
    };
    // Quarters times 3 plus an integer are exact in f32 and f64, so FMA contraction on the
    // device cannot make the results differ from the CPU's.
    let host: Vec<T> = (0..n).map(|k| to_t(k as f64 * 0.25)).collect();
    let mut x = DeviceBuffer::from_host(&stream, &host).unwrap();
    stream
        .launch_generic(
            &SCALE,
            &args,
            LaunchConfig::for_len(n, 256),
            &[KernelArg::scalar(a), KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let expected: Vec<T> = (0..n)
        .map(|k| to_t(3.0 * (k as f64 * 0.25) + offset as f64))
        .collect();
    assert_eq!(x.to_host(&stream).unwrap(), expected, "{}", T::TYPE);
}

#[test]
fn launch_for_f32_and_f64_matches_the_cpu() {
    scale_matches_cpu::<f32>(f32_256(), 3.0, |v| v as f32);
    scale_matches_cpu::<f64>(f64_128(), 3.0, |v| v);
}

#[test]
fn wrong_template_arguments_at_launch() {
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let mut x64 = DeviceBuffer::<f64>::zeroed(&stream, 4).unwrap();
    let config = LaunchConfig::for_len(4, 32);

    let r = template_reason(stream.launch_generic(
        &SCALE,
        &[TemplateArg::of::<f32>()],
        config,
        &[KernelArg::scalar(1.0f32), KernelArg::slice_mut(&mut x)],
    ));
    assert!(r.contains("takes 2"), "{r}");
    let r = template_reason(stream.launch_generic(
        &SCALE,
        &[TemplateArg::Const(4), TemplateArg::of::<f32>()],
        config,
        &[KernelArg::scalar(1.0f32), KernelArg::slice_mut(&mut x)],
    ));
    assert!(r.contains("must be a type"), "{r}");
    let r = template_reason(stream.launch(
        &SCALE,
        config,
        &[KernelArg::scalar(1.0f32), KernelArg::slice_mut(&mut x)],
    ));
    assert!(r.contains("launch_generic"), "{r}");
    let r = template_reason(stream.launch_generic(
        &PLAIN,
        &[],
        config,
        &[KernelArg::slice_mut(&mut x)],
    ));
    assert!(r.contains("not generic"), "{r}");

    // Arguments are checked against the instantiated parameters.
    match stream.launch_generic(
        &SCALE,
        &f32_256(),
        config,
        &[KernelArg::scalar(1.0f32), KernelArg::slice_mut(&mut x64)],
    ) {
        Err(Error::ArgumentMismatch {
            index,
            expected,
            found,
            ..
        }) => assert_eq!(
            (index, expected.as_str(), found.as_str()),
            (1, "&mut [f32]", "&mut [f64]")
        ),
        other => panic!("expected ArgumentMismatch, got {other:?}"),
    }
    stream.synchronize().unwrap();
}

#[test]
fn instantiations_compile_once_and_come_back_from_disk() {
    let Some(gpu) = test_gpu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheConfig::Dir(dir.path().join("kernels"));
    let compile = |args: &[TemplateArg]| {
        gpu.precompile_variant(&SCALE_DISK, args, false, &cache)
            .unwrap()
    };

    assert_eq!(compile(&f32_256()).origin, ModuleOrigin::Nvrtc);
    assert_eq!(compile(&f64_128()).origin, ModuleOrigin::Nvrtc);
    assert_eq!(compile(&f32_256()).origin, ModuleOrigin::MemoryCache);
    assert_eq!(
        compile(&[TemplateArg::of::<u64>(), TemplateArg::Const(7)]).origin,
        ModuleOrigin::Nvrtc
    );
    // usize and u64 are both `unsigned long long`: the same code, so the same module.
    assert_eq!(
        compile(&[TemplateArg::of::<usize>(), TemplateArg::Const(7)]).origin,
        ModuleOrigin::MemoryCache
    );
    let entries = std::fs::read_dir(dir.path().join("kernels"))
        .unwrap()
        .count();
    assert_eq!(entries, 3, "one disk entry per instantiation");

    gpu.forget_compiled(&SCALE_DISK);
    let disk = compile(&f64_128());
    assert_eq!(disk.origin, ModuleOrigin::DiskCache, "{disk}");

    // The function found through the stored lowered name runs.
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::from_host(&stream, &[1.0f64, 2.0]).unwrap();
    stream
        .launch_generic(
            &SCALE_DISK,
            &f64_128(),
            LaunchConfig::for_len(2, 32),
            &[KernelArg::scalar(2.0f64), KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), [130.0, 132.0]);
}

#[test]
fn marker_traits_bound_generated_launchers() {
    fn type_arg<T: gpu_dsl_runtime::Number>() -> TemplateArg {
        TemplateArg::of::<T>()
    }
    fn float_arg<T: Float>() -> TemplateArg {
        TemplateArg::of::<T>()
    }
    fn int_arg<T: gpu_dsl_runtime::Integer>() -> TemplateArg {
        TemplateArg::of::<T>()
    }
    assert_eq!(type_arg::<u32>(), TemplateArg::Type(ScalarType::U32));
    assert_eq!(
        float_arg::<half::bf16>(),
        TemplateArg::Type(ScalarType::Bf16)
    );
    assert_eq!(
        int_arg::<usize>(),
        TemplateArg::Type(<usize as Scalar>::TYPE)
    );
}
