//! A CUDA stream with its checked-launch count, making one on a device, synchronizing, and
//! the launch itself.

use std::cell::RefMut;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUevent_flags, CUstreamCaptureStatus};
use cudarc::driver::{CudaStream, DeviceRepr, LaunchArgs, PushKernelArg};
use cudarc::nvrtc::Ptx;

use crate::core::cache::CacheConfig;
use crate::core::checks::{resolve_checked, PendingChecks};
use crate::core::error::{Error, Result};
use crate::core::generic::TemplateArg;
use crate::core::kernel::KernelSpec;
use crate::core::launch::{plan_for_function, DeviceLimits, LaunchConfig, SharedMemPlan};
use crate::core::scalar::ScalarValue;
use crate::core::value::ValueBytes;
use crate::cuda::device::CudaDevice;
use crate::cuda::event::CudaMarker;
use crate::cuda::grid_word::GridWord;
use crate::cuda::memory::{CudaMemory, EncodedTensorMap, LaunchMemory};

/// A CUDA stream and the checked launches queued on it.
#[derive(Clone)]
pub(crate) struct CudaQueue {
    pub(crate) stream: Arc<CudaStream>,
    /// Checked launches queued here, shared by every handle to this queue.
    pub(crate) checks: Arc<PendingChecks>,
    /// The word its cooperative launches meet at in `grid_sync`.
    pub(crate) grid_word: Arc<GridWord>,
}

