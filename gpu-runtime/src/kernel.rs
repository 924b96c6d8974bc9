//! Kernels as the macro emits them, and the typed arguments a launch passes to them.

use std::cell::RefCell;
use std::fmt;

use crate::buffer::{DeviceBuffer, LaunchSlice};
use crate::cpu::CpuKernelFn;
use crate::error::{Error, Result};
use crate::generic::{generic_shape_problem, TemplateParam};
use crate::scalar::{Scalar, ScalarType, ScalarValue};

/// One kernel parameter as declared in Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar passed by value.
    Scalar(ScalarType),
    /// `&[T]` or `&mut [T]`: a device pointer followed by an `unsigned long long` length.
    Slice {
        /// The element type.
        elem: ScalarType,
        /// Whether the kernel writes through it.
        mutable: bool,
    },
    /// A scalar whose type is a template type parameter of a generic kernel.
    GenericScalar {
        /// Index into the kernel's template parameters.
        param: u8,
    },
    /// A slice whose element type is a template type parameter of a generic kernel.
    GenericSlice {
        /// Index into the kernel's template parameters.
        param: u8,
        /// Whether the kernel writes through it.
        mutable: bool,
    },
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Scalar(ty) => write!(f, "{ty}"),
            ParamKind::Slice {
                elem,
                mutable: false,
            } => write!(f, "&[{elem}]"),
            ParamKind::Slice {
                elem,
                mutable: true,
            } => write!(f, "&mut [{elem}]"),
            ParamKind::GenericScalar { param } => write!(f, "<template type {param}>"),
            ParamKind::GenericSlice {
                param,
                mutable: false,
            } => write!(f, "&[<template type {param}>]"),
            ParamKind::GenericSlice {
                param,
                mutable: true,
            } => write!(f, "&mut [<template type {param}>]"),
        }
    }
}

/// A kernel as the macro emits it: built in a `static`.
#[derive(Debug)]
pub struct Kernel {
    name: &'static str,
    entry: &'static str,
    source: &'static str,
    params: &'static [ParamKind],
    template_params: &'static [TemplateParam],
    generic: bool,
    file: &'static str,
    checked_by_default: bool,
    cpu_twin: Option<CpuKernelFn>,
    needs_sync: bool,
    /// The one compute capability whose architecture-specific instructions (`sm_90a`'s wgmma)
    /// the kernel uses; `None` for portable kernels.
    arch_specific: Option<(u32, u32)>,
}

impl Kernel {
    /// Builds a kernel from generated parts; only macro output calls this. Same as
    /// [`Kernel::__generated_v2`] with no source file and checks off by default.
    ///
    /// The caller vouches that `source` defines `extern "C" __global__ void <entry>(...)` with
    /// the ABI of `params` (slices as pointer + `unsigned long long` length).
    #[doc(hidden)]
    pub const fn __generated(
        name: &'static str,
        entry: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
    ) -> Kernel {
        Kernel::__generated_v2(name, entry, source, params, "", false)
    }

    /// Builds a kernel from generated parts, with the Rust file it was written in and whether
    /// launches are checked unless the launch or `GPU_CHECKED` says otherwise.
    ///
    /// The caller vouches that `source` defines `extern "C" __global__ void <entry>(...)` with
    /// the ABI of `params`, and follows the checked-mode prelude contract (see `checked.rs`).
    #[doc(hidden)]
    pub const fn __generated_v2(
        name: &'static str,
        entry: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
        file: &'static str,
        checked_by_default: bool,
    ) -> Kernel {
        Kernel {
            name,
            entry,
            source,
            params,
            template_params: &[],
            generic: false,
            file,
            checked_by_default,
            cpu_twin: None,
            needs_sync: false,
            arch_specific: None,
        }
    }

    /// Builds a generic kernel: `source` defines `template <...> __global__ void <name>(...)`
    /// (C++ linkage) whose template parameters are `template_params`, in order.
    #[doc(hidden)]
    pub const fn __generated_generic(
        name: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
        template_params: &'static [TemplateParam],
        file: &'static str,
        checked_by_default: bool,
    ) -> Kernel {
        Kernel {
            name,
            entry: name,
            source,
            params,
            template_params,
            generic: true,
            file,
            checked_by_default,
            cpu_twin: None,
            needs_sync: false,
            arch_specific: None,
        }
    }

