//! Compiling kernels ahead of their launches: on a device ([`Gpu::precompile`]), or with
//! NVRTC alone and no GPU, as CI does for every kernel.

use std::time::Instant;

use crate::core::cache::{ArtifactKind, CacheConfig};
use crate::core::checks::resolve_checked;
use crate::core::compiled::CompileSource;
use crate::core::error::{Error, Result};
use crate::core::generic::{check_generic, check_template_args, name_expression, TemplateArg};
use crate::cuda::compile::{compile, Target};
use crate::device::Gpu;
use crate::kernel::Kernel;

impl Gpu {
    /// Compiles (or loads) `kernel` for this device now instead of at its first launch, in the
    /// mode a launch without an explicit choice would use.
    pub fn precompile(&self, kernel: &'static Kernel) -> Result<CompileSource> {
        self.precompile_with(kernel, &self.cache_config())
    }

    /// Like [`Gpu::precompile`], with an explicit disk-cache setting.
    pub fn precompile_with(
        &self,
        kernel: &'static Kernel,
        cache: &CacheConfig,
    ) -> Result<CompileSource> {
        check_generic(kernel.spec(), false)?;
        let checked = resolve_checked(None, kernel.checked_by_default());
        self.precompile_variant(kernel, &[], checked, cache)
    }

    /// Compiles (or loads) one instantiation of a generic kernel now, in the mode a launch
    /// without an explicit choice would use.
    pub fn precompile_generic(
        &self,
        kernel: &'static Kernel,
        template_args: &[TemplateArg],
    ) -> Result<CompileSource> {
        check_template_args(kernel.spec(), template_args)?;
        let checked = resolve_checked(None, kernel.checked_by_default());
        self.precompile_variant(kernel, template_args, checked, &self.cache_config())
    }

    /// Compiles (or loads) one variant: instantiation and mode, with a disk-cache setting.
    #[doc(hidden)]
    pub fn precompile_variant(
        &self,
        kernel: &'static Kernel,
        template_args: &[TemplateArg],
        checked: bool,
        cache: &CacheConfig,
    ) -> Result<CompileSource> {
        if kernel.is_generic() {
            check_template_args(kernel.spec(), template_args)?;
        } else {
            check_generic(kernel.spec(), !template_args.is_empty())?;
        }
        let start = Instant::now();
        let origin = self.device().precompile(
            kernel.spec(),
            kernel.cpu_twin(),
            template_args,
            checked,
            cache,
        )?;
        Ok(CompileSource {
            origin,
            elapsed: start.elapsed(),
        })
    }

    /// Drops this device's in-process entries for every variant of `kernel` (not the disk
    /// cache), so the next use goes to disk or NVRTC. Functions already handed out stay valid.
    #[doc(hidden)]
    pub fn forget_compiled(&self, kernel: &'static Kernel) {
        self.device().forget_compiled(kernel.spec());
    }

    /// Drops every in-process entry of this device.
    #[doc(hidden)]
    pub fn clear_compiled(&self) {
        self.device().clear_compiled();
    }
}

/// Compiles a kernel's source to PTX for `arch` using NVRTC alone (no driver, no GPU); CI uses
/// this to check every kernel on machines without a GPU.
pub fn compile_to_ptx(kernel: &Kernel, arch: (u32, u32)) -> Result<String> {
    ptx_for(kernel, arch, false)
}

/// Like [`compile_to_ptx`], in checked mode (`-DGPU_CHECKED`): the PTX then declares the
/// `rs_error_slot_ptr` and `rs_kernel_id` globals the runtime fills in.
pub fn compile_to_ptx_checked(kernel: &Kernel, arch: (u32, u32)) -> Result<String> {
    ptx_for(kernel, arch, true)
}

fn ptx_for(kernel: &Kernel, arch: (u32, u32), checked: bool) -> Result<String> {
    check_generic(kernel.spec(), false)?;
    let options = Target::Ptx(arch.0 * 10 + arch.1).options_for(checked);
    let compiled = compile(kernel.spec(), &options, ArtifactKind::Ptx, None)?;
    Ok(String::from_utf8_lossy(&compiled.image).into_owned())
}

/// Compiles `kernel` (instantiated with `template_args` when generic) for `arch` with NVRTC
/// alone, in checked or unchecked mode, and fails on any error or warning: what CI runs for
/// every kernel on machines without a GPU.
pub fn check_with_nvrtc(
    kernel: &Kernel,
    template_args: &[TemplateArg],
    arch: (u32, u32),
    checked: bool,
) -> Result<()> {
    let options = Target::Ptx(arch.0 * 10 + arch.1).options_for(checked);
    let compiled = if kernel.is_generic() {
        check_template_args(kernel.spec(), template_args)?;
        let expression = name_expression(kernel.spec(), template_args);
        compile(
            kernel.spec(),
            &options,
            ArtifactKind::Ptx,
            Some(&expression),
        )?
    } else {
        check_generic(kernel.spec(), false)?;
        compile(kernel.spec(), &options, ArtifactKind::Ptx, None)?
    };
    if compiled.warnings.is_empty() {
        Ok(())
    } else {
        Err(Error::Compile {
            kernel: kernel.name().to_string(),
            log: format!(
                "NVRTC warnings (CI treats them as errors):\n{}",
                compiled.warnings
            ),
        })
    }
}

/// One instantiation of a generic kernel compiled to PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstantiatedPtx {
    /// The C++ name expression NVRTC instantiated, e.g. `scale<float, 256ULL>`.
    pub name_expression: String,
    /// The mangled entry point it lowered to, as named by `.entry` in the PTX.
    pub lowered_name: String,
    /// The PTX text.
    pub ptx: String,
}

/// Instantiates a generic kernel with `template_args` and compiles it to PTX for `arch` with
/// NVRTC alone (no GPU), for CI.
pub fn compile_to_ptx_generic(
    kernel: &Kernel,
    template_args: &[TemplateArg],
    arch: (u32, u32),
) -> Result<InstantiatedPtx> {
    generic_ptx_for(kernel, template_args, arch, false)
}

/// Like [`compile_to_ptx_generic`], in checked mode (`-DGPU_CHECKED`).
pub fn compile_to_ptx_generic_checked(
    kernel: &Kernel,
    template_args: &[TemplateArg],
    arch: (u32, u32),
) -> Result<InstantiatedPtx> {
    generic_ptx_for(kernel, template_args, arch, true)
}

fn generic_ptx_for(
    kernel: &Kernel,
    template_args: &[TemplateArg],
    arch: (u32, u32),
    checked: bool,
) -> Result<InstantiatedPtx> {
    check_template_args(kernel.spec(), template_args)?;
    let expression = name_expression(kernel.spec(), template_args);
    let options = Target::Ptx(arch.0 * 10 + arch.1).options_for(checked);
    let compiled = compile(
        kernel.spec(),
        &options,
        ArtifactKind::Ptx,
        Some(&expression),
    )?;
    Ok(InstantiatedPtx {
        name_expression: expression,
        lowered_name: compiled.lowered_name.unwrap_or_default(),
        ptx: String::from_utf8_lossy(&compiled.image).into_owned(),
    })
}