/// A launch argument unpacked into storage that outlives cudarc's launch builder.
pub(crate) enum CudaArg<'s> {
    Scalar(ScalarValue),
    /// A by-value array or struct: the kernel parameter is a copy of these bytes.
    Value(&'s dyn ValueBytes),
    Slice(&'s dyn LaunchMemory, u64),
    SliceMut(RefMut<'s, dyn LaunchMemory>, u64),
    /// A `#[constant]` table's bytes, passed by value: the driver reads the parameter's size
    /// from its first byte on.
    Constant(&'s [u8]),
    /// A tensor map: its descriptor by value, then its buffer's pointer (read) and length.
    TensorMap(&'s EncodedTensorMap, &'s dyn LaunchMemory, u64),
}

impl CudaDevice {
    /// The device's default (legacy NULL) stream.
    pub(crate) fn default_queue(&self) -> CudaQueue {
        CudaQueue::new(
            self.default_stream.clone(),
            self.default_checks.clone(),
            self.default_grid_word.clone(),
        )
    }

    /// A new non-blocking stream.
    pub(crate) fn new_queue(&self) -> Result<CudaQueue> {
        let stream = self
            .ctx
            .new_stream()
            .map_err(Error::driver("creating a stream"))?;
        Ok(CudaQueue::new(stream, Arc::default(), Arc::default()))
    }

    /// Blocks until all work on the device has finished; reports faults and checked-mode
    /// panics.
    pub(crate) fn synchronize(&self) -> Result<()> {
        let through = self.device_checks.launched();
        let gate = self.capture_gate.synchronizing()?;
        self.ctx
            .synchronize()
            .map_err(Error::driver("synchronizing the device"))?;
        drop(gate);
        self.report_panics(&self.device_checks, through)
    }
}

impl CudaQueue {
    pub(crate) fn new(
        stream: Arc<CudaStream>,
        checks: Arc<PendingChecks>,
        grid_word: Arc<GridWord>,
    ) -> CudaQueue {
        CudaQueue {
            stream,
            checks,
            grid_word,
        }
    }

    /// The driver's handle, for messages.
    pub(crate) fn handle(&self) -> cudarc::driver::sys::CUstream {
        self.stream.cu_stream()
    }

    /// Blocks until the work queued so far has finished; reports faults and checked-mode
    /// panics.
    pub(crate) fn synchronize(&self, device: &CudaDevice) -> Result<()> {
        let through = self.checks.launched();
        self.stream.synchronize().map_err(Error::driver(
            "synchronizing a stream (a kernel may have faulted)",
        ))?;
        device.report_panics(&self.checks, through)
    }

    /// Records an event (timing enabled) after the work queued so far.
    pub(crate) fn record_event(&self) -> Result<CudaMarker> {
        let through = self.checks.launched();
        let event = self
            .stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(Error::driver("recording an event"))?;
        let check = self
            .checks
            .pending(through)
            .then(|| (self.checks.clone(), through));
        Ok(CudaMarker { event, check })
    }

    /// Records a timing event after the work queued so far, re-recording `reuse` when given
    /// so a profiled loop does not create an event per launch; `None` while the stream is
    /// being captured into a graph, where an event's time would not be that of a run.
    pub(crate) fn record_timing(&self, reuse: Option<CudaMarker>) -> Result<Option<CudaMarker>> {
        let status = self
            .stream
            .capture_status()
            .map_err(Error::driver("querying a stream's capture status"))?;
        if status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Ok(None);
        }
        let event = match reuse {
            Some(marker) => {
                marker
                    .event
                    .record(&self.stream)
                    .map_err(Error::driver("recording a timing event"))?;
                marker.event
            }
            None => self
                .stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(Error::driver("recording a timing event"))?,
        };
        Ok(Some(CudaMarker { event, check: None }))
    }

    /// Makes later work wait for `marker`, without blocking the host; CUDA lets a stream wait
    /// for an event of another device.
    pub(crate) fn wait(&self, marker: &CudaMarker) -> Result<()> {
        self.stream
            .wait(&marker.event)
            .map_err(Error::driver("making a stream wait for an event"))
    }

    /// Launches `kernel` with `args`, already checked against its parameters and the device:
    /// compiles it on first use, opts it into the dynamic shared memory `config` asks for, and
    /// counts the launch for checked mode.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch(
        &self,
        device: &CudaDevice,
        kernel: &'static KernelSpec,
        template_args: &[TemplateArg],
        config: LaunchConfig,
        limits: &DeviceLimits,
        cache: impl FnOnce() -> CacheConfig,
        args: &mut [CudaArg<'_>],
    ) -> Result<()> {
        let checked = resolve_checked(config.checked, kernel.checked_by_default());
        let loaded = device.loaded_kernel(kernel, checked, template_args, cache)?;
        // A launch that fits runs the 32-bit body's own entry, where the kernel has one.
        let loaded = match (&loaded.fits, args.last()) {
            (Some(fits), Some(CudaArg::Scalar(ScalarValue::U32(1)))) => fits.clone(),
            _ => loaded,
        };
        let plan = plan_for_function(kernel.name(), &config, limits, &loaded.limits)?;
        if let SharedMemPlan::OptIn(bytes) = plan {
            loaded.allow_dynamic_shared_mem(&device.ctx, bytes)?;
        }
        // A kernel that reaches grid_sync: its blocks must all fit, and it takes its stream's
        // barrier word as a hidden last parameter.
        let grid_word = if kernel.cooperative() {
            device.check_resident(kernel, &loaded, &config)?;
            // A kernel that can panic may leave the word part-way (see `grid_word`).
            Some(self.grid_word.for_launch(&self.stream, loaded.has_checks)?)
        } else {
            None
        };

        let cuda_config = cuda_config(&config);
        let mut builder = self.stream.launch_builder(&loaded.function);
        for arg in args.iter_mut() {
            match arg {
                CudaArg::Scalar(value) => push_scalar(&mut builder, value),
                CudaArg::Value(value) => push_value(&mut builder, *value),
                CudaArg::Constant(bytes) => {
                    // Tables have at least one element (the macro rejects `[T; 0]`).
                    if let Some(first) = bytes.first() {
                        builder.arg(first);
                    }
                }
                CudaArg::Slice(memory, len) => {
                    memory.push(&mut builder);
                    builder.arg(&*len);
                }
                CudaArg::SliceMut(memory, len) => {
                    memory.push_mut(&mut builder);
                    builder.arg(&*len);
                }
                CudaArg::TensorMap(map, memory, len) => {
                    builder.arg(*map);
                    memory.push(&mut builder);
                    builder.arg(&*len);
                }
            }
        }
        if let Some(word) = &grid_word {
            builder.arg(word);
        }
        // SAFETY: the arguments match the kernel's parameters (instantiated for a generic one)
        // in number, kind, element type and mutability (checked by the caller), and the macro
        // emits the entry (or the template NVRTC instantiated and lowered) with exactly that
        // ABI: scalars by value, arrays and structs by value as their bytes in the C layout the
        // CUDA struct is asserted to have, each slice as a device pointer plus its u64 length,
        // which generated kernels bound-check against, each `#[constant]` table by value as a
        // struct of exactly its `[T; N]` (so the driver's read of the parameter's size from the
        // table's first byte stays within it), each `&TensorMap<T>` as its driver-encoded
        // 128-byte descriptor by value (`__grid_constant__`, 64-byte aligned on the host as the
        // parameter is on the device) then its buffer's pointer and length; the descriptor
        // names that buffer, which the map borrows. Every pointer is a live allocation on this
        // stream's device, kept alive by the borrows in `args`; cudarc orders the launch after
        // pending writes to the buffers (and records its own) through their events. The lengths,
        // scalar values, value bytes and tables live in `args`, which outlives `builder`. A
        // cooperative kernel's hidden last parameter is its stream's grid-barrier word, a live
        // zero-initialised `u32` allocation of this device, kept while the stream lives; the
        // grid was checked to be co-resident, which cuLaunchCooperativeKernel also enforces.
        let launched = match grid_word {
            Some(_) => unsafe { builder.launch_cooperative(cuda_config) },
            None => unsafe { builder.launch(cuda_config) },
        };
        launched.map_err(|source| Error::Launch {
            kernel: kernel.name(),
            source: source.into(),
        })?;
        self.checks.note_kernel_launch();
        if loaded.has_checks {
            self.checks.note_launch();
            device.device_checks.note_launch();
        }
        Ok(())
    }
}

impl CudaQueue {
    /// Host time of `launches` launches of the entry `entry` of `ptx`, a kernel with parameters
    /// `(f32, &mut [f32])`, through cudarc alone: its own module, no argument checks, no module
    /// cache, no checked-mode count. The reference for the launch path's overhead.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn raw_launches(
        &self,
        device: &CudaDevice,
        ptx: String,
        entry: &str,
        config: LaunchConfig,
        a: f32,
        y: &mut CudaMemory<f32>,
        len: u64,
        launches: u32,
    ) -> Result<Duration> {
        let module = device
            .ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(Error::driver("loading the reference module"))?;
        let function = module
            .load_function(entry)
            .map_err(Error::driver("finding the reference kernel"))?;
        let cuda_config = cuda_config(&config);
        let start = Instant::now();
        for _ in 0..launches {
            let mut builder = self.stream.launch_builder(&function);
            builder.arg(&a);
            y.push_mut(&mut builder);
            builder.arg(&len);
            // SAFETY: the caller's kernel takes `(f32, &mut [f32])`, which the ABI passes as
            // the f32, the device pointer and its u64 length, pushed here in that order; `y`
            // is a live allocation of `len` f32 on this device, borrowed mutably for the loop.
            unsafe { builder.launch(cuda_config) }.map_err(|source| Error::Launch {
                kernel: "launch-overhead reference",
                source: source.into(),
            })?;
        }
        Ok(start.elapsed())
    }
}

/// `config` as cudarc's launch takes it.
fn cuda_config(config: &LaunchConfig) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (config.grid.x, config.grid.y, config.grid.z),
        block_dim: (config.block.x, config.block.y, config.block.z),
        shared_mem_bytes: config.shared_mem_bytes,
    }
}

