//! Devices: opening a GPU, what it can do, and how much memory we hold on it.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cudarc::driver::result as driver;
use cudarc::driver::sys::{CUdevice_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::backend::Backend;
use crate::cache::CacheConfig;
use crate::checked::{ErrorSlot, PendingChecks};
use crate::cpu::CpuDevice;
use crate::error::{Error, Result};
use crate::launch::DeviceLimits;
use crate::loader::{guarded, Library};
use crate::modules::ModuleCache;
use crate::stream::Stream;

/// A device that runs kernels: a CUDA GPU, or the CPU backend ([`Gpu::cpu`]). Cheap to clone;
/// every handle to one device shares one context, one module cache and one set of memory
/// statistics.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

/// Any device: a CUDA GPU or the CPU backend.
pub type Device = Gpu;

pub(crate) struct GpuInner {
    pub(crate) info: DeviceInfo,
    pub(crate) memory: MemoryCounters,
    pub(crate) cache_config: RwLock<CacheConfig>,
    pub(crate) backend: BackendInner,
}

/// What only one backend has.
pub(crate) enum BackendInner {
    Cuda(CudaDevice),
    Cpu(CpuDevice),
}

/// A CUDA device's context, default stream, loaded modules and checked-mode state.
pub(crate) struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) default_stream: Arc<CudaStream>,
    pub(crate) modules: ModuleCache,
    /// The checked-mode error slot, allocated by the first checked module loaded.
    pub(crate) error_slot: OnceLock<ErrorSlot>,
    /// Checked launches on the default stream (shared by every handle to it).
    pub(crate) default_checks: Arc<PendingChecks>,
    /// Checked launches on any stream, for [`Gpu::synchronize`].
    pub(crate) device_checks: PendingChecks,
}