    /// The same kernel with its CPU twin, which runs one thread of the kernel on the CPU
    /// backend; `needs_sync` says whether it (or a device function it calls) uses
    /// `sync_threads`, `sync_warp`, shuffles or votes. Chained after `__generated_v2` or
    /// `__generated_generic` in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn with_cpu(self, twin: CpuKernelFn, needs_sync: bool) -> Kernel {
        Kernel {
            cpu_twin: Some(twin),
            needs_sync,
            ..self
        }
    }

    /// The same kernel, marked as using instructions only compute capability `major.minor`
    /// has (compiled for `sm_<major><minor>a`). Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __arch_specific(self, major: u32, minor: u32) -> Kernel {
        Kernel {
            arch_specific: Some((major, minor)),
            ..self
        }
    }

    /// The compute capability the kernel is limited to, when it uses architecture-specific
    /// instructions (Hopper's `wgmma`: 9.0); `None` when it runs on any supported GPU.
    pub fn arch_specific(&self) -> Option<(u32, u32)> {
        self.arch_specific
    }

    /// The CPU twin the CPU backend runs, if the kernel has one.
    pub fn cpu_twin(&self) -> Option<CpuKernelFn> {
        self.cpu_twin
    }

    /// Whether the CPU twin needs barriers or warp rendezvous (and so runs its threads as
    /// coroutines on the CPU backend).
    pub fn needs_sync(&self) -> bool {
        self.needs_sync
    }

    /// The kernel's Rust name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The `extern "C"` symbol of the `__global__` function (the template's name when generic).
    pub fn entry(&self) -> &'static str {
        self.entry
    }

    /// The complete CUDA C++ source.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The parameters as declared in Rust.
    pub fn params(&self) -> &'static [ParamKind] {
        self.params
    }

    /// The Rust source file the kernel was written in ("" when unknown).
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// Whether launches run in checked mode when neither the launch nor `GPU_CHECKED` decides.
    pub fn checked_by_default(&self) -> bool {
        self.checked_by_default
    }

    /// Whether the kernel is a C++ template instantiated at launch.
    pub fn is_generic(&self) -> bool {
        self.generic
    }

    /// The template parameters of a generic kernel, in Rust declaration order.
    pub fn template_params(&self) -> &'static [TemplateParam] {
        self.template_params
    }

    /// Checks that the parts can be handed to NVRTC and the driver at all.
    pub(crate) fn check_well_formed(&self) -> Result<()> {
        self.check_shape(true)
    }

    /// Checks the parts the CPU backend relies on: the generic shape, not the CUDA source.
    pub(crate) fn check_cpu_shape(&self) -> Result<()> {
        self.check_shape(false)
    }

    fn check_shape(&self, cuda: bool) -> Result<()> {
        let reason = if !cuda {
            None
        } else if self.entry.is_empty() {
            Some("its entry point name is empty")
        } else if self.entry.contains('\0') || self.name.contains('\0') {
            Some("its name contains a NUL byte")
        } else if self.source.contains('\0') {
            Some("its CUDA source contains a NUL byte")
        } else {
            None
        };
        match reason
            .map(str::to_string)
            .or_else(|| generic_shape_problem(self))
        {
            Some(reason) => Err(Error::InvalidKernel {
                kernel: self.name.to_string(),
                reason,
            }),
            None => Ok(()),
        }
    }
}

/// One launch argument.
pub struct KernelArg<'a> {
    pub(crate) inner: ArgInner<'a>,
}

pub(crate) enum ArgInner<'a> {
    Scalar(ScalarType, ScalarValue),
    Slice(&'a dyn LaunchSlice),
    // The launch receives `&[KernelArg]` (a literal array in generated code) yet must hand cudarc
    // a `&mut` buffer so it records the write for cross-stream ordering; the RefCell gives that
    // access back without unsafe code. The exclusive borrow is still held for 'a.
    SliceMut(RefCell<&'a mut dyn LaunchSlice>),
}

impl<'a> KernelArg<'a> {
    /// A scalar passed by value.
    pub fn scalar<T: Scalar>(value: T) -> Self {
        KernelArg {
            inner: ArgInner::Scalar(T::TYPE, value.__into_value()),
        }
    }

    /// A buffer the kernel reads (`&[T]`).
    pub fn slice<T: Scalar>(buf: &'a DeviceBuffer<T>) -> Self {
        KernelArg {
            inner: ArgInner::Slice(buf),
        }
    }

    /// A buffer the kernel writes (`&mut [T]`).
    pub fn slice_mut<T: Scalar>(buf: &'a mut DeviceBuffer<T>) -> Self {
        KernelArg {
            inner: ArgInner::SliceMut(RefCell::new(buf)),
        }
    }

    /// The parameter kind this argument fits.
    pub fn kind(&self) -> ParamKind {
        match &self.inner {
            ArgInner::Scalar(ty, _) => ParamKind::Scalar(*ty),
            ArgInner::Slice(buf) => ParamKind::Slice {
                elem: buf.elem(),
                mutable: false,
            },
            ArgInner::SliceMut(buf) => ParamKind::Slice {
                elem: buf.borrow().elem(),
                mutable: true,
            },
        }
    }
}

impl fmt::Debug for KernelArg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            ArgInner::Scalar(_, value) => f.debug_tuple("KernelArg::scalar").field(value).finish(),
            _ => write!(f, "KernelArg({})", self.kind()),
        }
    }
}

