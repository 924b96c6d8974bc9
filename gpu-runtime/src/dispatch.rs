//! Where the public types meet the backends: one enum per resource, each with a `Cuda` and a
//! `Cpu` variant, and the crate's only `match`es that pick a backend's code. [`crate::Gpu`],
//! [`crate::Stream`], [`crate::DeviceBuffer`], [`crate::PinnedBuffer`], [`crate::Event`] and
//! [`crate::Graph`] check what is backend-neutral themselves and call these methods for the
//! rest; a launch's arguments are unpacked by the front for the backend chosen here.
//!
//! A new backend operation is one method here, calling one function in `cuda/` and one in
//! `cpu/`. Enums rather than a trait object: a launch pays one predictable branch, no
//! indirect call and no allocation. This file imports the backends and `core/` only.

use std::sync::Arc;
use std::time::Instant;

use crate::core::backend::Backend;
use crate::core::cache::CacheConfig;
use crate::core::checks::{resolve_checked, resolve_racecheck};
use crate::core::compiled::ModuleOrigin;
use crate::core::error::{AllocFailure, Error, Result};
use crate::core::generic::TemplateArg;
use crate::core::info::DeviceInfo;
use crate::core::kernel::KernelSpec;
use crate::core::launch::{DeviceLimits, LaunchConfig};
use crate::core::scalar::Scalar;
use crate::core::value::Value;
use crate::cpu::{
    self, CpuArg, CpuBlockFn, CpuDevice, CpuKernelFn, CpuLaunch, CpuStream, HostBuffer,
};
use crate::cuda::device::CudaDevice;
use crate::cuda::event::CudaMarker;
use crate::cuda::graph::CudaReplay;
use crate::cuda::memory::{CudaMemory, CudaPinned};
use crate::cuda::stream::{CudaArg, CudaQueue};

mod comm;
pub(crate) use comm::CommImpl;

/// A device's backend state.
pub(crate) enum DeviceImpl {
    Cuda(CudaDevice),
    Cpu(CpuDevice),
}

impl DeviceImpl {
    /// Opens CUDA device `ordinal` and reads its properties.
    pub(crate) fn open_cuda(ordinal: usize) -> Result<(DeviceImpl, DeviceInfo)> {
        let (cuda, info) = CudaDevice::open(ordinal)?;
        Ok((DeviceImpl::Cuda(cuda), info))
    }

    /// The CPU backend and its properties; `racecheck` runs its launches under the race
    /// checker.
    pub(crate) fn cpu(racecheck: bool) -> (DeviceImpl, DeviceInfo) {
        (
            DeviceImpl::Cpu(CpuDevice::new(racecheck)),
            cpu::device_info(),
        )
    }

    /// Number of CUDA devices; `Err(NoDriver)` without a driver.
    pub(crate) fn cuda_count() -> Result<usize> {
        CudaDevice::count()
    }

