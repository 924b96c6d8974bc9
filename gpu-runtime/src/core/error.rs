//! The one error type of the runtime; every message says what to do next.
//!
//! Failed CUDA calls are carried as plain data ([`DriverStatus`], [`NvrtcStatus`]), filled in
//! by the CUDA layer when the call fails, so the error type names no CUDA library type and
//! prints without calling into one.

use std::fmt;
use std::path::PathBuf;

use crate::core::backend::Backend;
use crate::core::collective::CommError;
use crate::core::memory::format_bytes;
use crate::core::race::RaceSite;

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between a kernel's source and its launch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library could not be loaded.
    #[error(
        "no CUDA driver found (libcuda.so.1): install the NVIDIA driver, or run kernels on the CPU \
         backend (Gpu::cpu(), or Gpu::best() with GPU_BACKEND unset or set to cpu)"
    )]
    NoDriver,

    /// The NVRTC runtime compiler library could not be loaded.
    #[error(
        "NVRTC not found (libnvrtc.so): install the CUDA toolkit's NVRTC (or pip install \
         nvidia-cuda-nvrtc) and put its lib directory on LD_LIBRARY_PATH"
    )]
    NoNvrtc,

    /// An ahead-of-time kernel bundle could not be read.
    #[error(
        "the AOT kernel bundle is unusable: {reason}; rebuild it (cargo build) with the same \
         version of this crate that loads it"
    )]
    AotBundle {
        /// What is wrong with it.
        reason: String,
    },

    /// An ahead-of-time build was asked for something it cannot produce.
    #[error("AOT build `{bundle}`: {reason}")]
    AotBuild {
        /// The bundle's name.
        bundle: String,
        /// What is wrong and what to change.
        reason: String,
    },

    /// The cuBLAS library could not be loaded.
    #[error(
        "cuBLAS not found (libcublas.so): install the CUDA toolkit's cuBLAS (or pip install \
         nvidia-cublas) and put its lib directory on LD_LIBRARY_PATH"
    )]
    NoCublas,

    /// A cuBLAS call failed.
    #[error(
        "cuBLAS error while {context}: {status}; check the matrix shapes and that earlier work on \
         the stream succeeded (synchronize to find out), else update the CUDA toolkit's cuBLAS"
    )]
    Blas {
        /// What the runtime was doing.
        context: &'static str,
        /// cuBLAS's status code, by name.
        status: String,
    },

    /// A CUDA library loaded but lacks a function this build calls.
    #[error(
        "the CUDA {library} library is unusable ({detail}): it is probably older than the CUDA 13 \
         API this build expects; update the NVIDIA driver / CUDA toolkit"
    )]
    LibraryTooOld {
        /// "driver", "NVRTC" or "cuBLAS".
        library: &'static str,
        /// What failed, as cudarc reported it.
        detail: String,
    },

    /// The requested device ordinal does not exist.
    #[error(
        "no CUDA device {requested}: this machine has {available} device(s); pick an ordinal below \
         {available} (see nvidia-smi)"
    )]
    NoDevice {
        /// The ordinal asked for.
        requested: usize,
        /// How many devices the driver reports.
        available: usize,
    },

    /// A CUDA driver call failed.
    #[error(
        "CUDA driver error while {context}: {source}; after a kernel fault the device is unusable \
         until the process restarts (GPU_CHECKED=1 finds the faulting access), otherwise check \
         the driver with nvidia-smi"
    )]
    Driver {
        /// What the runtime was doing.
        context: &'static str,
        /// The driver's status code.
        source: DriverStatus,
    },

    /// The driver refused to start a kernel.
    #[error(
        "launching kernel `{kernel}` failed: {}; check the launch configuration and that the \
         device has not faulted earlier (synchronize after launches to find which one)",
        .source
    )]
    Launch {
        /// The kernel's name.
        kernel: &'static str,
        /// The driver's status code.
        source: DriverStatus,
    },

    /// A device allocation failed for a reason other than a lack of memory
    /// ([`Error::OutOfMemory`]).
    #[error(
        "allocating {bytes} bytes of device memory failed: {}; free buffers (Gpu::memory_stats \
         shows what this process holds) or process the data in smaller pieces",
        .source
    )]
    Alloc {
        /// The size asked for.
        bytes: usize,
        /// The driver's status code.
        source: DriverStatus,
    },

    /// A buffer did not fit in the device's memory (host memory on the CPU backend), even after
    /// the allocator handed its cached memory back to the driver.
    #[error(
        "out of memory on {device}: tried to allocate {} ({requested} bytes); this process's \
         buffers hold {} and its allocator reserves {}{}; drop buffers you no longer need, call \
         Gpu::empty_cache() to hand cached memory back to the driver, or process a smaller batch",
        format_bytes(*.requested),
        format_bytes(*.allocated),
        format_bytes(*.reserved),
        of_total(*.total)
    )]
    OutOfMemory {
        /// The device, for the message ("GPU 0 (NVIDIA H100 80GB HBM3)", "the CPU backend").
        device: String,
        /// The size asked for, in bytes.
        requested: usize,
        /// Bytes held by this process's live buffers on the device (`Gpu::memory_allocated`).
        allocated: usize,
        /// Bytes its allocator held from the driver (`Gpu::memory_reserved`).
        reserved: usize,
        /// The device's total memory in bytes (0 when unknown).
        total: usize,
    },

    /// The driver could not load a compiled kernel.
    #[error(
        "loading kernel `{kernel}` (compiled by NVRTC {nvrtc_version}) failed: {}; if the driver \
         is older than that NVRTC, update the NVIDIA driver or put a matching NVRTC first on \
         LD_LIBRARY_PATH",
        .source
    )]
    ModuleLoad {
        /// The kernel's name.
        kernel: String,
        /// NVRTC's version, "major.minor".
        nvrtc_version: String,
        /// The driver's status code.
        source: DriverStatus,
    },

    /// An NVRTC call other than the compilation itself failed.
    #[error(
        "NVRTC error while {context}: {source}; check that the target architecture is one this \
         NVRTC supports (nvrtc_version() says which NVRTC is loaded), else reinstall NVRTC{}",
        log_suffix(.log)
    )]
    Nvrtc {
        /// What the runtime was doing.
        context: &'static str,
        /// NVRTC's status code.
        source: NvrtcStatus,
        /// The program log, when there was one.
        log: String,
    },

    /// NVRTC rejected a kernel's CUDA source.
    #[error(
        "kernel `{kernel}` failed to compile with NVRTC; fix the kernel (the log names the Rust \
         source line for generated kernels):\n{log}"
    )]
    Compile {
        /// The kernel's name.
        kernel: String,
        /// The full NVRTC program log.
        log: String,
    },

    /// A kernel uses instructions of one architecture only (Hopper's wgmma, `sm_90a`) and was
    /// asked for another.
    #[error(
        "kernel `{kernel}` uses instructions only compute capability {}.{} has (sm_{}{}a: wgmma), \
         so it cannot be compiled for {target}: launch it only on such a GPU",
        needs.0, needs.1, needs.0, needs.1
    )]
    ArchSpecificKernel {
        /// The kernel's name.
        kernel: String,
        /// The compute capability it needs.
        needs: (u32, u32),
        /// The architecture it was asked for, e.g. `sm_80`.
        target: String,
    },

    /// A kernel that calls `grid_sync` was launched with more blocks than the device can keep
    /// resident at once: its grid barrier would wait forever for blocks that cannot start.
    #[error(
        "kernel `{kernel}` calls grid_sync, so all its blocks must be resident at once, but the \
         launch asks for {blocks} blocks of {block_threads} threads ({shared_bytes} bytes of \
         dynamic shared memory) and {device} holds at most {max} such blocks; launch at most \
         {max} blocks (Stream::max_cooperative_blocks gives the number) and cover the data \
         with a grid-stride loop"
    )]
    CooperativeGridTooLarge {
        /// The kernel's name.
        kernel: String,
        /// Blocks the launch asked for.
        blocks: u64,
        /// Threads per block.
        block_threads: u32,
        /// Dynamic shared memory per block.
        shared_bytes: u32,
        /// The most blocks of that shape the device holds at once.
        max: u64,
        /// The device, for the message ("this GPU", "the CPU backend").
        device: &'static str,
    },

    /// A kernel that calls `grid_sync` was launched on a GPU without cooperative launch.
    #[error(
        "kernel `{kernel}` calls grid_sync, which needs a cooperative launch, and this GPU does \
         not support one (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0); split the kernel at its \
         grid_sync calls into separate launches, or run it on the CPU backend"
    )]
    CooperativeUnsupported {
        /// The kernel's name.
        kernel: String,
    },

    /// NVRTC cannot produce code that this GPU can run.
    #[error(
        "NVRTC {nvrtc_version} cannot generate code for sm_{}{} (it supports {supported}): install \
         a CUDA toolkit whose NVRTC supports this GPU",
        .arch.0, .arch.1
    )]
    UnsupportedArch {
        /// The device's compute capability.
        arch: (u32, u32),
        /// NVRTC's version, "major.minor".
        nvrtc_version: String,
        /// The architectures NVRTC supports, for the message.
        supported: String,
    },

    /// A tensor map's shape, stride or box is one the tensor copies cannot read.
    #[error("invalid tensor map: {reason}")]
    InvalidTensorMap {
        /// What is wrong, and what would be accepted.
        reason: String,
    },

    /// A launch configuration exceeds a device or kernel limit.
    #[error("invalid launch configuration: {0}")]
    InvalidLaunch(String),

    /// A launch argument does not match the kernel's parameter.
    #[error(
        "kernel `{kernel}` argument {index}: expected {expected}, found {found}; pass the \
         arguments in the order and types of the kernel's signature"
    )]
    ArgumentMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// Zero-based position of the offending argument (or the count, for a missing one).
        index: usize,
        /// What the kernel declares.
        expected: String,
        /// What was passed.
        found: String,
    },

    /// A copy between buffers of different lengths.
    #[error(
        "length mismatch in {what}: expected {expected} elements, found {found}; copies need \
         buffers of equal length"
    )]
    LengthMismatch {
        /// Which copy.
        what: &'static str,
        /// The destination's (or the device buffer's) length.
        expected: usize,
        /// The other side's length.
        found: usize,
    },

    /// A buffer or event used with a stream of another device.
    #[error(
        "{what} lives on GPU {found} but the stream belongs to GPU {expected}; allocate it on the \
         stream's device or copy it there first"
    )]
    WrongDevice {
        /// What was passed.
        what: String,
        /// The stream's device ordinal.
        expected: usize,
        /// The device the object belongs to.
        found: usize,
    },

    /// An allocation whose size in bytes does not fit in memory addressing.
    #[error(
        "cannot allocate {len} elements of {elem_bytes} bytes: the size overflows; allocate less"
    )]
    AllocationTooLarge {
        /// Requested elements.
        len: usize,
        /// Size of one element.
        elem_bytes: usize,
    },

    /// A kernel definition that cannot be compiled or loaded as given.
    #[error(
        "kernel `{kernel}` is malformed: {reason}; #[kernel] never builds such a kernel, so fix \
         the hand-built Kernel's parts (or report the macro's output as a bug)"
    )]
    InvalidKernel {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        reason: String,
    },

    /// Template arguments that do not fit a generic kernel, or a generic kernel launched as a
    /// plain one (and the other way round).
    #[error("kernel `{kernel}`: {reason}")]
    TemplateArgs {
        /// The kernel's name.
        kernel: &'static str,
        /// What is wrong and how to launch it instead.
        reason: String,
    },

    /// A kernel failed an `assert!` (or reached a `panic!`), or in checked mode a bounds or
    /// arithmetic check, as Rust would have panicked.
    #[error(
        "kernel `{kernel}` panicked at {} in block {} thread {}: {message}",
        panic_location(.file, *.line),
        coordinates(.block),
        coordinates(.thread)
    )]
    KernelPanic {
        /// The kernel's name, with its template arguments when generic (`scale::<f32, 256>`).
        kernel: String,
        /// The Rust source file of the kernel ("" when unknown).
        file: String,
        /// The Rust source line of the failed check.
        line: u32,
        /// The `block_idx()` of the thread that failed.
        block: [u32; 3],
        /// The `thread_idx()` of the thread that failed.
        thread: [u32; 3],
        /// What failed, worded as Rust's panic message.
        message: String,
    },

    /// A buffer, event or stream of one backend used with another backend's stream or device.
    #[error(
        "{what} belongs to the {found} backend but the stream belongs to the {expected} backend; \
         allocate it on the stream's device (Gpu::cpu() and a CUDA Gpu do not share memory)"
    )]
    WrongBackend {
        /// What was passed.
        what: String,
        /// The stream's backend.
        expected: Backend,
        /// The backend the object belongs to.
        found: Backend,
    },

    /// An operation that only exists on a CUDA device was asked of the CPU backend.
    #[error("{what} needs a CUDA device, but this Gpu is the CPU backend; use Gpu::new(ordinal)")]
    CudaOnly {
        /// The operation.
        what: &'static str,
    },

    /// `GPU_BACKEND` holds something other than a backend name.
    #[error(
        "GPU_BACKEND={value:?} is not a backend: set it to cpu, cuda or auto (or unset it to use \
         CUDA device 0 when usable, else the CPU backend)"
    )]
    InvalidBackend {
        /// The variable's value.
        value: String,
    },

    /// `GPU_BACKEND=cuda` asked for CUDA, and CUDA device 0 cannot be opened.
    #[error(
        "GPU_BACKEND=cuda but CUDA device 0 cannot be used: {source}; unset GPU_BACKEND (or set \
         it to cpu) to run on the CPU backend"
    )]
    CudaRequired {
        /// Why device 0 could not be opened.
        #[source]
        source: Box<Error>,
    },

    /// Host memory for the CPU backend (a pinned buffer, shared memory) could not be
    /// allocated; a device buffer that does not fit is [`Error::OutOfMemory`].
    #[error(
        "allocating {bytes} bytes of host memory for the CPU backend failed; free buffers \
         (Gpu::memory_stats shows what this process holds) or process the data in smaller pieces"
    )]
    HostAlloc {
        /// The size asked for.
        bytes: usize,
    },

    /// A kernel could not run on the CPU backend, or its CPU twin broke the backend's contract
    /// (a barrier deadlock, a panic in the twin, a twin that disagrees with the kernel).
    #[error("kernel `{kernel}` failed on the CPU backend: {reason}")]
    CpuBackend {
        /// The kernel's name, with its template arguments when generic.
        kernel: String,
        /// What went wrong and what to do.
        reason: String,
    },

    /// The race checker found two threads touching one word of memory, at least one of them
    /// writing, with nothing ordering them (no barrier, warp operation or fence between them).
    #[error(
        "data race in kernel `{kernel}` on {memory}[{index}]: {first}, and {second}, with \
         nothing ordering them; {advice}"
    )]
    DataRace {
        /// The kernel's name, with its template arguments when generic.
        kernel: String,
        /// The memory: a parameter (`out`) or a shared array (`shared tile`).
        memory: String,
        /// The element's index in it.
        index: usize,
        /// The earlier access.
        first: Box<RaceSite>,
        /// The later access, which found the earlier one.
        second: Box<RaceSite>,
        /// What to write instead.
        advice: &'static str,
    },

    /// A barrier or warp operation that some thread it names never reaches: it returned, or
    /// waits at another one (on a GPU, a hang or undefined behaviour).
    #[error(
        "divergent barrier in kernel `{kernel}`: {waiting}, but {other}; every thread of the \
         block that has not returned must reach the same sync_threads (every thread of the \
         grid, the same grid_sync; every lane a warp operation's mask names, the same warp \
         operation): move the barrier out of the \
         condition, or let every thread reach it before returning"
    )]
    DivergentBarrier {
        /// The kernel's name, with its template arguments when generic.
        kernel: String,
        /// A thread that waits.
        waiting: Box<RaceSite>,
        /// A thread that does not come: it returned, or waits elsewhere.
        other: Box<RaceSite>,
    },

    /// The race checker saw a thread read shared memory that no thread of its block wrote in
    /// this launch: on a GPU it holds whatever the last block left there.
    #[error(
        "kernel `{kernel}` reads {memory}[{index}] before any thread of its block wrote it: \
         {read}; on a GPU shared memory starts with garbage, not zeros: write it first (and \
         sync_threads() before other threads read it)"
    )]
    UninitializedShared {
        /// The kernel's name, with its template arguments when generic.
        kernel: String,
        /// The shared array.
        memory: String,
        /// The element's index in it.
        index: usize,
        /// The read.
        read: Box<RaceSite>,
    },

    /// A communicator's start or collective failed (see [`crate::comm`]).
    #[error(transparent)]
    Comm(#[from] CommError),

    /// A profiler was started while another one was recording.
    #[error("a profiler is already recording in this process: finish it before starting another")]
    ProfilerActive,

    /// A profile's trace file could not be written.
    #[error("cannot write the profile trace {}: {source}", .path.display())]
    TraceWrite {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },

    /// A kernel-cache file operation failed (only surfaced by explicit cache calls).
    #[error(
        "kernel cache I/O error at {}: {source}; check permissions or set GPU_CACHE_DIR=off",
        .path.display()
    )]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Why a backend could not allocate a buffer. Running out of memory is told apart because the
