//! Streams: ordered queues of copies and launches on one device, and the checked launch itself.

use std::cell::RefMut;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, LaunchArgs, PushKernelArg};

use crate::backend::Backend;
use crate::buffer::LaunchSlice;
use crate::checked::{resolve_checked, PendingChecks};
use crate::cpu::CpuStream;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::event::{Event, EventCheck, EventInner};
use crate::generic::{check_generic, check_template_args, instantiate_params, TemplateArg};
use crate::kernel::{check_args, ArgInner, Kernel, KernelArg, ParamKind};
use crate::launch::{plan_for_function, LaunchConfig, SharedMemPlan};
use crate::scalar::ScalarValue;

/// A queue of work on one device. Cheap to clone; clones share the queue. On the CPU backend
/// work runs when it is queued, so a stream is already synchronized when a call returns (but
/// checked-mode panics still surface at the next synchronizing call, as on a GPU).
#[derive(Clone)]
pub struct Stream {
    gpu: Gpu,
    pub(crate) inner: StreamInner,
}

/// The backend's queue.
#[derive(Clone)]
pub(crate) enum StreamInner {
    Cuda {
        stream: Arc<CudaStream>,
        /// Checked launches queued here, shared by every handle to this queue.
        checks: Arc<PendingChecks>,
    },
    Cpu(Arc<CpuStream>),
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            StreamInner::Cuda { stream, .. } => write!(
                f,
                "Stream({:?} on GPU {})",
                stream.cu_stream(),
                self.gpu.ordinal()
            ),
            StreamInner::Cpu(stream) => write!(f, "Stream({} on the CPU backend)", stream.id()),
        }
    }
}

/// A launch argument unpacked into storage that outlives cudarc's launch builder.
enum Slot<'s, 'a> {
    Scalar(ScalarValue),
    Slice(&'a dyn LaunchSlice, u64),
    SliceMut(RefMut<'s, &'a mut dyn LaunchSlice>, u64),
}

impl Stream {
    pub(crate) fn from_cuda(
        gpu: Gpu,
        stream: Arc<CudaStream>,
        checks: Arc<PendingChecks>,
    ) -> Stream {
        Stream {
            gpu,
            inner: StreamInner::Cuda { stream, checks },
        }
    }

    pub(crate) fn from_cpu(gpu: Gpu, stream: Arc<CpuStream>) -> Stream {
        Stream {
            gpu,
            inner: StreamInner::Cpu(stream),
        }
    }

    /// The cudarc stream, `None` on the CPU backend.
    pub(crate) fn cuda_stream(&self) -> Option<&Arc<CudaStream>> {
        match &self.inner {
            StreamInner::Cuda { stream, .. } => Some(stream),
            StreamInner::Cpu(_) => None,
        }
    }