impl Gpu {
    /// Opens CUDA device `ordinal` (its primary context), or returns the already-open handle.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        // One Gpu per ordinal per process: cudarc tracks cross-stream ordering per CudaContext
        // object, so two objects for one device could each think they are single-stream.
        static OPEN: Mutex<Vec<Option<Gpu>>> = Mutex::new(Vec::new());
        let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(Some(gpu)) = open.get(ordinal) {
            return Ok(gpu.clone());
        }
        let gpu = guarded(Library::Driver, || Gpu::open(ordinal))?;
        if open.len() <= ordinal {
            open.resize(ordinal + 1, None);
        }
        open[ordinal] = Some(gpu.clone());
        Ok(gpu)
    }

    /// The CPU backend: runs each kernel's CPU twin on the host's cores, with CUDA semantics.
    /// Always available; every call returns the same device.
    pub fn cpu() -> Gpu {
        static CPU: OnceLock<Gpu> = OnceLock::new();
        CPU.get_or_init(|| Gpu {
            inner: Arc::new(GpuInner {
                info: crate::cpu::device_info(),
                memory: MemoryCounters::default(),
                cache_config: RwLock::new(CacheConfig::from_env()),
                backend: BackendInner::Cpu(CpuDevice::new()),
            }),
        })
        .clone()
    }

    /// Number of CUDA devices; `Err(NoDriver)` without a driver, `Ok(0)` with a driver but no GPU.
    pub fn count() -> Result<usize> {
        guarded(Library::Driver, count_unguarded)
    }

    fn open(ordinal: usize) -> Result<Gpu> {
        let available = count_unguarded()?;
        if ordinal >= available {
            return Err(Error::NoDevice {
                requested: ordinal,
                available,
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("creating a CUDA context"))?;
        let info = read_info(&ctx, ordinal).map_err(Error::driver("reading device attributes"))?;
        let default_stream = ctx.default_stream();
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                info,
                memory: MemoryCounters::default(),
                cache_config: RwLock::new(CacheConfig::from_env()),
                backend: BackendInner::Cuda(CudaDevice {
                    ctx,
                    default_stream,
                    modules: ModuleCache::default(),
                    error_slot: OnceLock::new(),
                    default_checks: Arc::default(),
                    device_checks: PendingChecks::default(),
                }),
            }),
        })
    }

    /// Which backend runs this device's kernels.
    pub fn backend(&self) -> Backend {
        match self.inner.backend {
            BackendInner::Cuda(_) => Backend::Cuda,
            BackendInner::Cpu(_) => Backend::Cpu,
        }
    }

    /// The device ordinal (0 for the CPU backend).
    pub fn ordinal(&self) -> usize {
        self.inner.info.ordinal
    }

    /// The device name, e.g. "NVIDIA H100 80GB HBM3" or "CPU backend (16 threads)".
    pub fn name(&self) -> &str {
        &self.inner.info.name
    }

    /// Compute capability as (major, minor); (0, 0) on the CPU backend, which compiles nothing.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.inner.info.compute_capability
    }

    /// Number of streaming multiprocessors (worker threads on the CPU backend).
    pub fn sm_count(&self) -> u32 {
        self.inner.info.sm_count
    }

    /// Total device memory in bytes (the host's memory on the CPU backend, 0 if unknown).
    pub fn total_memory(&self) -> usize {
        self.inner.info.total_memory
    }

    /// Everything known about the device, read once when it was opened.
    pub fn info(&self) -> DeviceInfo {
        self.inner.info.clone()
    }

    /// The limits launches are validated against (an H100's on the CPU backend, so a launch
    /// that runs there also runs on current GPUs).
    pub fn limits(&self) -> DeviceLimits {
        self.inner.info.limits()
    }

    /// The device's default (legacy NULL) stream.
    pub fn default_stream(&self) -> Stream {
        match &self.inner.backend {
            BackendInner::Cuda(cuda) => Stream::from_cuda(
                self.clone(),
                cuda.default_stream.clone(),
                cuda.default_checks.clone(),
            ),
            BackendInner::Cpu(cpu) => Stream::from_cpu(self.clone(), cpu.default_stream.clone()),
        }
    }

    /// A new non-blocking stream; buffers used across streams are ordered with events.
    pub fn new_stream(&self) -> Result<Stream> {
        match &self.inner.backend {
            BackendInner::Cuda(cuda) => {
                let stream = cuda
                    .ctx
                    .new_stream()
                    .map_err(Error::driver("creating a stream"))?;
                Ok(Stream::from_cuda(self.clone(), stream, Arc::default()))
            }
            BackendInner::Cpu(cpu) => Ok(Stream::from_cpu(self.clone(), cpu.new_stream())),
        }
    }

    /// Device memory currently held through this crate's buffers, and the peak.
    pub fn memory_stats(&self) -> MemoryStats {
        self.inner.memory.snapshot()
    }

    /// Restarts peak tracking from the current allocation.
    pub fn reset_peak_memory(&self) {
        self.inner.memory.reset_peak();
    }

    /// Blocks until all work on the device has finished; reports asynchronous kernel faults
    /// and checked-mode panics ([`Error::KernelPanic`]).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner.backend {
            BackendInner::Cuda(cuda) => {
                let through = cuda.device_checks.launched();
                cuda.ctx
                    .synchronize()
                    .map_err(Error::driver("synchronizing the device"))?;
                self.report_panics(&cuda.device_checks, through)
            }
            BackendInner::Cpu(cpu) => cpu.take_panic(None),
        }
    }

    /// The disk-cache setting used when kernels are compiled on first launch.
    pub fn cache_config(&self) -> CacheConfig {
        self.inner
            .cache_config
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Changes the disk-cache setting for later compilations on this device (initially from
    /// the environment, see [`CacheConfig::from_env`]).
    pub fn set_cache_config(&self, config: CacheConfig) {
        *self
            .inner
            .cache_config
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = config;
    }

    /// The CUDA parts, or an error naming `what` needed them on the CPU backend.
    pub(crate) fn cuda(&self, what: &'static str) -> Result<&CudaDevice> {
        match &self.inner.backend {
            BackendInner::Cuda(cuda) => Ok(cuda),
            BackendInner::Cpu(_) => Err(Error::CudaOnly { what }),
        }
    }

    /// The CPU backend's parts, when this is the CPU backend.
    pub(crate) fn cpu_device(&self) -> Option<&CpuDevice> {
        match &self.inner.backend {
            BackendInner::Cpu(cpu) => Some(cpu),
            BackendInner::Cuda(_) => None,
        }
    }

    /// The CUDA context.
    pub(crate) fn ctx(&self) -> Result<&Arc<CudaContext>> {
        self.cuda("a CUDA context").map(|cuda| &cuda.ctx)
    }

    /// Fails unless `other` is this device (`what` names the object for the message).
    pub(crate) fn check_same(&self, what: impl FnOnce() -> String, other: &Gpu) -> Result<()> {
        if self == other {
            Ok(())
        } else if self.backend() != other.backend() {
            Err(Error::WrongBackend {
                what: what(),
                expected: self.backend(),
                found: other.backend(),
            })
        } else {
            Err(Error::WrongDevice {
                what: what(),
                expected: self.ordinal(),
                found: other.ordinal(),
            })
        }
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend() {
            Backend::Cuda => write!(f, "Gpu({}: {})", self.ordinal(), self.name()),
            Backend::Cpu => write!(f, "Gpu(cpu: {})", self.name()),
        }
    }
}

impl PartialEq for Gpu {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Gpu {}

fn count_unguarded() -> Result<usize> {
    match driver::init() {
        Ok(()) => {}
        // cuInit reports "no device" rather than succeeding with zero devices.
        Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
        Err(source) => {
            return Err(Error::Driver {
                context: "initialising the CUDA driver (cuInit)",
                source,
            })
        }
    }
    let count = driver::device::get_count().map_err(Error::driver("counting devices"))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

fn read_info(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceInfo, DriverError> {
    use CUdevice_attribute as A;
    let attr = |a: A| -> Result<u32, DriverError> {
        ctx.attribute(a).map(|v| u32::try_from(v).unwrap_or(0))
    };
    // Some attributes are deprecated in newer drivers; missing ones are shown as unknown.
    let optional = |a: A| attr(a).ok().filter(|&v| v > 0);
    let (major, minor) = ctx.compute_capability()?;
    let pci_bus_id = format!(
        "{:04x}:{:02x}:{:02x}.0",
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID).unwrap_or(0),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID).unwrap_or(0),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID).unwrap_or(0),
    );
    let mut driver_version = 0;
    // SAFETY: cuDriverGetVersion writes one int through a valid pointer; the driver is loaded.
    let version_ok = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .is_ok();
    let driver_version = if version_ok {
        let v = u32::try_from(driver_version).unwrap_or(0);
        (v / 1000, (v % 1000) / 10)
    } else {
        (0, 0)
    };
    Ok(DeviceInfo {
        backend: Backend::Cuda,
        ordinal,
        name: ctx.name()?,
        compute_capability: (
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        ),
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        total_memory: ctx.total_mem()?,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_block_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        shared_mem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        shared_mem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .unwrap_or(0),
        shared_mem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            .unwrap_or(0),
        registers_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
        warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        l2_cache_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).unwrap_or(0),
        clock_rate_khz: optional(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_rate_khz: optional(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        memory_bus_width_bits: optional(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        ecc_enabled: attr(A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED).unwrap_or(0) != 0,
        integrated: attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED).unwrap_or(0) != 0,
        pci_bus_id,
        driver_version,
    })
}

/// Properties of a device, read once when it is opened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceInfo {
    /// Which backend the device is.
    pub backend: Backend,
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name.
    pub name: String,
    /// (major, minor).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Total memory, bytes.
    pub total_memory: usize,
    /// Threads per block, all dimensions together.
    pub max_threads_per_block: u32,
    /// Resident threads per multiprocessor.
    pub max_threads_per_sm: u32,
    /// Block dimension limits (x, y, z).
    pub max_block_dim: [u32; 3],
    /// Grid dimension limits (x, y, z).
    pub max_grid_dim: [u32; 3],
    /// Shared memory per block without opting in, bytes.
    pub shared_mem_per_block: u32,
    /// Shared memory per block after opting in, bytes.
    pub shared_mem_per_block_optin: u32,
    /// Shared memory per multiprocessor, bytes.
    pub shared_mem_per_sm: u32,
    /// 32-bit registers per block.
    pub registers_per_block: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// L2 cache, bytes.
    pub l2_cache_bytes: u32,
    /// Peak SM clock in kHz, if the driver reports it.
    pub clock_rate_khz: Option<u32>,
    /// Peak memory clock in kHz, if the driver reports it.
    pub memory_clock_rate_khz: Option<u32>,
    /// Memory bus width in bits, if the driver reports it.
    pub memory_bus_width_bits: Option<u32>,
    /// Whether ECC is on.
    pub ecc_enabled: bool,
    /// Whether the GPU shares memory with the host (e.g. Jetson).
    pub integrated: bool,
    /// PCI location, "domain:bus:device.function".
    pub pci_bus_id: String,
    /// CUDA driver API version as (major, minor), e.g. (13, 0).
    pub driver_version: (u32, u32),
}

impl DeviceInfo {
    /// The limits launches are validated against.
    pub fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            max_threads_per_block: self.max_threads_per_block,
            max_block_dim: self.max_block_dim,
            max_grid_dim: self.max_grid_dim,
            max_shared_mem_per_block: self.shared_mem_per_block,
            max_shared_mem_per_block_optin: self.shared_mem_per_block_optin,
        }
    }

    /// Theoretical DRAM bandwidth in GB/s (2 × memory clock × bus width, as deviceQuery does).
    pub fn memory_bandwidth_gb_s(&self) -> Option<f64> {
        let clock = f64::from(self.memory_clock_rate_khz?) * 1e3;
        let bytes = f64::from(self.memory_bus_width_bits?) / 8.0;
        Some(2.0 * clock * bytes / 1e9)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn kib(bytes: u32) -> String {
    format!("{} KiB", bytes / 1024)
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.backend == Backend::Cpu {
            return self.fmt_cpu(f);
        }
        let (major, minor) = self.compute_capability;
        let mhz = |khz: Option<u32>| match khz {
            Some(k) => format!("{} MHz", k / 1000),
            None => "unknown".to_string(),
        };
        writeln!(f, "CudaDeviceProperties(")?;
        writeln!(f, "    ordinal={},", self.ordinal)?;
        writeln!(f, "    name='{}',", self.name)?;
        writeln!(f, "    major={major}, minor={minor},  # sm_{major}{minor}")?;
        writeln!(
            f,
            "    total_memory={},  # {} bytes",
            mib(self.total_memory as u64),
            self.total_memory
        )?;
        writeln!(f, "    multi_processor_count={},", self.sm_count)?;
        writeln!(
            f,
            "    max_threads_per_block={}, max_threads_per_multi_processor={},",
            self.max_threads_per_block, self.max_threads_per_sm
        )?;
        writeln!(
            f,
            "    max_block_dim=({}, {}, {}), max_grid_dim=({}, {}, {}),",
            self.max_block_dim[0],
            self.max_block_dim[1],
            self.max_block_dim[2],
            self.max_grid_dim[0],
            self.max_grid_dim[1],
            self.max_grid_dim[2]
        )?;
        writeln!(
            f,
            "    shared_memory_per_block={}, shared_memory_per_block_optin={}, \
             shared_memory_per_multiprocessor={},",
            kib(self.shared_mem_per_block),
            kib(self.shared_mem_per_block_optin),
            kib(self.shared_mem_per_sm)
        )?;
        writeln!(
            f,
            "    regs_per_block={}, warp_size={}, L2_cache_size={},",
            self.registers_per_block,
            self.warp_size,
            mib(u64::from(self.l2_cache_bytes))
        )?;
        write!(
            f,
            "    clock_rate={}, memory_clock_rate={}, memory_bus_width=",
            mhz(self.clock_rate_khz),
            mhz(self.memory_clock_rate_khz)
        )?;
        match self.memory_bus_width_bits {
            Some(bits) => writeln!(f, "{bits} bits,")?,
            None => writeln!(f, "unknown,")?,
        }
        if let Some(bw) = self.memory_bandwidth_gb_s() {
            writeln!(f, "    memory_bandwidth={bw:.0} GB/s,  # theoretical")?;
        }
        writeln!(
            f,
            "    ecc_enabled={}, integrated={}, pci_bus_id='{}', driver_version={}.{}",
            self.ecc_enabled,
            self.integrated,
            self.pci_bus_id,
            self.driver_version.0,
            self.driver_version.1
        )?;
        write!(f, ")")
    }
}