    /// Which backend this is.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            DeviceImpl::Cuda(_) => Backend::Cuda,
            DeviceImpl::Cpu(_) => Backend::Cpu,
        }
    }

    /// The device's default stream.
    pub(crate) fn default_queue(&self) -> QueueImpl {
        match self {
            DeviceImpl::Cuda(cuda) => QueueImpl::Cuda(cuda.default_queue()),
            DeviceImpl::Cpu(cpu) => QueueImpl::Cpu(cpu.default_stream.clone()),
        }
    }

    /// A new stream.
    pub(crate) fn new_queue(&self) -> Result<QueueImpl> {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.new_queue().map(QueueImpl::Cuda),
            DeviceImpl::Cpu(cpu) => Ok(QueueImpl::Cpu(cpu.new_stream())),
        }
    }

    /// Blocks until all work on the device has finished; reports faults and panics.
    pub(crate) fn synchronize(&self) -> Result<()> {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.synchronize(),
            DeviceImpl::Cpu(cpu) => cpu.take_panic(None),
        }
    }

    /// Makes one variant of `kernel` ready to launch: compiled and loaded on CUDA, its twin
    /// found on the CPU backend.
    pub(crate) fn precompile(
        &self,
        kernel: &'static KernelSpec,
        twin: Option<CpuKernelFn>,
        template_args: &[TemplateArg],
        checked: bool,
        cache: &CacheConfig,
    ) -> Result<ModuleOrigin> {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.precompile(kernel, template_args, checked, cache),
            DeviceImpl::Cpu(_) => {
                cpu::twin_of(kernel, twin, template_args)?;
                Ok(ModuleOrigin::CpuTwin)
            }
        }
    }

    /// Drops the in-process compiled variants of `kernel` (nothing to drop on the CPU).
    pub(crate) fn forget_compiled(&self, kernel: &'static KernelSpec) {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.forget_compiled(kernel),
            DeviceImpl::Cpu(_) => {}
        }
    }

    /// Drops every in-process compiled kernel (nothing to drop on the CPU).
    pub(crate) fn clear_compiled(&self) {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.clear_compiled(),
            DeviceImpl::Cpu(_) => {}
        }
    }

    /// Bytes the backend's allocator holds from the driver, cached memory included; `None`
    /// where nothing is cached (the CPU backend, a GPU without memory pools), so what is
    /// reserved is what is allocated.
    pub(crate) fn reserved_bytes(&self) -> Option<usize> {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.reserved_bytes(),
            DeviceImpl::Cpu(_) => None,
        }
    }

    /// Hands cached device memory back to the driver (nothing is cached on the CPU).
    pub(crate) fn empty_cache(&self) -> Result<()> {
        match self {
            DeviceImpl::Cuda(cuda) => cuda.empty_cache(),
            DeviceImpl::Cpu(_) => Ok(()),
        }
    }

    /// `len` zeroed elements of page-locked memory (plain host memory on the CPU).
    pub(crate) fn pinned_zeroed<T: Value>(&self, len: usize) -> Result<PinnedImpl<T>> {
        match self {
            DeviceImpl::Cuda(cuda) => {
                let alloc_len = len.max(1);
                // cudarc asserts on sizes that overflow; check first so that is an error.
                checked_bytes::<T>(alloc_len)?;
                CudaPinned::zeroed(&cuda.ctx, alloc_len).map(PinnedImpl::Cuda)
            }
            DeviceImpl::Cpu(_) => HostBuffer::zeroed(len).map(PinnedImpl::Host),
        }
    }
}

/// A stream's backend queue.
#[derive(Clone)]
pub(crate) enum QueueImpl {
    Cuda(CudaQueue),
    Cpu(Arc<CpuStream>),
}

impl QueueImpl {
    /// The CUDA queue, `None` on the CPU backend.
    pub(crate) fn cuda(&self) -> Option<&CudaQueue> {
        match self {
            QueueImpl::Cuda(queue) => Some(queue),
            QueueImpl::Cpu(_) => None,
        }
    }

    /// Names the queue for `Debug`, on device `ordinal`.
    pub(crate) fn describe(&self, ordinal: usize) -> String {
        match self {
            QueueImpl::Cuda(queue) => format!("Stream({:?} on GPU {ordinal})", queue.handle()),
            QueueImpl::Cpu(stream) => format!("Stream({} on the CPU backend)", stream.id()),
        }
    }

    /// Blocks until the work queued so far has finished; reports faults and panics.
    pub(crate) fn synchronize(&self, device: &DeviceImpl) -> Result<()> {
        match (self, device) {
            (QueueImpl::Cuda(queue), DeviceImpl::Cuda(cuda)) => queue.synchronize(cuda),
            (QueueImpl::Cpu(stream), DeviceImpl::Cpu(cpu)) => {
                cpu.take_panic(Some((stream.id(), u64::MAX)))
            }
            // A stream is made by its own device.
            _ => Ok(()),
        }
    }

