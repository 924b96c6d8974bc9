//! Devices: opening a GPU (or the CPU backend) and what it can do. How much memory we hold on
//! it is `memory.rs`.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::core::backend::Backend;
use crate::core::cache::CacheConfig;
use crate::core::error::{Error, Result};
use crate::core::info::DeviceInfo;
use crate::core::launch::DeviceLimits;
use crate::core::memory::MemoryCounters;
use crate::dispatch::DeviceImpl;

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
    /// What only one backend has.
    pub(crate) device: DeviceImpl,
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
        let (device, info) = DeviceImpl::open_cuda(ordinal)?;
        let gpu = Gpu::with(info, device);
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
        CPU.get_or_init(|| {
            let (device, info) = DeviceImpl::cpu(false);
            Gpu::with(info, device)
        })
        .clone()
    }

    /// The CPU backend with the race checker on for every launch that does not turn it off
    /// ([`LaunchConfig::racecheck`](crate::LaunchConfig::racecheck)): a launch with a data
    /// race, a divergent barrier or a read of unwritten shared memory fails with
    /// [`Error::DataRace`](crate::Error::DataRace),
    /// [`Error::DivergentBarrier`](crate::Error::DivergentBarrier) or
    /// [`Error::UninitializedShared`](crate::Error::UninitializedShared). A device of its own
    /// (every call returns the same one), so other users of [`Gpu::cpu`] are not slowed down.
    pub fn cpu_racecheck() -> Gpu {
        static CPU: OnceLock<Gpu> = OnceLock::new();
        CPU.get_or_init(|| {
            let (device, info) = DeviceImpl::cpu(true);
            Gpu::with(info, device)
        })
        .clone()
    }

    /// Number of CUDA devices; `Err(NoDriver)` without a driver, `Ok(0)` with a driver but no GPU.
    pub fn count() -> Result<usize> {
        DeviceImpl::cuda_count()
    }

    fn with(info: DeviceInfo, device: DeviceImpl) -> Gpu {
        Gpu {
            inner: Arc::new(GpuInner {
                info,
                memory: MemoryCounters::default(),
                cache_config: RwLock::new(CacheConfig::from_env()),
                device,
            }),
        }
    }

    /// Which backend runs this device's kernels.
    pub fn backend(&self) -> Backend {
        self.inner.device.backend()
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

    /// Blocks until all work on the device has finished; reports asynchronous kernel faults
    /// and checked-mode panics ([`Error::KernelPanic`]).
    pub fn synchronize(&self) -> Result<()> {
        self.inner.device.synchronize()
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

    /// The backend's side of the device.
    pub(crate) fn device(&self) -> &DeviceImpl {
        &self.inner.device
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // This machine (and CI) has no libcuda; a GPU machine skips the assertion.
        if !matches!(Gpu::count(), Err(Error::NoDriver)) {
            eprintln!("skipped: a CUDA driver is installed here");
            return;
        }
        assert!(matches!(Gpu::new(0), Err(Error::NoDriver)));
        assert!(matches!(Gpu::new(7), Err(Error::NoDriver)));
    }
}