/// front, which keeps the accounting, writes its message ([`Error::OutOfMemory`]).
#[derive(Debug)]
pub(crate) enum AllocFailure {
    /// The device (or the host, for the CPU backend) has no room for it.
    OutOfMemory,
    /// Anything else, already an error.
    Other(Error),
}

impl AllocFailure {
    /// A failed host allocation of the CPU backend, whose device memory is host memory: the
    /// allocator's refusal is running out of memory there.
    pub(crate) fn from_host(err: Error) -> AllocFailure {
        match err {
            Error::HostAlloc { .. } => AllocFailure::OutOfMemory,
            other => AllocFailure::Other(other),
        }
    }
}

/// A failed CUDA driver call's status, as the driver named and described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverStatus {
    /// The `CUresult` code.
    pub code: u32,
    /// The code's name, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
    pub name: String,
    /// The driver's description, when it could be asked for one.
    pub description: Option<String>,
}

impl fmt::Display for DriverStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.description {
            Some(text) => write!(f, "{} ({text})", self.name),
            None => f.write_str(&self.name),
        }
    }
}

impl std::error::Error for DriverStatus {}

/// A failed NVRTC call's status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvrtcStatus {
    /// The `nvrtcResult` code.
    pub code: u32,
    /// The code's name, e.g. `NVRTC_ERROR_INTERNAL_ERROR`.
    pub name: String,
}