    /// Records an event after the work queued so far.
    pub(crate) fn record_event(&self) -> Result<MarkerImpl> {
        match self {
            QueueImpl::Cuda(queue) => queue.record_event().map(MarkerImpl::Cuda),
            QueueImpl::Cpu(stream) => Ok(MarkerImpl::Cpu {
                at: Instant::now(),
                stream: stream.id(),
                through: stream.launches(),
            }),
        }
    }

    /// Records a profiler's timing mark after the work queued so far, re-recording `reuse`
    /// (a mark of the same device) when given; `None` inside a graph capture, which cannot be
    /// timed this way. On the CPU backend, where work has run when it returns, the wall time.
    pub(crate) fn record_timing(&self, reuse: Option<MarkerImpl>) -> Result<Option<MarkerImpl>> {
        match self {
            QueueImpl::Cuda(queue) => {
                let reuse = match reuse {
                    Some(MarkerImpl::Cuda(marker)) => Some(marker),
                    _ => None,
                };
                Ok(queue.record_timing(reuse)?.map(MarkerImpl::Cuda))
            }
            QueueImpl::Cpu(stream) => Ok(Some(MarkerImpl::Cpu {
                at: Instant::now(),
                stream: stream.id(),
                through: stream.launches(),
            })),
        }
    }

    /// A number naming the queue on its device, the same for every handle to it.
    pub(crate) fn track(&self) -> u64 {
        match self {
            QueueImpl::Cuda(queue) => queue.handle() as usize as u64,
            QueueImpl::Cpu(stream) => stream.id(),
        }
    }

    /// Makes later work wait for `marker`, recorded on the `found` backend.
    pub(crate) fn wait(&self, marker: &MarkerImpl, found: Backend) -> Result<()> {
        match (self, marker) {
            (QueueImpl::Cuda(queue), MarkerImpl::Cuda(marker)) => queue.wait(marker),
            // CPU work has already run when its event is recorded.
            (QueueImpl::Cpu(_), MarkerImpl::Cpu { .. }) => Ok(()),
            _ => Err(Error::WrongBackend {
                what: "the event".to_string(),
                expected: self.backend(),
                found,
            }),
        }
    }

    fn backend(&self) -> Backend {
        match self {
            QueueImpl::Cuda(_) => Backend::Cuda,
            QueueImpl::Cpu(_) => Backend::Cpu,
        }
    }

