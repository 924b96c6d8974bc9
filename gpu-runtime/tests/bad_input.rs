//! Every variant of [`Error`], produced through the public API, and its message checked for
//! naming the problem and what to do about it.
//!
//! Most run on the CPU backend (or the device `Gpu::best` picks), so CI checks them without a
//! GPU. A few need a CUDA device and print `skipped: no CUDA device` elsewhere; those no input
//! can produce (a driver older than NVRTC, NVRTC too old for the GPU) have their messages
//! checked as built. Library loading and `GPU_BACKEND` are per process, so the tests that
//! change them run this test binary again as a child process with its own environment.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpu_dsl_runtime::blas::Blas;
use gpu_dsl_runtime::cpu::{CpuArgs, ThreadCtx};
use gpu_dsl_runtime::{
    compile_stats, compile_to_ptx, test_device, test_gpu, Backend, Block, CacheConfig,
    DeviceBuffer, DriverStatus, ElemType, Error, Gpu, Grid, Kernel, KernelArg, LaunchConfig,
    ModuleOrigin, NvrtcStatus, ParamKind, PinnedBuffer, ScalarType, TemplateArg, TemplateParam,
};

const F32_OUT: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::F32),
    mutable: true,
};

fn global_x(t: &ThreadCtx) -> usize {
    (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize
}

fn add_one_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let i = global_x(t);
    if i < x.len() {
        x.set(i, x.get(i, t, line!()) + 1.0, t, line!());
    }
}

/// A kernel with real CUDA and a CPU twin, so it runs on whichever device the test gets.
static ADD_ONE: Kernel = Kernel::__generated_v2(
    "add_one",
    "add_one",
    "extern \"C\" __global__ void add_one(float* x, unsigned long long x_len) { \
     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
     if (i < x_len) x[i] += 1.0f; }",
    &[F32_OUT],
    "gpu-runtime/tests/bad_input.rs",
    false,
)
.with_cpu(add_one_twin, false);

/// The line the off-by-one twin reports its out-of-bounds write at.
const OOB_LINE: u32 = 4242;

fn off_by_one_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let i = global_x(t);
    if i <= x.len() {
        x.set(i, 1.0, t, OOB_LINE);
    }
}

static OFF_BY_ONE: Kernel = Kernel::__generated_v2(
    "off_by_one",
    "off_by_one",
    "/* CUDA source: not used, the test runs on the CPU backend */",
    &[F32_OUT],
    "gpu-runtime/tests/bad_input.rs",
    true,
)
.with_cpu(off_by_one_twin, false);

/// The device the backend-neutral tests run on, with a stream of the test's own: tests run
/// concurrently and a failure is reported on the stream it happened on.
fn device() -> (Gpu, gpu_dsl_runtime::Stream) {
    let gpu = test_device();
    let stream = gpu.new_stream().expect("a new stream");
    (gpu, stream)
}

/// Asserts that `message` contains every one of `words`.
#[track_caller]
fn says(message: &str, words: &[&str]) {
    for word in words {
        assert!(
            message.contains(word),
            "the message lacks {word:?}: {message}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Child processes: a fresh loader search path or environment for one test.

/// Set in a child process to the name of the test it runs.
const CHILD_ENV: &str = "GPU_BAD_INPUT_CHILD";
/// What a child prints when its checks passed, so a child that ran no test is noticed.
const CHILD_PASSED: &str = "bad_input child passed";

/// Whether this process is the child running `test`.
fn in_child(test: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|name| name == test)
}

/// Ends a child's run: prints the marker the parent looks for.
fn child_passed() {
    println!("{CHILD_PASSED}");
}

/// Runs `test` of this binary again in a child process whose dynamic loader searches only
/// `lib_dir`, with `env` set and the test harness's NVRTC requirement and backend choice
/// removed; returns the child's output after checking that it passed.
fn run_child(test: &str, lib_dir: &Path, env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, test)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env_remove("GPU_REQUIRE_NVRTC")
        .env_remove("GPU_BACKEND");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("the test binary runs again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "the child failed:\n{text}");
    assert!(
        text.contains(CHILD_PASSED),
        "the child ran no test:\n{text}"
    );
    if let Some(line) = text.lines().find(|line| line.contains("skipped:")) {
        eprintln!("{line}");
    }
    text
}

/// The path of the C library this process runs on: a shared library every Linux process has,
/// that defines none of CUDA's functions.
#[cfg(target_os = "linux")]
fn libc_path() -> Option<PathBuf> {
    let maps = fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path)
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("libc.so") || name.starts_with("libc-"))
        })
        .map(PathBuf::from)
}