impl DeviceInfo {
    /// The CPU backend's properties: worker threads, host memory, and the launch limits it
    /// enforces (an H100's).
    fn fmt_cpu(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "CpuBackendProperties(")?;
        writeln!(f, "    name='{}',", self.name)?;
        writeln!(
            f,
            "    worker_threads={},  # blocks run in parallel, one per worker",
            self.sm_count
        )?;
        writeln!(
            f,
            "    host_memory={},  # {} bytes",
            mib(self.total_memory as u64),
            self.total_memory
        )?;
        writeln!(
            f,
            "    max_threads_per_block={}, max_block_dim=({}, {}, {}), max_grid_dim=({}, {}, {}),",
            self.max_threads_per_block,
            self.max_block_dim[0],
            self.max_block_dim[1],
            self.max_block_dim[2],
            self.max_grid_dim[0],
            self.max_grid_dim[1],
            self.max_grid_dim[2]
        )?;
        writeln!(
            f,
            "    shared_memory_per_block={}, shared_memory_per_block_optin={}, warp_size={},",
            kib(self.shared_mem_per_block),
            kib(self.shared_mem_per_block_optin),
            self.warp_size
        )?;
        writeln!(
            f,
            "    # launch limits are an H100's (sm_90): a launch valid here is valid there"
        )?;
        write!(f, ")")
    }
}