    /// Runs or queues `launch` with the arguments, already checked against the kernel's
    /// parameters, the stream's device and its limits; the front unpacks them for the backend
    /// chosen here (`cpu_args` also returns the borrows to hold while the grid runs).
    pub(crate) fn launch<'s, G>(
        &self,
        device: &DeviceImpl,
        launch: Launch<'_>,
        cache: impl FnOnce() -> CacheConfig,
        cuda_args: impl FnOnce() -> Result<Vec<CudaArg<'s>>>,
        cpu_args: impl FnOnce() -> Result<(Vec<CpuArg>, G)>,
    ) -> Result<()> {
        let Launch {
            kernel,
            twin,
            block_twin,
            needs_sync,
            template_args,
            config,
            limits,
        } = launch;
        match (self, device) {
            (QueueImpl::Cuda(queue), DeviceImpl::Cuda(cuda)) => {
                let mut args = cuda_args()?;
                queue.launch(
                    cuda,
                    kernel,
                    template_args,
                    config,
                    &limits,
                    cache,
                    &mut args,
                )
            }
            (QueueImpl::Cpu(stream), DeviceImpl::Cpu(cpu)) => {
                let twin = cpu::twin_of(kernel, twin, template_args)?;
                let (args, borrows) = cpu_args()?;
                let launch = CpuLaunch {
                    kernel,
                    twin,
                    block_twin,
                    needs_sync,
                    template_args,
                    config,
                    limits,
                    checked: resolve_checked(config.checked, kernel.checked_by_default()),
                    racecheck: resolve_racecheck(config.racecheck, cpu.racecheck),
                };
                let result = cpu.launch(stream, launch, args);
                drop(borrows);
                result
            }
            // A stream is made by its own device.
            _ => Err(Error::WrongBackend {
                what: "the stream".to_string(),
                expected: device.backend(),
                found: self.backend(),
            }),
        }
    }

    /// The most blocks of `config`'s shape a cooperative launch of `kernel` may have: all
    /// resident at once (on a GPU, the occupancy times the multiprocessors; on the CPU
    /// backend, its thread budget).
    pub(crate) fn max_cooperative_blocks(
        &self,
        device: &DeviceImpl,
        kernel: &'static KernelSpec,
        template_args: &[TemplateArg],
        config: &LaunchConfig,
        limits: &DeviceLimits,
        cache: impl FnOnce() -> CacheConfig,
    ) -> Result<u32> {
        match (self, device) {
            (QueueImpl::Cuda(_), DeviceImpl::Cuda(cuda)) => {
                cuda.max_cooperative_blocks(kernel, template_args, config, limits, cache)
            }
            (QueueImpl::Cpu(_), DeviceImpl::Cpu(_)) => Ok(cpu::max_cooperative_blocks(
                config.block.x * config.block.y * config.block.z,
            )),
            _ => Err(Error::WrongBackend {
                what: "the stream".to_string(),
                expected: device.backend(),
                found: self.backend(),
            }),
        }
    }

    /// Captures the work `record` queues into a CUDA graph; the CPU backend has none.
    pub(crate) fn capture(
        &self,
        device: &DeviceImpl,
        record: impl FnOnce() -> Result<()>,
    ) -> Result<CudaReplay> {
        match (self, device) {
            (QueueImpl::Cuda(queue), DeviceImpl::Cuda(cuda)) => queue.capture(cuda, record),
            _ => Err(Error::CudaOnly {
                what: "capturing a CUDA graph",
            }),
        }
    }

    /// Queues one replay of a graph captured from this queue.
    pub(crate) fn replay(&self, device: &DeviceImpl, replay: &CudaReplay) -> Result<()> {
        match (self, device) {
            (QueueImpl::Cuda(queue), DeviceImpl::Cuda(cuda)) => queue.replay(cuda, replay),
            _ => Err(Error::CudaOnly {
                what: "launching a graph",
            }),
        }
    }
}

/// One launch, as the front hands it to a backend.
pub(crate) struct Launch<'k> {
    /// The kernel.
    pub(crate) kernel: &'static KernelSpec,
    /// Its CPU twin, if it has one.
    pub(crate) twin: Option<CpuKernelFn>,
    /// Its twin of a whole block, for a barrier-free kernel.
    pub(crate) block_twin: Option<CpuBlockFn>,
    /// Whether the twin synchronizes.
    pub(crate) needs_sync: bool,
    /// The instantiation's template arguments (empty for a plain kernel).
    pub(crate) template_args: &'k [TemplateArg],
    /// The grid, validated against `limits`.
    pub(crate) config: LaunchConfig,
    /// The device's limits.
    pub(crate) limits: DeviceLimits,
}

/// Bytes for `len` elements of `T`, or an error instead of an overflow.
pub(crate) fn checked_bytes<T>(len: usize) -> Result<usize> {
    let elem_bytes = std::mem::size_of::<T>();
    len.checked_mul(elem_bytes)
        // cudarc asserts a pinned allocation stays below isize::MAX bytes.
        .filter(|&bytes| bytes < isize::MAX as usize)
        .ok_or(Error::AllocationTooLarge { len, elem_bytes })
}