/// A directory in which `names` are links to the C library: a CUDA library that loads but
/// lacks every function the runtime calls, as a library far older than the runtime expects.
/// `None`, after saying so, where the C library is not glibc's.
#[cfg(target_os = "linux")]
fn impostor_libraries(names: &[&str]) -> Option<tempfile::TempDir> {
    let Some(libc) = libc_path() else {
        eprintln!("skipped: no glibc shared library here to stand in for a CUDA library");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        std::os::unix::fs::symlink(&libc, dir.path().join(name)).unwrap();
    }
    Some(dir)
}

// ---------------------------------------------------------------------------------------------
// Missing or unusable CUDA libraries

#[test]
fn no_driver_says_install_it_or_use_the_cpu_backend() {
    match Gpu::new(0) {
        Err(err @ Error::NoDriver) => {
            says(
                &err.to_string(),
                &["libcuda.so.1", "install the NVIDIA driver", "Gpu::cpu()"],
            );
            assert!(matches!(Gpu::count(), Err(Error::NoDriver)));
        }
        // A machine with a driver cannot hide it (it is on the loader's default path), so the
        // message is checked as the runtime builds it.
        _ => {
            eprintln!("a CUDA driver is installed here: checked the NoDriver message only");
            says(
                &Error::NoDriver.to_string(),
                &["libcuda.so.1", "install the NVIDIA driver", "Gpu::cpu()"],
            );
        }
    }
}