    /// The device this stream runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Blocks until all work queued so far has finished; reports asynchronous kernel faults
    /// and checked-mode panics ([`Error::KernelPanic`]).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            StreamInner::Cuda { stream, checks } => {
                let through = checks.launched();
                stream.synchronize().map_err(Error::driver(
                    "synchronizing a stream (a kernel may have faulted)",
                ))?;
                self.gpu.report_panics(checks, through)
            }
            StreamInner::Cpu(stream) => match self.gpu.cpu_device() {
                Some(cpu) => cpu.take_panic(Some((stream.id(), u64::MAX))),
                None => Ok(()),
            },
        }
    }

    /// Records an event (timing enabled) after the work queued so far.
    pub fn record_event(&self) -> Result<Event> {
        match &self.inner {
            StreamInner::Cuda { stream, checks } => {
                let through = checks.launched();
                let inner = stream
                    .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                    .map_err(Error::driver("recording an event"))?;
                let check = checks.pending(through).then(|| EventCheck::Cuda {
                    checks: checks.clone(),
                    through,
                });
                Ok(Event {
                    inner: EventInner::Cuda(inner),
                    gpu: self.gpu.clone(),
                    check,
                })
            }
            StreamInner::Cpu(stream) => Ok(Event {
                inner: EventInner::Cpu(Instant::now()),
                gpu: self.gpu.clone(),
                check: Some(EventCheck::Cpu {
                    stream: stream.id(),
                    through: stream.launches(),
                }),
            }),
        }
    }

    /// Makes later work on this stream wait for `event`, without blocking the host.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        match (&self.inner, &event.inner) {
            // CUDA lets a stream wait for an event of another device.
            (StreamInner::Cuda { stream, .. }, EventInner::Cuda(event)) => stream
                .wait(event)
                .map_err(Error::driver("making a stream wait for an event")),
            // CPU work has already run when its event is recorded.
            (StreamInner::Cpu(_), EventInner::Cpu(_)) => Ok(()),
            _ => Err(Error::WrongBackend {
                what: "the event".to_string(),
                expected: self.gpu.backend(),
                found: event.gpu.backend(),
            }),
        }
    }

    /// Fails unless an object on device `gpu` may be used with this stream.
    pub(crate) fn check_device(&self, what: impl FnOnce() -> String, gpu: &Gpu) -> Result<()> {
        self.gpu.check_same(what, gpu)
    }

    /// Launches `kernel` after checking the arguments against its parameters, the buffers'
    /// devices and `config` against the device; compiles the kernel on first use.
    ///
    /// Runs in checked mode when `config.checked`, else `GPU_CHECKED`, else the kernel's
    /// default says so; a failed check is reported by the next synchronizing call. On the CPU
    /// backend the kernel's CPU twin runs the whole grid before this returns, always checked;
    /// a deadlock or a panic in the twin is this call's [`Error::CpuBackend`].
    pub fn launch(
        &self,
        kernel: &'static Kernel,
        config: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        check_generic(kernel, false)?;
        self.launch_variant(kernel, &[], kernel.params(), config, args)
    }

    /// Launches a generic kernel instantiated with `template_args` (types and consts in the
    /// order the kernel declares them); each instantiation compiles once.
    pub fn launch_generic(
        &self,
        kernel: &'static Kernel,
        template_args: &[TemplateArg],
        config: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        check_template_args(kernel, template_args)?;
        let params = instantiate_params(kernel, template_args)?;
        self.launch_variant(kernel, template_args, &params, config, args)
    }

    fn launch_variant(
        &self,
        kernel: &'static Kernel,
        template_args: &[TemplateArg],
        params: &[ParamKind],
        config: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        let kinds: Vec<ParamKind> = args.iter().map(KernelArg::kind).collect();
        check_args(kernel.name(), params, &kinds)?;
        for (index, arg) in args.iter().enumerate() {
            let what = || format!("argument {index} of kernel `{}`", kernel.name());
            match &arg.inner {
                ArgInner::Scalar(..) => {}
                ArgInner::Slice(buf) => self.check_device(what, buf.gpu())?,
                ArgInner::SliceMut(buf) => self.check_device(what, buf.borrow().gpu())?,
            }
        }
        let limits = self.gpu.limits();
        limits.validate(&config)?;

        let (stream, checks) = match &self.inner {
            StreamInner::Cuda { stream, checks } => (stream, checks),
            StreamInner::Cpu(stream) => {
                return crate::cpu::launch(&self.gpu, stream, kernel, template_args, config, args)
            }
        };

        let checked = resolve_checked(config.checked, kernel.checked_by_default());
        let loaded = self.gpu.loaded_kernel(kernel, checked, template_args)?;
        let plan = plan_for_function(kernel.name(), &config, &limits, &loaded.limits)?;
        if let SharedMemPlan::OptIn(bytes) = plan {
            loaded.allow_dynamic_shared_mem(self.gpu.ctx()?, bytes)?;
        }

        let mut slots = Vec::with_capacity(args.len());
        for arg in args {
            slots.push(match &arg.inner {
                ArgInner::Scalar(_, value) => Slot::Scalar(*value),
                ArgInner::Slice(buf) => Slot::Slice(*buf, buf.len() as u64),
                ArgInner::SliceMut(cell) => {
                    let buf = cell.try_borrow_mut().map_err(|_| Error::InvalidKernel {
                        kernel: kernel.name().to_string(),
                        reason: "a mutable argument is already borrowed (launch re-entered)"
                            .to_string(),
                    })?;
                    let len = buf.len() as u64;
                    Slot::SliceMut(buf, len)
                }
            });
        }

        let cuda_config = cudarc::driver::LaunchConfig {
            grid_dim: (config.grid.x, config.grid.y, config.grid.z),
            block_dim: (config.block.x, config.block.y, config.block.z),
            shared_mem_bytes: config.shared_mem_bytes,
        };
        let mut builder = stream.launch_builder(&loaded.function);
        for slot in slots.iter_mut() {
            let pushed = match slot {
                Slot::Scalar(value) => {
                    push_scalar(&mut builder, value);
                    true
                }
                Slot::Slice(buf, len) => {
                    let pushed = buf.push_ptr(&mut builder);
                    builder.arg(&*len);
                    pushed
                }
                Slot::SliceMut(buf, len) => {
                    let pushed = buf.push_ptr_mut(&mut builder);
                    builder.arg(&*len);
                    pushed
                }
            };
            if !pushed {
                // Unreachable: every buffer was checked to be on this CUDA device.
                return Err(Error::WrongBackend {
                    what: format!("a buffer argument of kernel `{}`", kernel.name()),
                    expected: Backend::Cuda,
                    found: Backend::Cpu,
                });
            }
        }
        // SAFETY: the arguments match `params` (the kernel's, instantiated for a generic one)
        // in number, kind, element type and mutability (checked above), and the macro emits the
        // entry (or the template NVRTC instantiated and lowered) with exactly that ABI: scalars
        // by value, each slice as a device pointer plus its u64 length, which generated kernels
        // bound-check against. Every pointer is a live allocation on this stream's device, kept
        // alive by the borrows in `slots`; cudarc orders the launch after pending writes to the
        // buffers (and records its own) through their events. The lengths and scalar values
        // live in `slots`, which outlives `builder`.
        unsafe { builder.launch(cuda_config) }.map_err(|source| Error::Launch {
            kernel: kernel.name(),
            source,
        })?;
        checks.note_kernel_launch();
        if loaded.has_checks {
            checks.note_launch();
            self.gpu
                .cuda("counting checked launches")?
                .device_checks
                .note_launch();
        }
        Ok(())
    }
}

fn push_scalar<'b>(builder: &mut LaunchArgs<'b>, value: &'b ScalarValue) {
    match value {
        ScalarValue::Bool(v) => builder.arg(v),
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
