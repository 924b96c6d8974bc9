//! Launching a kernel on a stream: the checks every backend shares, and the arguments
//! unpacked as each backend reads them.

use std::cell::{RefCell, RefMut};

use crate::buffer::LaunchSlice;
use crate::core::backend::Backend;
use crate::core::error::{Error, Result};
use crate::core::generic::{
    check_generic, check_template_args, instantiate_params, rust_instantiation, TemplateArg,
};
use crate::core::kernel::{check_args, ParamKind};
use crate::core::launch::LaunchConfig;
use crate::core::value::ElemType;
use crate::cpu::CpuArg;
use crate::cuda::stream::CudaArg;
use crate::dispatch::Launch;
use crate::kernel::{ArgInner, Kernel, KernelArg};
use crate::profiler::{self, Activity};
use crate::stream::Stream;
use crate::tensor_map::cuda_map;

impl Stream {
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
        // The list of kinds is only built to describe a mismatch.
        let matches = args.len() == params.len()
            && args
                .iter()
                .zip(params)
                .all(|(arg, param)| arg.kind() == *param);
        if !matches {
            let kinds: Vec<ParamKind> = args.iter().map(KernelArg::kind).collect();
            check_args(kernel.name(), params, &kinds)?;
        }
        for (index, arg) in args.iter().enumerate() {
            let what = || format!("argument {index} of kernel `{}`", kernel.name());
            match &arg.inner {
                ArgInner::Scalar(..) | ArgInner::Value(_) | ArgInner::Constant(..) => {}
                ArgInner::Slice(buf) => self.check_device(what, buf.gpu())?,
                ArgInner::SliceMut(buf) => self.check_device(what, buf.borrow().gpu())?,
                ArgInner::TensorMap(map) => self.check_device(what, map.buffer().gpu())?,
            }
        }
        let limits = self.gpu.limits();
        limits.validate(&config)?;

        let launch = Launch {
            kernel: kernel.spec(),
            twin: kernel.cpu_twin(),
            block_twin: kernel.cpu_block(),
            needs_sync: kernel.needs_sync(),
            template_args,
            config,
            limits,
        };
        let run = || {
            self.queue.launch(
                self.gpu.device(),
                launch,
                || self.gpu.cache_config(),
                || cuda_args(kernel, args),
                || cpu_args(kernel, template_args, args),
            )
        };
        if !profiler::enabled() {
            return run();
        }
        let activity = || Activity::Launch {
            kernel: kernel.name().to_string(),
            template_args: template_args.iter().map(TemplateArg::to_string).collect(),
            grid: config.grid,
            block: config.block,
            shared_mem_bytes: config.shared_mem_bytes,
        };
        profiler::record(self, activity, run)
    }
}

/// A `&mut` buffer argument, borrowed exclusively for the length of a launch.
pub(crate) type Exclusive<'s, 'a> = RefMut<'s, &'a mut dyn LaunchSlice>;

/// Borrows a `&mut` buffer argument for a launch.
#[inline]
fn borrow_exclusive<'s, 'a>(
    kernel: &Kernel,
    cell: &'s RefCell<&'a mut dyn LaunchSlice>,
) -> Result<Exclusive<'s, 'a>> {
    cell.try_borrow_mut().map_err(|_| Error::InvalidKernel {
        kernel: kernel.name().to_string(),
        reason: "a mutable argument is already borrowed (launch re-entered)".to_string(),
    })
}

/// The arguments as a CUDA launch pushes them, with the `&mut` buffers borrowed exclusively.
#[inline]
pub(crate) fn cuda_args<'s>(
    kernel: &Kernel,
    args: &'s [KernelArg<'_>],
) -> Result<Vec<CudaArg<'s>>> {
    let mut unpacked = Vec::with_capacity(args.len());
    for arg in args {
        unpacked.push(cuda_arg(kernel, arg)?);
    }
    Ok(unpacked)
}