#[test]
fn no_nvrtc_says_where_to_get_it() {
    if in_child("no_nvrtc_says_where_to_get_it") {
        match compile_to_ptx(&ADD_ONE, (9, 0)) {
            Err(err @ Error::NoNvrtc) => says(
                &err.to_string(),
                &["libnvrtc.so", "nvidia-cuda-nvrtc", "LD_LIBRARY_PATH"],
            ),
            // Installed in a directory the loader searches by default.
            Ok(_) => eprintln!("skipped: NVRTC is on the loader's default path here"),
            Err(other) => panic!("expected NoNvrtc, got {other:?}"),
        }
        child_passed();
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    run_child("no_nvrtc_says_where_to_get_it", empty.path(), &[]);
}

#[cfg(target_os = "linux")]
#[test]
fn an_nvrtc_without_its_functions_is_too_old() {
    if in_child("an_nvrtc_without_its_functions_is_too_old") {
        match compile_to_ptx(&ADD_ONE, (9, 0)) {
            Err(
                err @ Error::LibraryTooOld {
                    library: "NVRTC", ..
                },
            ) => says(
                &err.to_string(),
                &[
                    "NVRTC library is unusable",
                    "Missing symbol nvrtc",
                    "update",
                ],
            ),
            other => panic!("expected LibraryTooOld, got {other:?}"),
        }
        child_passed();
        return;
    }
    let Some(libs) = impostor_libraries(&["libnvrtc.so"]) else {
        return;
    };
    run_child(
        "an_nvrtc_without_its_functions_is_too_old",
        libs.path(),
        &[],
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_driver_without_its_functions_is_too_old() {
    if in_child("a_driver_without_its_functions_is_too_old") {
        match Gpu::count() {
            Err(
                err @ Error::LibraryTooOld {
                    library: "driver", ..
                },
            ) => says(
                &err.to_string(),
                &[
                    "driver library is unusable",
                    "cuInit",
                    "update the NVIDIA driver",
                ],
            ),
            other => panic!("expected LibraryTooOld, got {other:?}"),
        }
        assert!(matches!(Gpu::new(0), Err(Error::LibraryTooOld { .. })));
        child_passed();
        return;
    }
    // `libcuda.so` comes first among the names the loader tries, before the system's
    // `libcuda.so.1`, so this works on GPU machines too.
    let Some(libs) = impostor_libraries(&["libcuda.so"]) else {
        return;
    };
    run_child(
        "a_driver_without_its_functions_is_too_old",
        libs.path(),
        &[],
    );
}

#[test]
fn no_cublas_says_where_to_get_it() {
    if in_child("no_cublas_says_where_to_get_it") {
        if let Some(gpu) = test_gpu() {
            match Blas::new(&gpu.default_stream()) {
                Err(err @ Error::NoCublas) => says(
                    &err.to_string(),
                    &["libcublas.so", "nvidia-cublas", "LD_LIBRARY_PATH"],
                ),
                Ok(_) => eprintln!("skipped: cuBLAS is on the loader's default path here"),
                Err(other) => panic!("expected NoCublas, got {other:?}"),
            }
        }
        child_passed();
        return;
    }
    says(
        &Error::NoCublas.to_string(),
        &["libcublas.so", "nvidia-cublas", "LD_LIBRARY_PATH"],
    );
    let empty = tempfile::tempdir().unwrap();
    run_child("no_cublas_says_where_to_get_it", empty.path(), &[]);
}

#[test]
fn cublas_failures_say_what_to_check() {
    // Every shape is validated before cuBLAS sees it, so no input makes a call fail; the
    // message is checked as the runtime builds it from cuBLAS's status.
    let err = Error::Blas {
        context: "running SGEMM",
        status: "CUBLAS_STATUS_EXECUTION_FAILED".into(),
    };
    assert!(matches!(err, Error::Blas { .. }));
    says(
        &err.to_string(),
        &[
            "running SGEMM",
            "CUBLAS_STATUS_EXECUTION_FAILED",
            "shapes",
            "synchronize",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Choosing a device

#[test]
fn a_device_past_the_last_says_how_many_there_are() {
    let count = match Gpu::count() {
        Ok(count) => count,
        Err(_) => {
            eprintln!("skipped: no CUDA device; checked the NoDevice message instead");
            let err = Error::NoDevice {
                requested: 2,
                available: 1,
            };
            says(
                &err.to_string(),
                &["no CUDA device 2", "1 device(s)", "nvidia-smi"],
            );
            return;
        }
    };
    match Gpu::new(count) {
        Err(err @ Error::NoDevice { .. }) => says(
            &err.to_string(),
            &[
                &format!("no CUDA device {count}"),
                &format!("pick an ordinal below {count}"),
            ],
        ),
        other => panic!("expected NoDevice, got {other:?}"),
    }
}

#[test]
fn an_unknown_backend_name_lists_the_known_ones() {
    if in_child("an_unknown_backend_name_lists_the_known_ones") {
        match Gpu::best() {
            Err(err @ Error::InvalidBackend { .. }) => says(
                &err.to_string(),
                &["GPU_BACKEND=\"tpu\"", "cpu, cuda or auto", "unset it"],
            ),
            other => panic!("expected InvalidBackend, got {other:?}"),
        }
        child_passed();
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    run_child(
        "an_unknown_backend_name_lists_the_known_ones",
        empty.path(),
        &[("GPU_BACKEND", "tpu")],
    );
}

#[cfg(target_os = "linux")]
#[test]
fn cuda_required_without_a_usable_device_says_how_to_fall_back() {
    if in_child("cuda_required_without_a_usable_device_says_how_to_fall_back") {
        match Gpu::best() {
            Err(err @ Error::CudaRequired { .. }) => {
                says(
                    &err.to_string(),
                    &["GPU_BACKEND=cuda", "cuInit", "unset GPU_BACKEND"],
                );
                let Error::CudaRequired { source } = err else {
                    unreachable!()
                };
                assert!(matches!(*source, Error::LibraryTooOld { .. }), "{source}");
            }
            other => panic!("expected CudaRequired, got {other:?}"),
        }
        child_passed();
        return;
    }
    // An unusable driver, so the test means the same with or without a GPU.
    let Some(libs) = impostor_libraries(&["libcuda.so"]) else {
        return;
    };
    run_child(
        "cuda_required_without_a_usable_device_says_how_to_fall_back",
        libs.path(),
        &[("GPU_BACKEND", "cuda")],
    );
}

// ---------------------------------------------------------------------------------------------
// Launch geometry and shared memory

fn launch_error(config: LaunchConfig) -> Error {
    let (_, stream) = device();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 64).unwrap();
    stream
        .launch(&ADD_ONE, config, &[KernelArg::slice_mut(&mut x)])
        .expect_err("the launch is refused")
}

#[test]
fn a_block_with_no_threads_is_refused() {
    let err = launch_error(LaunchConfig::new(Grid::x(1), Block::xy(32, 0)));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(&err.to_string(), &["zero dimension", "at least 1"]);
    let err = LaunchConfig::try_for_len(64, 0).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(&err.to_string(), &["0 threads per block", "at least 1"]);
}

#[test]
fn a_grid_with_no_blocks_is_refused() {
    let err = launch_error(LaunchConfig::new(Grid::xyz(1, 0, 1), Block::x(32)));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(&err.to_string(), &["grid (1, 0, 1)", "at least 1"]);
}

#[test]
fn too_many_threads_per_block_are_refused() {
    let err = launch_error(LaunchConfig::new(Grid::x(1), Block::x(2048)));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(
        &err.to_string(),
        &["2048 threads", "limit", "smaller blocks"],
    );
    let err = launch_error(LaunchConfig::new(Grid::x(1), Block::xyz(1, 1, 128)));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(
        &err.to_string(),
        &["block z dimension", "another dimension"],
    );
}

#[test]
fn too_many_blocks_are_refused() {
    let err = launch_error(LaunchConfig::new(Grid::xy(1, 70_000), Block::x(32)));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(
        &err.to_string(),
        &["grid y dimension", "loop inside the kernel"],
    );
    let err = Grid::try_xy(1, 70_000).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    let err = LaunchConfig::try_for_len(usize::MAX, 1).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(&err.to_string(), &["grid limit", "grid-stride loop"]);
}

#[test]
fn too_much_shared_memory_is_refused() {
    let (gpu, _) = device();
    let over = gpu.limits().max_shared_mem_per_block_optin + 1;
    let err = launch_error(LaunchConfig::for_len(64, 64).with_shared_mem(over));
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
    says(
        &err.to_string(),
        &[&format!("{over} bytes"), "limit", "smaller tiles"],
    );
}

// ---------------------------------------------------------------------------------------------
// Arguments and buffers

#[test]
fn arguments_of_the_wrong_type_or_number_are_refused() {
    let (_, stream) = device();
    let x = DeviceBuffer::<f64>::zeroed(&stream, 4).unwrap();
    let err = stream
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice(&x)],
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::ArgumentMismatch { index: 0, .. }),
        "{err}"
    );
    says(&err.to_string(), &["argument 0", "f32", "order and types"]);
    let err = stream
        .launch(&ADD_ONE, LaunchConfig::for_len(4, 32), &[])
        .unwrap_err();
    assert!(matches!(err, Error::ArgumentMismatch { .. }), "{err}");
}

#[test]
fn copies_between_different_lengths_are_refused() {
    let (_, stream) = device();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let err = x.copy_from_host(&stream, &[1.0; 5]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 4,
                found: 5,
                ..
            }
        ),
        "{err}"
    );
    says(
        &err.to_string(),
        &["expected 4 elements, found 5", "equal length"],
    );
    let mut out = [0.0f32; 3];
    let err = x.copy_to_host(&stream, &mut out).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { .. }), "{err}");
}

