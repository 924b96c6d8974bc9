//! The disk cache loads compiled kernels only from a directory that nobody but this user can
//! write: through the public API, on a CUDA device (the CPU backend compiles nothing, so it
//! has no cache; the rule itself is unit-tested in gpu-runtime/src/core/{trust,cache}.rs).

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use gpu_dsl_runtime::{
    test_gpu, CacheConfig, DeviceBuffer, ElemType, Kernel, KernelArg, LaunchConfig, ModuleOrigin,
    ParamKind, ScalarType,
};

static SHARED_CACHE: Kernel = Kernel::__generated(
    "shared_cache",
    "shared_cache",
    "// cache_trust: a shared cache directory\n\
     extern \"C\" __global__ void shared_cache(float* x, unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] = 2.0f * x[i] + 1.0f; }",
    &[ParamKind::Slice {
        elem: ElemType::Scalar(ScalarType::F32),
        mutable: true,
    }],
);

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect()
}

#[test]
fn a_cache_directory_others_can_write_is_neither_read_nor_written() {
    let Some(gpu) = test_gpu() else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("kernels");
    let cache = CacheConfig::Dir(dir.clone());

    // Created private, and used.
    let cold = gpu.precompile_with(&SHARED_CACHE, &cache).unwrap();
    assert_eq!(cold.origin, ModuleOrigin::Nvrtc);
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let written = entries(&dir);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(
        fs::metadata(&written[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    gpu.forget_compiled(&SHARED_CACHE);
    let hit = gpu.precompile_with(&SHARED_CACHE, &cache).unwrap();
    assert_eq!(hit.origin, ModuleOrigin::DiskCache);

    // Group- or world-writable: compiled instead, nothing new written.
    for shared in [0o777, 0o770] {
        chmod(&dir, shared);
        gpu.forget_compiled(&SHARED_CACHE);
        let refused = gpu.precompile_with(&SHARED_CACHE, &cache).unwrap();
        assert_eq!(refused.origin, ModuleOrigin::Nvrtc, "{shared:o}");
        assert_eq!(entries(&dir), written);
    }

    // A group-writable entry in a private directory: compiled instead, and replaced.
    chmod(&dir, 0o700);
    chmod(&written[0], 0o660);
    gpu.forget_compiled(&SHARED_CACHE);
    let refused = gpu.precompile_with(&SHARED_CACHE, &cache).unwrap();
    assert_eq!(refused.origin, ModuleOrigin::Nvrtc);
    assert_eq!(
        fs::metadata(&written[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    gpu.forget_compiled(&SHARED_CACHE);
    let hit = gpu.precompile_with(&SHARED_CACHE, &cache).unwrap();
    assert_eq!(hit.origin, ModuleOrigin::DiskCache);

    // The kernel runs either way.
    let stream = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0]).unwrap();
    stream
        .launch(
            &SHARED_CACHE,
            LaunchConfig::for_len(3, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let expected: Vec<f32> = [1.0f32, 2.0, 3.0].iter().map(|v| 2.0 * v + 1.0).collect();
    assert_eq!(x.to_host(&stream).unwrap(), expected);
}