/// The error for memory that is not of its stream's backend; the device checks rule it out,
/// so this only guards against a broken invariant without panicking.
fn backend_mismatch<T: Value>(queue: &QueueImpl) -> Error {
    let backend = queue.backend();
    Error::WrongBackend {
        what: format!("a DeviceBuffer<{}>", T::ELEM),
        expected: backend,
        found: match backend {
            Backend::Cuda => Backend::Cpu,
            Backend::Cpu => Backend::Cuda,
        },
    }
}

/// The error for a stream that is not of its device's backend; a stream is made by its own
/// device, so this only guards against a broken invariant without panicking.
fn queue_mismatch(device: &DeviceImpl, queue: &QueueImpl) -> Error {
    Error::WrongBackend {
        what: "the stream".to_string(),
        expected: device.backend(),
        found: queue.backend(),
    }
}

/// A device buffer's memory.
pub(crate) enum MemoryImpl<T: Value> {
    Cuda(CudaMemory<T>),
    /// The CPU backend's memory: `len` elements, 64-byte aligned.
    Host(HostBuffer<T>),
}

impl<T: Value> MemoryImpl<T> {
    /// `len` zeroed elements on `queue` of `device`; `bytes` is the size of `alloc_len =
    /// max(len, 1)` of them.
    pub(crate) fn zeroed(
        device: &DeviceImpl,
        queue: &QueueImpl,
        len: usize,
        alloc_len: usize,
        bytes: usize,
    ) -> Result<Self, AllocFailure> {
        match (device, queue) {
            (DeviceImpl::Cuda(cuda), QueueImpl::Cuda(queue)) => {
                CudaMemory::zeroed(cuda, &queue.stream, alloc_len, bytes).map(MemoryImpl::Cuda)
            }
            (DeviceImpl::Cpu(_), QueueImpl::Cpu(_)) => HostBuffer::zeroed(len)
                .map(MemoryImpl::Host)
                .map_err(AllocFailure::from_host),
            _ => Err(AllocFailure::Other(queue_mismatch(device, queue))),
        }
    }

    /// A copy of non-empty `data`, of `bytes` bytes, on `queue` of `device`.
    pub(crate) fn from_host(
        device: &DeviceImpl,
        queue: &QueueImpl,
        data: &[T],
        bytes: usize,
    ) -> Result<Self, AllocFailure> {
        match (device, queue) {
            (DeviceImpl::Cuda(cuda), QueueImpl::Cuda(queue)) => {
                CudaMemory::from_host(cuda, &queue.stream, data, bytes).map(MemoryImpl::Cuda)
            }
            (DeviceImpl::Cpu(_), QueueImpl::Cpu(_)) => HostBuffer::from_slice(data)
                .map(MemoryImpl::Host)
                .map_err(AllocFailure::from_host),
            _ => Err(AllocFailure::Other(queue_mismatch(device, queue))),
        }
    }

    /// The CUDA memory, `None` on the CPU backend.
    pub(crate) fn cuda(&self) -> Option<&CudaMemory<T>> {
        match self {
            MemoryImpl::Cuda(memory) => Some(memory),
            MemoryImpl::Host(_) => None,
        }
    }

    /// The CUDA memory, for writing; `None` on the CPU backend.
    pub(crate) fn cuda_mut(&mut self) -> Option<&mut CudaMemory<T>> {
        match self {
            MemoryImpl::Cuda(memory) => Some(memory),
            MemoryImpl::Host(_) => None,
        }
    }

    /// The first element's host address, `None` for device memory.
    pub(crate) fn host_ptr(&self) -> Option<*mut u8> {
        match self {
            MemoryImpl::Cuda(_) => None,
            MemoryImpl::Host(memory) => Some(memory.as_ptr()),
        }
    }