#[test]
fn allocations_whose_size_overflows_are_refused() {
    let (gpu, stream) = device();
    let err = DeviceBuffer::<u64>::zeroed(&stream, usize::MAX / 4).unwrap_err();
    assert!(matches!(err, Error::AllocationTooLarge { .. }), "{err}");
    says(&err.to_string(), &["overflows", "allocate less"]);
    let err = PinnedBuffer::<u64>::new(&gpu, usize::MAX / 4).unwrap_err();
    assert!(matches!(err, Error::AllocationTooLarge { .. }), "{err}");
}

#[test]
fn host_memory_exhaustion_on_the_cpu_backend_is_an_error() {
    let stream = Gpu::cpu().new_stream().unwrap();
    // 4 EiB: a valid size no machine can allocate. The CPU backend's device memory is host
    // memory, so a buffer that does not fit is out of memory.
    let err = DeviceBuffer::<u8>::zeroed(&stream, 1 << 62).unwrap_err();
    assert!(
        matches!(err, Error::OutOfMemory { requested, .. } if requested == 1 << 62),
        "{err}"
    );
    says(
        &err.to_string(),
        &[
            "out of memory on the CPU backend",
            "tried to allocate 4.00 EiB (4611686018427387904 bytes)",
            "drop buffers",
            "Gpu::empty_cache()",
            "smaller batch",
        ],
    );
    // Pinned memory is host memory outside the device's accounting.
    let err = PinnedBuffer::<u8>::new(&Gpu::cpu(), 1 << 62).unwrap_err();
    assert!(matches!(err, Error::HostAlloc { .. }), "{err}");
    says(
        &err.to_string(),
        &["host memory", "free buffers", "smaller pieces"],
    );
}

#[test]
fn other_allocation_failures_name_the_driver_status() {
    // No input makes the driver refuse an allocation for another reason than its size; the
    // message is checked as built.
    let err = Error::Alloc {
        bytes: 1 << 20,
        source: DriverStatus {
            code: 1,
            name: "CUDA_ERROR_INVALID_VALUE".into(),
            description: Some("invalid argument".into()),
        },
    };
    says(
        &err.to_string(),
        &["1048576 bytes", "CUDA_ERROR_INVALID_VALUE", "free buffers"],
    );
}

#[test]
fn device_memory_exhaustion_is_an_error() {
    let Some(gpu) = test_gpu() else {
        let err = Error::OutOfMemory {
            device: "GPU 0 (NVIDIA H100 80GB HBM3)".into(),
            requested: 160 << 30,
            allocated: 0,
            reserved: 0,
            total: 80 << 30,
        };
        says(
            &err.to_string(),
            &[
                "out of memory on GPU 0",
                "tried to allocate 160.00 GiB",
                "of the device's 80.00 GiB",
                "Gpu::empty_cache()",
                "smaller batch",
            ],
        );
        return;
    };
    let stream = gpu.new_stream().unwrap();
    let asked = gpu.total_memory() * 2;
    let err = DeviceBuffer::<u8>::zeroed(&stream, asked).unwrap_err();
    match &err {
        Error::OutOfMemory {
            requested, total, ..
        } => {
            assert_eq!(*requested, asked, "{err}");
            assert_eq!(*total, gpu.total_memory(), "{err}");
        }
        other => panic!("expected OutOfMemory, got {other:?}: {other}"),
    }
    says(
        &err.to_string(),
        &[
            "out of memory on GPU 0",
            &format!("({asked} bytes)"),
            "drop buffers",
            "Gpu::empty_cache()",
            "smaller batch",
        ],
    );
    // The device is still usable.
    DeviceBuffer::<u8>::from_host(&stream, &[1u8; 1024]).unwrap();
}