/// Device memory held through this crate's buffers on one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemoryStats {
    /// Bytes currently allocated.
    pub allocated_bytes: usize,
    /// Most bytes allocated at once since the device was opened (or the peak was reset).
    pub peak_bytes: usize,
    /// Buffers currently alive.
    pub live_buffers: usize,
}

impl fmt::Display for MemoryStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} allocated in {} buffer(s), peak {}",
            mib(self.allocated_bytes as u64),
            self.live_buffers,
            mib(self.peak_bytes as u64)
        )
    }
}

/// Lock-free counters behind [`MemoryStats`].
#[derive(Debug, Default)]
pub(crate) struct MemoryCounters {
    allocated: AtomicUsize,
    peak: AtomicUsize,
    live: AtomicUsize,
}

impl MemoryCounters {
    pub(crate) fn add(&self, bytes: usize) {
        let now = self.allocated.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
        self.live.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn sub(&self, bytes: usize) {
        self.allocated.fetch_sub(bytes, Ordering::Relaxed);
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> MemoryStats {
        MemoryStats {
            allocated_bytes: self.allocated.load(Ordering::Relaxed),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            live_buffers: self.live.load(Ordering::Relaxed),
        }
    }

    fn reset_peak(&self) {
        self.peak
            .store(self.allocated.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceInfo {
        DeviceInfo {
            backend: Backend::Cuda,
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 85_029_158_912,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [2_147_483_647, 65_535, 65_535],
            shared_mem_per_block: 49_152,
            shared_mem_per_block_optin: 232_448,
            shared_mem_per_sm: 233_472,
            registers_per_block: 65_536,
            warp_size: 32,
            l2_cache_bytes: 52_428_800,
            clock_rate_khz: Some(1_980_000),
            memory_clock_rate_khz: Some(2_619_000),
            memory_bus_width_bits: Some(5120),
            ecc_enabled: true,
            integrated: false,
            pci_bus_id: "0000:19:00.0".into(),
            driver_version: (13, 0),
        }
    }

    #[test]
    fn info_display_is_readable() {
        let text = h100().to_string();
        assert!(text.starts_with("CudaDeviceProperties(\n"), "{text}");
        assert!(text.contains("name='NVIDIA H100 80GB HBM3'"), "{text}");
        assert!(text.contains("major=9, minor=0"), "{text}");
        assert!(text.contains("multi_processor_count=132"), "{text}");
        assert!(
            text.contains("shared_memory_per_block_optin=227 KiB"),
            "{text}"
        );
        assert!(text.contains("memory_bandwidth=3352 GB/s"), "{text}");
        assert!(text.lines().count() > 8, "{text}");
        assert_eq!(h100().limits(), DeviceLimits::SM_90);
    }

    #[test]
    fn memory_counters_track_peak() {
        let counters = MemoryCounters::default();
        counters.add(100);
        counters.add(50);
        counters.sub(100);
        let stats = counters.snapshot();
        assert_eq!(
            stats,
            MemoryStats {
                allocated_bytes: 50,
                peak_bytes: 150,
                live_buffers: 1
            }
        );
        counters.reset_peak();
        assert_eq!(counters.snapshot().peak_bytes, 50);
        assert!(stats.to_string().contains("1 buffer(s)"));
    }

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // This machine (and CI) has no libcuda; a GPU machine skips the assertion.
        // SAFETY: only probes for the library.
        if unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: a CUDA driver is installed here");
            return;
        }
        assert!(matches!(Gpu::count(), Err(Error::NoDriver)));
        assert!(matches!(Gpu::new(0), Err(Error::NoDriver)));
        assert!(matches!(Gpu::new(7), Err(Error::NoDriver)));
    }
}