    /// The elements of a non-empty buffer as a new vector (queued; the caller synchronizes).
    pub(crate) fn to_vec(&self, queue: &QueueImpl) -> Result<Vec<T>> {
        match (self, queue) {
            (MemoryImpl::Cuda(memory), QueueImpl::Cuda(queue)) => memory.to_vec(&queue.stream),
            (MemoryImpl::Host(memory), QueueImpl::Cpu(_)) => Ok(memory.as_slice().to_vec()),
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }

    /// Overwrites a non-empty buffer with `data`, of its length.
    pub(crate) fn write(&mut self, queue: &QueueImpl, data: &[T]) -> Result<()> {
        match (self, queue) {
            (MemoryImpl::Cuda(memory), QueueImpl::Cuda(queue)) => memory.write(&queue.stream, data),
            (MemoryImpl::Host(memory), QueueImpl::Cpu(_)) => {
                memory.as_mut_slice().copy_from_slice(data);
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }

    /// Sets the first `len` elements to `value` (queued on a GPU).
    pub(crate) fn fill(&mut self, queue: &QueueImpl, len: usize, value: T) -> Result<()>
    where
        T: Scalar,
    {
        match (self, queue) {
            (MemoryImpl::Cuda(memory), QueueImpl::Cuda(queue)) => {
                memory.fill(&queue.stream, len, value)
            }
            (MemoryImpl::Host(memory), QueueImpl::Cpu(_)) => {
                memory.as_mut_slice().fill(value);
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }

    /// Copies a non-empty buffer into `out`, of its length (queued; the caller synchronizes).
    pub(crate) fn read(&self, queue: &QueueImpl, out: &mut [T]) -> Result<()> {
        match (self, queue) {
            (MemoryImpl::Cuda(memory), QueueImpl::Cuda(queue)) => memory.read(&queue.stream, out),
            (MemoryImpl::Host(memory), QueueImpl::Cpu(_)) => {
                out.copy_from_slice(memory.as_slice());
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }

    /// Copies `src`, of this buffer's length, here; `src_backend` names its backend for the
    /// error.
    pub(crate) fn copy_from(
        &mut self,
        queue: &QueueImpl,
        src: &MemoryImpl<T>,
        src_backend: Backend,
    ) -> Result<()> {
        match (self, src, queue) {
            (MemoryImpl::Cuda(dst), MemoryImpl::Cuda(src), QueueImpl::Cuda(queue)) => {
                dst.copy_from(&queue.stream, src)
            }
            (MemoryImpl::Host(dst), MemoryImpl::Host(src), QueueImpl::Cpu(_)) => {
                dst.as_mut_slice().copy_from_slice(src.as_slice());
                Ok(())
            }
            _ => Err(Error::WrongBackend {
                what: format!("the source DeviceBuffer<{}>", T::ELEM),
                expected: queue.backend(),
                found: src_backend,
            }),
        }
    }

    /// Queues a copy from page-locked memory of this buffer's (non-zero) length.
    pub(crate) fn copy_from_pinned(
        &mut self,
        queue: &QueueImpl,
        src: &PinnedImpl<T>,
        len: usize,
    ) -> Result<()> {
        match (self, src, queue) {
            (MemoryImpl::Cuda(dst), PinnedImpl::Cuda(src), QueueImpl::Cuda(queue)) => {
                dst.copy_from_pinned(&queue.stream, src)
            }
            (MemoryImpl::Host(dst), src @ PinnedImpl::Host(_), QueueImpl::Cpu(_)) => {
                dst.as_mut_slice().copy_from_slice(src.as_slice(len)?);
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }

    /// Queues a copy into page-locked memory of this buffer's (non-zero) length.
    pub(crate) fn copy_to_pinned(
        &self,
        queue: &QueueImpl,
        dst: &mut PinnedImpl<T>,
        len: usize,
    ) -> Result<()> {
        match (self, dst, queue) {
            (MemoryImpl::Cuda(src), PinnedImpl::Cuda(dst), QueueImpl::Cuda(queue)) => {
                src.copy_to_pinned(&queue.stream, dst)
            }
            (MemoryImpl::Host(src), dst @ PinnedImpl::Host(_), QueueImpl::Cpu(_)) => {
                dst.as_mut_slice(len)?.copy_from_slice(src.as_slice());
                Ok(())
            }
            _ => Err(backend_mismatch::<T>(queue)),
        }
    }
}

/// Page-locked memory (plain host memory on the CPU backend, which copies synchronously, so
/// there is never a copy to wait for).
pub(crate) enum PinnedImpl<T: Value> {
    Cuda(CudaPinned<T>),
    Host(HostBuffer<T>),
}

impl<T: Value> PinnedImpl<T> {
    /// The first `len` elements, after waiting for copies into them.
    pub(crate) fn as_slice(&self, len: usize) -> Result<&[T]> {
        match self {
            PinnedImpl::Cuda(memory) => memory.as_slice(len),
            PinnedImpl::Host(memory) => Ok(memory.as_slice()),
        }
    }

    /// The first `len` elements, mutably, after waiting for copies out of them.
    pub(crate) fn as_mut_slice(&mut self, len: usize) -> Result<&mut [T]> {
        match self {
            PinnedImpl::Cuda(memory) => memory.as_mut_slice(len),
            PinnedImpl::Host(memory) => Ok(memory.as_mut_slice()),
        }
    }

    /// Blocks until every copy queued on this memory has finished.
    pub(crate) fn wait(&self) -> Result<()> {
        match self {
            PinnedImpl::Cuda(memory) => memory.wait(),
            PinnedImpl::Host(_) => Ok(()),
        }
    }
}

/// A recorded event.
#[derive(Debug)]
pub(crate) enum MarkerImpl {
    Cuda(CudaMarker),
    /// The CPU backend runs work when it is queued, so an event is the moment it was recorded,
    /// and the launches of stream `stream` numbered below `through` are the ones before it.
    Cpu {
        at: Instant,
        stream: u64,
        through: u64,
    },
}

impl MarkerImpl {
    /// Blocks until the work recorded before the event has finished.
    pub(crate) fn synchronize(&self) -> Result<()> {
        match self {
            MarkerImpl::Cuda(marker) => marker.synchronize(),
            MarkerImpl::Cpu { .. } => Ok(()),
        }
    }

    /// Milliseconds between this event and `later`, of the same device.
    pub(crate) fn elapsed_ms(&self, later: &MarkerImpl) -> Result<f32> {
        match (self, later) {
            (MarkerImpl::Cuda(start), MarkerImpl::Cuda(end)) => start.elapsed_ms(end),
            (MarkerImpl::Cpu { at: start, .. }, MarkerImpl::Cpu { at: end, .. }) => {
                // Signed, like cuEventElapsedTime when `later` was recorded first.
                Ok(match end.checked_duration_since(*start) {
                    Some(d) => (d.as_secs_f64() * 1e3) as f32,
                    None => -((start.duration_since(*end).as_secs_f64() * 1e3) as f32),
                })
            }
            // Same device implies same backend.
            _ => Err(Error::CudaOnly {
                what: "timing a CUDA event",
            }),
        }
    }

    /// Whether the recorded work has finished, without blocking.
    pub(crate) fn is_complete(&self) -> Result<bool> {
        match self {
            MarkerImpl::Cuda(marker) => marker.is_complete(),
            MarkerImpl::Cpu { .. } => Ok(true),
        }
    }

    /// After the event completed: reports a panic of the checked launches before it.
    pub(crate) fn report_panics(&self, device: &DeviceImpl) -> Result<()> {
        match (self, device) {
            (MarkerImpl::Cuda(marker), DeviceImpl::Cuda(cuda)) => marker.report_panics(cuda),
            (
                MarkerImpl::Cpu {
                    stream, through, ..
                },
                DeviceImpl::Cpu(cpu),
            ) => cpu.take_panic(Some((*stream, *through))),
            _ => Ok(()),
        }
    }
}