#[test]
fn buffers_of_another_backend_are_refused() {
    let message = |err: &Error| err.to_string();
    let Some(gpu) = test_gpu() else {
        let err = Error::WrongBackend {
            what: "argument 0 of kernel `add_one`".into(),
            expected: Backend::Cuda,
            found: Backend::Cpu,
        };
        says(
            &message(&err),
            &[
                "CPU backend",
                "CUDA backend",
                "allocate it on the stream's device",
            ],
        );
        return;
    };
    let cuda = gpu.new_stream().unwrap();
    let cpu = Gpu::cpu().new_stream().unwrap();
    let mut on_cpu = DeviceBuffer::<f32>::zeroed(&cpu, 4).unwrap();
    let err = cuda
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut on_cpu)],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongBackend {
                expected: Backend::Cuda,
                found: Backend::Cpu,
                ..
            }
        ),
        "{err}"
    );
    says(
        &message(&err),
        &["argument 0", "allocate it on the stream's device"],
    );
    let on_cuda = DeviceBuffer::<f32>::zeroed(&cuda, 4).unwrap();
    let err = on_cpu.copy_from(&cpu, &on_cuda).unwrap_err();
    assert!(matches!(err, Error::WrongBackend { .. }), "{err}");
}

#[test]
fn buffers_of_another_gpu_are_refused() {
    if Gpu::count().unwrap_or(0) < 2 {
        eprintln!("skipped: fewer than two CUDA devices; checked the WrongDevice message instead");
        let err = Error::WrongDevice {
            what: "argument 0 of kernel `add_one`".into(),
            expected: 0,
            found: 1,
        };
        says(
            &err.to_string(),
            &[
                "GPU 1",
                "GPU 0",
                "allocate it on the stream's device or copy it there",
            ],
        );
        return;
    }
    let (first, second) = (Gpu::new(0).unwrap(), Gpu::new(1).unwrap());
    let stream = first.new_stream().unwrap();
    let mut elsewhere = DeviceBuffer::<f32>::zeroed(&second.new_stream().unwrap(), 4).unwrap();
    let err = stream
        .launch(
            &ADD_ONE,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut elsewhere)],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongDevice {
                expected: 0,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    says(&err.to_string(), &["GPU 1", "copy it there"]);
}

// ---------------------------------------------------------------------------------------------
// Kernels that cannot be built or run as given

static BROKEN: Kernel = Kernel::__generated(
    "broken",
    "broken",
    "extern \"C\" __global__ void broken(float* x, unsigned long long x_len) { x[0] = oops; }",
    &[F32_OUT],
);

#[test]
fn cuda_that_does_not_compile_carries_the_log() {
    if !gpu_dsl_runtime::test_nvrtc() {
        return;
    }
    let err = compile_to_ptx(&BROKEN, (9, 0)).unwrap_err();
    assert!(matches!(err, Error::Compile { .. }), "{err}");
    says(&err.to_string(), &["`broken`", "oops", "fix the kernel"]);
}

#[test]
fn an_architecture_nvrtc_rejects_is_an_nvrtc_error() {
    if !gpu_dsl_runtime::test_nvrtc() {
        return;
    }
    // Compute capability 1.0 predates everything NVRTC targets.
    let err = compile_to_ptx(&ADD_ONE, (1, 0)).unwrap_err();
    assert!(matches!(err, Error::Nvrtc { .. }), "{err}");
    says(
        &err.to_string(),
        &[
            "NVRTC error while compiling",
            "target architecture",
            "nvrtc_version()",
        ],
    );
}

/// Marked as needing Hopper's architecture-specific instructions (what `wgmma` does).
static HOPPER_ONLY: Kernel = Kernel::__generated_v2(
    "hopper_only",
    "hopper_only",
    "extern \"C\" __global__ void hopper_only(float* x, unsigned long long x_len) { \
     if (x_len) x[0] += 1.0f; }",
    &[F32_OUT],
    "gpu-runtime/tests/bad_input.rs",
    false,
)
.with_cpu(add_one_twin, false)
.__arch_specific(9, 0);

#[test]
fn an_architecture_specific_kernel_for_another_architecture_is_refused() {
    // Refused before NVRTC is asked, so this needs neither NVRTC nor a GPU.
    let err = compile_to_ptx(&HOPPER_ONLY, (8, 0)).unwrap_err();
    assert!(
        matches!(&err, Error::ArchSpecificKernel { needs: (9, 0), target, .. } if target == "compute_80"),
        "{err}"
    );
    says(
        &err.to_string(),
        &["sm_90a", "compute_80", "only on such a GPU"],
    );
    // On a GPU, its first launch is refused unless the GPU is that architecture.
    let Some(gpu) = test_gpu() else { return };
    let stream = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
    let result = stream.launch(
        &HOPPER_ONLY,
        LaunchConfig::for_len(1, 1),
        &[KernelArg::slice_mut(&mut x)],
    );
    if gpu.compute_capability() == (9, 0) {
        result.unwrap();
        assert_eq!(x.to_host(&stream).unwrap(), [1.0]);
    } else {
        let err = result.unwrap_err();
        assert!(matches!(err, Error::ArchSpecificKernel { .. }), "{err}");
    }
}