/// One byte of a by-value argument, as cudarc pushes a parameter: by the address of its first
/// byte (the driver copies the parameter's size from there).
#[repr(transparent)]
struct ParamByte(std::mem::MaybeUninit<u8>);

// SAFETY: only ever pushed as the first byte of a Value's bytes, which the kernel's parameter
// of that Value type (checked at launch) reads in the same C layout.
unsafe impl DeviceRepr for ParamByte {}

fn push_value<'b>(builder: &mut LaunchArgs<'b>, value: &'b dyn ValueBytes) {
    // SAFETY: `as_ptr` points at one or more readable bytes (ValueBytes' contract) living as
    // long as `value`; a MaybeUninit<u8> may hold any byte, padding included.
    let first = unsafe { &*value.as_ptr().cast::<ParamByte>() };
    builder.arg(first);
}

fn push_scalar<'b>(builder: &mut LaunchArgs<'b>, value: &'b ScalarValue) {
    match value {
        ScalarValue::Bool(v) => builder.arg(v),
        ScalarValue::I8(v) => builder.arg(v),
        ScalarValue::U8(v) => builder.arg(v),
        ScalarValue::I16(v) => builder.arg(v),
        ScalarValue::U16(v) => builder.arg(v),
        ScalarValue::I32(v) => builder.arg(v),
        ScalarValue::U32(v) => builder.arg(v),
        ScalarValue::I64(v) => builder.arg(v),
        ScalarValue::U64(v) => builder.arg(v),
        ScalarValue::F32(v) => builder.arg(v),
        ScalarValue::F64(v) => builder.arg(v),
        ScalarValue::F16(v) => builder.arg(v),
        ScalarValue::Bf16(v) => builder.arg(v),
    };
}