impl fmt::Display for NvrtcStatus {
    // Worded as NVRTC statuses have always been shown in messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NvrtcError({})", self.name)
    }
}

impl std::error::Error for NvrtcStatus {}

fn coordinates(dim: &[u32; 3]) -> String {
    format!("({}, {}, {})", dim[0], dim[1], dim[2])
}

fn panic_location(file: &str, line: u32) -> String {
    if file.is_empty() {
        format!("line {line}")
    } else {
        format!("{file}:{line}")
    }
}

fn of_total(total: usize) -> String {
    if total == 0 {
        String::new()
    } else {
        format!(" of the device's {}", format_bytes(total))
    }
}

fn log_suffix(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        format!("\n{log}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let no_driver = Error::NoDriver.to_string();
        assert!(no_driver.contains("libcuda.so.1"), "{no_driver}");
        assert!(
            no_driver.contains("install the NVIDIA driver"),
            "{no_driver}"
        );

        let no_nvrtc = Error::NoNvrtc.to_string();
        assert!(no_nvrtc.contains("libnvrtc.so"), "{no_nvrtc}");
        assert!(no_nvrtc.contains("LD_LIBRARY_PATH"), "{no_nvrtc}");
        assert!(no_nvrtc.contains("nvidia-cuda-nvrtc"), "{no_nvrtc}");

        let no_cublas = Error::NoCublas.to_string();
        assert!(no_cublas.contains("libcublas.so"), "{no_cublas}");
        assert!(no_cublas.contains("LD_LIBRARY_PATH"), "{no_cublas}");

        let no_device = Error::NoDevice {
            requested: 3,
            available: 1,
        }
        .to_string();
        assert!(no_device.contains("no CUDA device 3"), "{no_device}");
        assert!(no_device.contains("1 device(s)"), "{no_device}");

        let compile = Error::Compile {
            kernel: "saxpy".into(),
            log: "saxpy.cu(3): error: expected a \";\"".into(),
        }
        .to_string();
        assert!(compile.contains("`saxpy`"), "{compile}");
        assert!(compile.contains("expected a \";\""), "{compile}");

        let mismatch = Error::ArgumentMismatch {
            kernel: "saxpy",
            index: 1,
            expected: "&[f32]".into(),
            found: "&[f64]".into(),
        }
        .to_string();
        assert!(mismatch.contains("argument 1"), "{mismatch}");
        assert!(
            mismatch.contains("expected &[f32], found &[f64]"),
            "{mismatch}"
        );

        let length = Error::LengthMismatch {
            what: "copy_from_host",
            expected: 4,
            found: 5,
        }
        .to_string();
        assert!(length.contains("expected 4 elements, found 5"), "{length}");

        let arch = Error::UnsupportedArch {
            arch: (12, 0),
            nvrtc_version: "12.4".into(),
            supported: "sm_50..sm_90".into(),
        }
        .to_string();
        assert!(arch.contains("sm_120"), "{arch}");
        assert!(arch.contains("install a CUDA toolkit"), "{arch}");

        let oom = Error::OutOfMemory {
            device: "GPU 0 (NVIDIA H100 80GB HBM3)".into(),
            requested: 3 << 30,
            allocated: 1 << 20,
            reserved: 2 << 20,
            total: 80 << 30,
        }
        .to_string();
        assert_eq!(
            oom,
            "out of memory on GPU 0 (NVIDIA H100 80GB HBM3): tried to allocate 3.00 GiB \
             (3221225472 bytes); this process's buffers hold 1.00 MiB and its allocator reserves \
             2.00 MiB of the device's 80.00 GiB; drop buffers you no longer need, call \
             Gpu::empty_cache() to hand cached memory back to the driver, or process a smaller \
             batch"
        );

        let panic = Error::KernelPanic {
            kernel: "saxpy".into(),
            file: "examples/saxpy.rs".into(),
            line: 12,
            block: [3, 0, 0],
            thread: [17, 0, 0],
            message: "index out of bounds: the len is 100 but the index is 104".into(),
        }
        .to_string();
        assert_eq!(
            panic,
            "kernel `saxpy` panicked at examples/saxpy.rs:12 in block (3, 0, 0) thread \
             (17, 0, 0): index out of bounds: the len is 100 but the index is 104"
        );
        let unknown_file = Error::KernelPanic {
            kernel: "k".into(),
            file: String::new(),
            line: 3,
            block: [0, 1, 2],
            thread: [4, 5, 6],
            message: "attempt to divide by zero".into(),
        }
        .to_string();
        assert_eq!(
            unknown_file,
            "kernel `k` panicked at line 3 in block (0, 1, 2) thread (4, 5, 6): attempt to \
             divide by zero"
        );
    }
}