#[test]
fn a_gpu_nvrtc_cannot_target_says_to_change_the_toolkit() {
    // Needs a GPU whose architecture the loaded NVRTC cannot even target as PTX: no input
    // produces it, so the message is checked as the runtime builds it.
    let err = Error::UnsupportedArch {
        arch: (3, 5),
        nvrtc_version: "13.0".into(),
        supported: "sm_75..sm_121".into(),
    };
    assert!(matches!(err, Error::UnsupportedArch { .. }));
    says(
        &err.to_string(),
        &["sm_35", "sm_75..sm_121", "install a CUDA toolkit"],
    );
}

#[test]
fn a_driver_that_cannot_load_nvrtc_output_says_to_update_it() {
    // Needs a driver older than the NVRTC that compiled the kernel: no input produces it on a
    // given machine, so the message is checked as the runtime builds it.
    let err = Error::ModuleLoad {
        kernel: "add_one".into(),
        nvrtc_version: "13.0".into(),
        source: DriverStatus {
            code: 222,
            name: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION".into(),
            description: None,
        },
    };
    assert!(matches!(err, Error::ModuleLoad { .. }));
    says(
        &err.to_string(),
        &[
            "`add_one`",
            "NVRTC 13.0",
            "update the NVIDIA driver",
            "LD_LIBRARY_PATH",
        ],
    );
    let err = Error::Nvrtc {
        context: "compiling",
        source: NvrtcStatus {
            code: 7,
            name: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE".into(),
        },
        log: String::new(),
    };
    says(
        &err.to_string(),
        &["NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", "reinstall NVRTC"],
    );
}

#[test]
fn malformed_kernels_are_refused_before_nvrtc() {
    static NUL: Kernel = Kernel::__generated("nul", "nul", "bad\0source", &[F32_OUT]);
    static NO_ENTRY: Kernel = Kernel::__generated("no_entry", "", "", &[F32_OUT]);
    for kernel in [&NUL, &NO_ENTRY] {
        let err = compile_to_ptx(kernel, (9, 0)).unwrap_err();
        assert!(matches!(err, Error::InvalidKernel { .. }), "{err}");
        says(&err.to_string(), &["is malformed", "hand-built Kernel"]);
    }
}

static GENERIC_FILL: Kernel = Kernel::__generated_generic(
    "generic_fill",
    "template <typename T> __global__ void generic_fill(T* x, unsigned long long x_len) {}",
    &[ParamKind::GenericSlice {
        param: 0,
        mutable: true,
    }],
    &[TemplateParam::Type],
    "gpu-runtime/tests/bad_input.rs",
    false,
);