/// Checks argument kinds against a kernel's declared parameters.
pub(crate) fn check_args(
    kernel: &'static str,
    params: &[ParamKind],
    found: &[ParamKind],
) -> Result<()> {
    for (index, (expected, found)) in params.iter().zip(found).enumerate() {
        if expected != found {
            return Err(Error::ArgumentMismatch {
                kernel,
                index,
                expected: expected.to_string(),
                found: found.to_string(),
            });
        }
    }
    if found.len() < params.len() {
        return Err(Error::ArgumentMismatch {
            kernel,
            index: found.len(),
            expected: params[found.len()].to_string(),
            found: format!(
                "no argument ({} given, the kernel takes {})",
                found.len(),
                params.len()
            ),
        });
    }
    if found.len() > params.len() {
        return Err(Error::ArgumentMismatch {
            kernel,
            index: params.len(),
            expected: format!("no more arguments (the kernel takes {})", params.len()),
            found: found[params.len()].to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &[ParamKind] = &[
        ParamKind::Scalar(ScalarType::F32),
        ParamKind::Slice {
            elem: ScalarType::F32,
            mutable: false,
        },
        ParamKind::Slice {
            elem: ScalarType::F32,
            mutable: true,
        },
    ];

    static KERNEL: Kernel = Kernel::__generated("saxpy", "saxpy", "/* cuda */", SAXPY);

    fn mismatch(found: &[ParamKind]) -> (usize, String, String) {
        match check_args("saxpy", SAXPY, found) {
            Err(Error::ArgumentMismatch {
                kernel,
                index,
                expected,
                found,
            }) => {
                assert_eq!(kernel, "saxpy");
                (index, expected, found)
            }
            other => panic!("expected ArgumentMismatch, got {other:?}"),
        }
    }

    #[test]
    fn accessors() {
        assert_eq!(KERNEL.name(), "saxpy");
        assert_eq!(KERNEL.entry(), "saxpy");
        assert_eq!(KERNEL.params().len(), 3);
        assert_eq!((KERNEL.file(), KERNEL.checked_by_default()), ("", false));
        assert!(!KERNEL.is_generic() && KERNEL.template_params().is_empty());
        KERNEL.check_well_formed().unwrap();
        let v2 = Kernel::__generated_v2("k", "k", "", &[], "examples/k.rs", true);
        assert_eq!(
            (v2.file(), v2.checked_by_default()),
            ("examples/k.rs", true)
        );
        let generic = Kernel::__generated_generic(
            "scale",
            "",
            &[ParamKind::GenericScalar { param: 0 }],
            &[TemplateParam::Type],
            "src/lib.rs",
            true,
        );
        assert!(generic.is_generic());
        assert_eq!(generic.entry(), "scale");
        generic.check_well_formed().unwrap();
        let bad = Kernel::__generated("k", "", "", &[]);
        assert!(matches!(
            bad.check_well_formed(),
            Err(Error::InvalidKernel { .. })
        ));
    }

    #[test]
    fn matching_arguments_pass() {
        check_args("saxpy", SAXPY, SAXPY).unwrap();
        let scalar = KernelArg::scalar(2.0f32);
        assert_eq!(scalar.kind(), ParamKind::Scalar(ScalarType::F32));
        check_args("saxpy", &SAXPY[..1], &[scalar.kind()]).unwrap();
    }

    #[test]
    fn wrong_scalar_type() {
        let (index, expected, found) =
            mismatch(&[KernelArg::scalar(2.0f64).kind(), SAXPY[1], SAXPY[2]]);
        assert_eq!(
            (index, expected.as_str(), found.as_str()),
            (0, "f32", "f64")
        );
    }

    #[test]
    fn wrong_element_type_and_mutability() {
        let f64_slice = ParamKind::Slice {
            elem: ScalarType::F64,
            mutable: false,
        };
        let (index, expected, found) = mismatch(&[SAXPY[0], f64_slice, SAXPY[2]]);
        assert_eq!(
            (index, expected.as_str(), found.as_str()),
            (1, "&[f32]", "&[f64]")
        );

        let (index, expected, found) = mismatch(&[SAXPY[0], SAXPY[1], SAXPY[1]]);
        assert_eq!(
            (index, expected.as_str(), found.as_str()),
            (2, "&mut [f32]", "&[f32]")
        );

        let (index, _, _) = mismatch(&[SAXPY[0], SAXPY[2], SAXPY[2]]);
        assert_eq!(index, 1);

        let (index, _, found) = mismatch(&[SAXPY[1], SAXPY[1], SAXPY[2]]);
        assert_eq!((index, found.as_str()), (0, "&[f32]"));
    }

    #[test]
    fn wrong_count() {
        let (index, expected, found) = mismatch(&SAXPY[..2]);
        assert_eq!(index, 2);
        assert_eq!(expected, "&mut [f32]");
        assert!(found.contains("2 given, the kernel takes 3"), "{found}");

        let mut more = SAXPY.to_vec();
        more.push(ParamKind::Scalar(ScalarType::U32));
        let (index, expected, found) = mismatch(&more);
        assert_eq!((index, found.as_str()), (3, "u32"));
        assert!(expected.contains("takes 3"), "{expected}");
    }
}