/// One argument as the CUDA launch pushes it.
fn cuda_arg<'s>(kernel: &Kernel, arg: &'s KernelArg<'_>) -> Result<CudaArg<'s>> {
    // Unreachable: every buffer was checked to be on this CUDA device.
    let host_buffer = || Error::WrongBackend {
        what: format!("a buffer argument of kernel `{}`", kernel.name()),
        expected: Backend::Cuda,
        found: Backend::Cpu,
    };
    Ok(match &arg.inner {
        ArgInner::Scalar(_, value) => CudaArg::Scalar(*value),
        ArgInner::Value(value) => CudaArg::Value(&**value),
        ArgInner::Constant(_, _, bytes) => CudaArg::Constant(bytes),
        ArgInner::Slice(buf) => {
            CudaArg::Slice(buf.cuda_memory().ok_or_else(host_buffer)?, buf.len() as u64)
        }
        ArgInner::SliceMut(cell) => {
            let buf = borrow_exclusive(kernel, cell)?;
            let len = buf.len() as u64;
            let memory =
                RefMut::filter_map(buf, |buf| buf.cuda_memory_mut()).map_err(|_| host_buffer())?;
            CudaArg::SliceMut(memory, len)
        }
        ArgInner::TensorMap(map) => {
            let buf = map.buffer();
            CudaArg::TensorMap(
                cuda_map(*map, kernel.name())?,
                buf.cuda_memory().ok_or_else(host_buffer)?,
                buf.len() as u64,
            )
        }
    })
}

/// The arguments as the CPU backend reads them, with the exclusive borrows of the `&mut`
/// buffers among them.
#[inline]
pub(crate) fn cpu_args<'s, 'a>(
    kernel: &Kernel,
    template_args: &[TemplateArg],
    args: &'s [KernelArg<'a>],
) -> Result<(Vec<CpuArg>, Vec<Exclusive<'s, 'a>>)> {
    let mut exclusive = Vec::new();
    let mut unpacked = Vec::with_capacity(args.len());
    for (index, arg) in args.iter().enumerate() {
        let host_memory = |ptr: Option<*mut u8>| {
            ptr.ok_or_else(|| Error::CpuBackend {
                kernel: rust_instantiation(kernel.spec(), template_args),
                reason: format!("argument {index} is not in host memory"),
            })
        };
        unpacked.push(match &arg.inner {
            ArgInner::Scalar(ty, value) => CpuArg::scalar(*ty, *value),
            ArgInner::Value(value) => match value.elem() {
                ElemType::Scalar(ty) => CpuArg::scalar_bits(ty, value.scalar_bits()),
                // The box lives in `args`, which outlives the launch.
                ElemType::Value(ty) => CpuArg::value(ty, value.as_ptr()),
            },
            // Read only: the twin copies the table into each thread's array.
            ArgInner::Constant(elem, len, bytes) => CpuArg::slice(
                ElemType::Scalar(*elem),
                bytes.as_ptr().cast_mut(),
                *len,
                false,
            ),
            ArgInner::Slice(buf) => {
                CpuArg::slice(buf.elem(), host_memory(buf.host_ptr())?, buf.len(), false)
            }
            ArgInner::SliceMut(cell) => {
                let buf = borrow_exclusive(kernel, cell)?;
                let arg = CpuArg::slice(buf.elem(), host_memory(buf.host_ptr())?, buf.len(), true);
                exclusive.push(buf);
                arg
            }
            ArgInner::TensorMap(map) => {
                let buf = map.buffer();
                CpuArg::tensor_map(
                    buf.elem(),
                    host_memory(buf.host_ptr())?,
                    buf.len(),
                    map.geometry(),
                )
            }
        });
    }
    Ok((unpacked, exclusive))
}

/// What benchmarks compare the runtime with; not part of the API.
#[doc(hidden)]
pub mod __bench {
    use std::time::Duration;

    use crate::buffer::DeviceBuffer;
    use crate::compile::compile_to_ptx;
    use crate::core::error::{Error, Result};
    use crate::core::launch::LaunchConfig;
    use crate::dispatch::{DeviceImpl, QueueImpl};
    use crate::kernel::Kernel;
    use crate::stream::Stream;

    /// Host time of `launches` launches of `kernel`, whose parameters are `(f32, &mut [f32])`,
    /// through cudarc directly on `stream`'s CUDA stream: the same PTX in a module of its own,
    /// without the runtime's checks, cache lookup or bookkeeping. `Stream::launch`'s overhead
    /// is measured against it.
    pub fn raw_cudarc_launches(
        stream: &Stream,
        kernel: &'static Kernel,
        config: LaunchConfig,
        a: f32,
        y: &mut DeviceBuffer<f32>,
        launches: u32,
    ) -> Result<Duration> {
        let (QueueImpl::Cuda(queue), DeviceImpl::Cuda(device)) =
            (&stream.queue, stream.gpu.device())
        else {
            return Err(Error::CudaOnly {
                what: "the raw cudarc launch reference",
            });
        };
        let ptx = compile_to_ptx(kernel, device.arch)?;
        let len = y.len() as u64;
        let memory = y.cuda_memory_mut().ok_or(Error::CudaOnly {
            what: "the raw cudarc launch reference",
        })?;
        queue.raw_launches(device, ptx, kernel.name(), config, a, memory, len, launches)
    }
}