#[test]
fn generic_kernels_need_their_template_arguments() {
    let (_, stream) = device();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let err = stream
        .launch(
            &GENERIC_FILL,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
    says(&err.to_string(), &["generic_fill", "launch_generic"]);
    let err = stream
        .launch_generic(
            &GENERIC_FILL,
            &[TemplateArg::Const(3)],
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
    let err = stream
        .launch_generic(
            &ADD_ONE,
            &[TemplateArg::of::<f32>()],
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
}

#[test]
fn an_out_of_bounds_write_names_the_line_and_thread() {
    let stream = Gpu::cpu().new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 10).unwrap();
    stream
        .launch(
            &OFF_BY_ONE,
            LaunchConfig::for_len(11, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    let err = stream.synchronize().unwrap_err();
    assert!(
        matches!(err, Error::KernelPanic { line: OOB_LINE, .. }),
        "{err}"
    );
    says(
        &err.to_string(),
        &[
            &format!("gpu-runtime/tests/bad_input.rs:{OOB_LINE}"),
            "thread (10, 0, 0)",
            "the len is 10 but the index is 10",
        ],
    );
}

#[test]
fn a_kernel_without_a_cpu_twin_is_refused_by_the_cpu_backend() {
    let stream = Gpu::cpu().new_stream().unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let err = stream
        .launch(
            &BROKEN,
            LaunchConfig::for_len(4, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap_err();
    assert!(matches!(err, Error::CpuBackend { .. }), "{err}");
    says(
        &err.to_string(),
        &["`broken`", "CPU backend", "no CPU twin"],
    );
}

fn grid_barrier_twin(_args: &CpuArgs<'_>, t: &ThreadCtx) {
    t.at(7).grid_sync();
}

/// A hand-built kernel that waits at a grid barrier: cooperative, with the barrier's word as
/// its hidden last parameter (which this one ignores).
static GRID_BARRIER: Kernel = Kernel::__generated_v2(
    "grid_barrier",
    "grid_barrier",
    "extern \"C\" __global__ void grid_barrier(unsigned int* word) { }",
    &[],
    "gpu-runtime/tests/bad_input.rs",
    false,
)
.with_cpu(grid_barrier_twin, true)
.__cooperative();

/// The same twin in a kernel not marked cooperative.
static UNMARKED_GRID_BARRIER: Kernel = Kernel::__generated_v2(
    "unmarked_grid_barrier",
    "unmarked_grid_barrier",
    "extern \"C\" __global__ void unmarked_grid_barrier() { }",
    &[],
    "gpu-runtime/tests/bad_input.rs",
    false,
)
.with_cpu(grid_barrier_twin, true);

#[test]
fn a_cooperative_grid_larger_than_the_device_holds_names_the_numbers() {
    let mut devices = vec![Gpu::cpu()];
    devices.extend(test_gpu());
    for gpu in devices {
        let stream = gpu.new_stream().unwrap();
        let shape = LaunchConfig::new(Grid::x(1), Block::x(128));
        let max = match stream.max_cooperative_blocks(&GRID_BARRIER, shape) {
            Err(err @ Error::CooperativeUnsupported { .. }) => {
                says(
                    &err.to_string(),
                    &["`grid_barrier`", "cooperative launch", "split"],
                );
                continue;
            }
            other => other.unwrap(),
        };
        stream
            .launch(
                &GRID_BARRIER,
                LaunchConfig::new(Grid::x(max), Block::x(128)),
                &[],
            )
            .unwrap();
        stream.synchronize().unwrap();
        let err = stream
            .launch(
                &GRID_BARRIER,
                LaunchConfig::new(Grid::x(max + 1), Block::x(128)),
                &[],
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::CooperativeGridTooLarge { blocks, max: m, block_threads: 128, .. }
                if blocks == u64::from(max) + 1 && m == u64::from(max)),
            "{err}"
        );
        says(
            &err.to_string(),
            &[
                "`grid_barrier`",
                &format!("{} blocks of 128 threads", max + 1),
                &format!("at most {max} such blocks"),
                "grid-stride loop",
            ],
        );
    }
    // The message of a GPU without cooperative launch, as built.
    let err = Error::CooperativeUnsupported {
        kernel: "k".to_string(),
    };
    says(
        &err.to_string(),
        &["`k`", "COOPERATIVE_LAUNCH", "separate launches"],
    );
}

#[test]
fn the_residency_query_checks_template_arguments_as_a_launch_does() {
    let (_, stream) = device();
    let shape = LaunchConfig::new(Grid::x(1), Block::x(32));
    let err = stream
        .max_cooperative_blocks(&GENERIC_FILL, shape)
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
    says(&err.to_string(), &["generic_fill", "launch_generic"]);
    let err = stream
        .max_cooperative_blocks_generic(&GRID_BARRIER, &[TemplateArg::of::<f32>()], shape)
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
    let err = stream
        .max_cooperative_blocks_generic(&GENERIC_FILL, &[TemplateArg::Const(3)], shape)
        .unwrap_err();
    assert!(matches!(err, Error::TemplateArgs { .. }), "{err}");
    // The block shape is checked against the device like a launch's.
    let err = stream
        .max_cooperative_blocks(&GRID_BARRIER, LaunchConfig::new(Grid::x(1), Block::x(2048)))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch(_)), "{err}");
}

#[test]
fn a_twin_that_waits_at_a_grid_barrier_needs_a_cooperative_kernel() {
    let stream = Gpu::cpu().new_stream().unwrap();
    let err = stream
        .launch(
            &UNMARKED_GRID_BARRIER,
            LaunchConfig::new(Grid::x(2), Block::x(32)),
            &[],
        )
        .unwrap_err();
    assert!(matches!(err, Error::CpuBackend { .. }), "{err}");
    says(
        &err.to_string(),
        &["grid_sync (line 7)", "not launched cooperatively"],
    );
}

#[test]
fn cuda_only_operations_on_the_cpu_backend_say_to_open_a_gpu() {
    let stream = Gpu::cpu().new_stream().unwrap();
    let err = Blas::new(&stream).unwrap_err();
    assert!(matches!(err, Error::CudaOnly { what: "cuBLAS" }), "{err}");
    says(
        &err.to_string(),
        &["cuBLAS", "CPU backend", "Gpu::new(ordinal)"],
    );
    let err = stream.capture(|_| Ok(())).unwrap_err();
    assert!(matches!(err, Error::CudaOnly { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------------
// The disk cache

#[test]
fn clearing_a_cache_that_is_not_a_directory_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-directory");
    fs::write(&file, b"x").unwrap();
    let err = CacheConfig::Dir(file.clone()).clear().unwrap_err();
    assert!(
        matches!(&err, Error::Io { path, .. } if *path == file),
        "{err}"
    );
    says(
        &err.to_string(),
        &["not-a-directory", "check permissions", "GPU_CACHE_DIR=off"],
    );
}

/// Frames `payload` as a cache entry, so it passes the checksum (the cache's entry format,
/// gpu-runtime/src/core/cache.rs).
fn framed_entry(kind: u8, payload: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut out = b"GPUKCACH".to_vec();
    out.push(1);
    out.push(kind);
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

#[test]
fn a_corrupt_disk_cache_entry_is_rebuilt_not_loaded() {
    let Some(gpu) = test_gpu() else { return };
    static CACHED: Kernel = Kernel::__generated(
        "corrupt_cache",
        "corrupt_cache",
        "// bad_input: corrupt cache entries\n\
         extern \"C\" __global__ void corrupt_cache(float* x, unsigned long long x_len) { \
         unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
         if (i < x_len) x[i] += 1.0f; }",
        &[F32_OUT],
    );
    let dir = tempfile::tempdir().unwrap();
    let kernels = dir.path().join("kernels");
    let cache = CacheConfig::Dir(kernels.clone());
    let cold = gpu.precompile_with(&CACHED, &cache).unwrap();
    assert_eq!(cold.origin, ModuleOrigin::Nvrtc);
    let entry = fs::read_dir(&kernels)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let kind = match entry.extension().and_then(|e| e.to_str()) {
        Some("cubin") => 0,
        _ => 1,
    };
    let garbage: [Vec<u8>; 3] = [
        b"garbage".to_vec(),
        vec![0xff; 4096],
        // Passes the checksum but is no image: the driver refuses it.
        framed_entry(kind, b"\x7fELF not really a cubin"),
    ];
    for bytes in garbage {
        fs::write(&entry, &bytes).unwrap();
        let rejected = compile_stats().disk_rejected;
        gpu.forget_compiled(&CACHED);
        let rebuilt = gpu.precompile_with(&CACHED, &cache).unwrap();
        assert_eq!(rebuilt.origin, ModuleOrigin::Nvrtc);
        assert!(compile_stats().disk_rejected > rejected);
        assert_ne!(fs::read(&entry).unwrap(), bytes, "the entry was rewritten");
    }
    gpu.forget_compiled(&CACHED);
    let stream = gpu.new_stream().unwrap();
    let mut x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0]).unwrap();
    stream
        .launch(
            &CACHED,
            LaunchConfig::for_len(2, 32),
            &[KernelArg::slice_mut(&mut x)],
        )
        .unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), [2.0, 3.0]);
}

// ---------------------------------------------------------------------------------------------
// Driver failures after a kernel fault (a child process: the fault ruins the context)

static TRAP: Kernel = Kernel::__generated(
    "trap",
    "trap",
    "extern \"C\" __global__ void trap(float* x, unsigned long long x_len) { \
     if (x_len) asm volatile(\"trap;\"); }",
    &[F32_OUT],
);

#[test]
fn a_faulted_context_says_it_is_unusable() {
    if in_child("a_faulted_context_says_it_is_unusable") {
        let gpu = test_gpu().expect("the parent saw a CUDA device");
        let stream = gpu.new_stream().unwrap();
        let mut x = DeviceBuffer::<f32>::zeroed(&stream, 32).unwrap();
        gpu.precompile(&ADD_ONE).unwrap();
        stream
            .launch(
                &TRAP,
                LaunchConfig::for_len(32, 32),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap();
        let err = stream.synchronize().unwrap_err();
        assert!(matches!(err, Error::Driver { .. }), "{err}");
        says(
            &err.to_string(),
            &["CUDA driver error", "restarts", "GPU_CHECKED=1"],
        );
        // The error is sticky: the next launch of a loaded kernel fails in the driver.
        let err = stream
            .launch(
                &ADD_ONE,
                LaunchConfig::for_len(32, 32),
                &[KernelArg::slice_mut(&mut x)],
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Launch {
                    kernel: "add_one",
                    ..
                }
            ),
            "{err}"
        );
        says(
            &err.to_string(),
            &["`add_one`", "faulted earlier", "synchronize"],
        );
        child_passed();
        // The context is ruined: leave without freeing anything in it.
        std::process::exit(0);
    }
    if test_gpu().is_none() {
        says(
            &Error::Driver {
                context: "synchronizing a stream",
                source: DriverStatus {
                    code: 719,
                    name: "CUDA_ERROR_LAUNCH_FAILED".into(),
                    description: None,
                },
            }
            .to_string(),
            &[
                "CUDA_ERROR_LAUNCH_FAILED",
                "restarts",
                "GPU_CHECKED=1",
                "nvidia-smi",
            ],
        );
        return;
    }
    let lib_path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    run_child(
        "a_faulted_context_says_it_is_unusable",
        Path::new(&lib_path),
        &[],
    );
}
