//! Streams: ordered queues of copies and launches on one device, and the launch checks every
//! backend shares.

use std::fmt;

use crate::core::error::Result;
use crate::core::generic::{check_generic, check_template_args, instantiate_params, TemplateArg};
use crate::core::kernel::{check_args, ParamKind};
use crate::core::launch::LaunchConfig;
use crate::device::Gpu;
use crate::dispatch::{Launch, QueueImpl};
use crate::event::Event;
use crate::kernel::{cpu_args, cuda_args, ArgInner, Kernel, KernelArg};

/// A queue of work on one device. Cheap to clone; clones share the queue. On the CPU backend
/// work runs when it is queued, so a stream is already synchronized when a call returns (but
/// checked-mode panics still surface at the next synchronizing call, as on a GPU).
#[derive(Clone)]
pub struct Stream {
    gpu: Gpu,
    pub(crate) queue: QueueImpl,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.queue.describe(self.gpu.ordinal()))
    }
}

impl Stream {
    pub(crate) fn new(gpu: Gpu, queue: QueueImpl) -> Stream {
        Stream { gpu, queue }
    }

    /// The device this stream runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Blocks until all work queued so far has finished; reports asynchronous kernel faults
    /// and checked-mode panics ([`crate::Error::KernelPanic`]).
    pub fn synchronize(&self) -> Result<()> {
        self.queue.synchronize(self.gpu.device())
    }

    /// Records an event (timing enabled) after the work queued so far.
    pub fn record_event(&self) -> Result<Event> {
        Ok(Event {
            marker: self.queue.record_event()?,
            gpu: self.gpu.clone(),
        })
    }

    /// Makes later work on this stream wait for `event`, without blocking the host.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.queue.wait(&event.marker, event.gpu.backend())
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
    /// a deadlock or a panic in the twin is this call's [`crate::Error::CpuBackend`].
    pub fn launch(
        &self,
        kernel: &'static Kernel,
        config: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        check_generic(kernel.spec(), false)?;
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
        check_template_args(kernel.spec(), template_args)?;
        let params = instantiate_params(kernel.spec(), template_args)?;
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

        let launch = Launch {
            kernel: kernel.spec(),
            twin: kernel.cpu_twin(),
            needs_sync: kernel.needs_sync(),
            template_args,
            config,
            limits,
        };
        self.queue.launch(
            self.gpu.device(),
            launch,
            || self.gpu.cache_config(),
            || cuda_args(kernel, args),
            || cpu_args(kernel, template_args, args),
        )
    }
}
