//! What every backend knows of a kernel: its parameters, its CUDA source and how it is named
//! and checked. The CPU twin is not here: it is the CPU backend's, and [`crate::Kernel`] pairs
//! the two.

use std::fmt;

use crate::core::assertion::AssertionMessages;
use crate::core::error::{Error, Result};
use crate::core::scalar::ScalarType;
use crate::core::value::{ElemType, ValueType};

/// One kernel parameter as declared in Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar passed by value.
    Scalar(ScalarType),
    /// `&[T]` or `&mut [T]`: a device pointer followed by an `unsigned long long` length.
    Slice {
        /// The element type.
        elem: ElemType,
        /// Whether the kernel writes through it.
        mutable: bool,
    },
    /// An array or a `#[device]` struct passed by value (its bytes, in its C layout).
    Value(ValueType),
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
    /// `#[constant] &[T; N]`: a read-only table passed by value as a `__grid_constant__`
    /// parameter, which CUDA keeps in the constant bank.
    Constant {
        /// The element type.
        elem: ScalarType,
        /// The number of elements.
        len: usize,
    },
    /// `&TensorMap<T>`: a tensor-map descriptor passed by value (`__grid_constant__`), then its
    /// buffer's pointer and length, so the launch orders the buffer's reads like a slice's.
    TensorMap {
        /// The element type.
        elem: ScalarType,
    },
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Scalar(ty) => write!(f, "{ty}"),
            ParamKind::Value(ty) => write!(f, "{ty}"),
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
            ParamKind::Constant { elem, len } => write!(f, "#[constant] &[{elem}; {len}]"),
            ParamKind::TensorMap { elem } => write!(f, "&TensorMap<{elem}>"),
        }
    }
}

/// One parameter of a generic kernel's template, in Rust declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TemplateParam {
    /// A type parameter (`typename T`), instantiated with a scalar type.
    Type,
    /// A const parameter (`unsigned long long N`), instantiated with a value.
    Const,
}

impl fmt::Display for TemplateParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateParam::Type => f.write_str("type"),
            TemplateParam::Const => f.write_str("const"),
        }
    }
}

/// A kernel's backend-neutral description, as the macro emits it inside a `static Kernel`.
#[derive(Debug)]
pub(crate) struct KernelSpec {
    name: &'static str,
    entry: &'static str,
    source: &'static str,
    params: &'static [ParamKind],
    template_params: &'static [TemplateParam],
    generic: bool,
    file: &'static str,
    checked_by_default: bool,
    /// The one compute capability whose architecture-specific instructions (`sm_90a`'s wgmma)
    /// the kernel uses; `None` for portable kernels.
    arch_specific: Option<(u32, u32)>,
    /// The messages of its `assert!`s and `panic!`s; `None` when it has none, and then its
    /// unchecked builds need no error slot.
    assertions: Option<AssertionMessages>,
    /// The parameters' Rust names, for the race checker's reports (empty when unknown).
    param_names: &'static [&'static str],
    /// Whether it calls `grid_sync`: launched cooperatively (every block co-resident), with
    /// its grid barrier's word as a hidden last parameter.
    cooperative: bool,
    /// For a kernel whose 32-bit body is chosen at launch (its hidden last `u32` parameter):
    /// the entry that runs only that body, launched when the flag is 1. Compiled apart from
    /// the 64-bit body, it needs only its own registers.
    fits_entry: Option<&'static str>,
}

impl KernelSpec {
    /// A plain kernel: `source` defines `extern "C" __global__ void <entry>(...)` with the ABI
    /// of `params`.
    pub(crate) const fn plain(
        name: &'static str,
        entry: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
        file: &'static str,
        checked_by_default: bool,
    ) -> KernelSpec {
        KernelSpec {
            name,
            entry,
            source,
            params,
            template_params: &[],
            generic: false,
            file,
            checked_by_default,
            arch_specific: None,
            assertions: None,
            param_names: &[],
            cooperative: false,
            fits_entry: None,
        }
    }

    /// A generic kernel: `source` defines `template <...> __global__ void <name>(...)` whose
    /// template parameters are `template_params`, in order.
    pub(crate) const fn generic(
        name: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
        template_params: &'static [TemplateParam],
        file: &'static str,
        checked_by_default: bool,
    ) -> KernelSpec {
        KernelSpec {
            name,
            entry: name,
            source,
            params,
            template_params,
            generic: true,
            file,
            checked_by_default,
            arch_specific: None,
            assertions: None,
            param_names: &[],
            cooperative: false,
            fits_entry: None,
        }
    }

    /// The same kernel, limited to compute capability `major.minor` (`sm_<major><minor>a`).
    pub(crate) const fn limited_to(self, major: u32, minor: u32) -> KernelSpec {
        KernelSpec {
            arch_specific: Some((major, minor)),
            ..self
        }
    }

    /// The same kernel with assertions, whose messages `messages` formats: its launches report
    /// failed assertions through the error slot in unchecked mode too.
    pub(crate) const fn with_assertions(self, messages: AssertionMessages) -> KernelSpec {
        KernelSpec {
            assertions: Some(messages),
            ..self
        }
    }

    /// The same kernel with its parameters' Rust names.
    pub(crate) const fn with_param_names(self, names: &'static [&'static str]) -> KernelSpec {
        KernelSpec {
            param_names: names,
            ..self
        }
    }

    /// The same kernel, marked as calling `grid_sync`.
    pub(crate) const fn cooperative_launch(self) -> KernelSpec {
        KernelSpec {
            cooperative: true,
            ..self
        }
    }

    /// The same kernel, whose 32-bit body also has entry `entry` of its own.
    pub(crate) const fn with_fits_entry(self, entry: &'static str) -> KernelSpec {
        KernelSpec {
            fits_entry: Some(entry),
            ..self
        }
    }

    /// The entry of the kernel's 32-bit body alone, if it has one (see `fits_entry`).
    pub(crate) fn fits_entry(&self) -> Option<&'static str> {
        self.fits_entry
    }

    /// Whether the kernel calls `grid_sync`, and so needs every block co-resident.
    pub(crate) fn cooperative(&self) -> bool {
        self.cooperative
    }

    /// Parameter `index`'s Rust name, when known.
    pub(crate) fn param_name(&self, index: usize) -> Option<&'static str> {
        self.param_names.get(index).copied()
    }

    /// The formatter of the kernel's assertion messages, if it has assertions.
    pub(crate) fn assertions(&self) -> Option<AssertionMessages> {
        self.assertions
    }

    /// The compute capability the kernel is limited to, if any.
    pub(crate) fn arch_specific(&self) -> Option<(u32, u32)> {
        self.arch_specific
    }

    /// The kernel's Rust name.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// The `extern "C"` symbol of the `__global__` function (the template's name when generic).
    pub(crate) fn entry(&self) -> &'static str {
        self.entry
    }

    /// The complete CUDA C++ source.
    pub(crate) fn source(&self) -> &'static str {
        self.source
    }

    /// The parameters as declared in Rust.
    pub(crate) fn params(&self) -> &'static [ParamKind] {
        self.params
    }

    /// The Rust source file the kernel was written in ("" when unknown).
    pub(crate) fn file(&self) -> &'static str {
        self.file
    }

    /// Whether launches run in checked mode when neither the launch nor `GPU_CHECKED` decides.
    pub(crate) fn checked_by_default(&self) -> bool {
        self.checked_by_default
    }

    /// Whether the kernel is a C++ template instantiated at launch.
    pub(crate) fn is_generic(&self) -> bool {
        self.generic
    }

    /// The template parameters of a generic kernel, in Rust declaration order.
    pub(crate) fn template_params(&self) -> &'static [TemplateParam] {
        self.template_params
    }

    /// The address of the kernel's `static`, which identifies it in caches and registries.
    pub(crate) fn address(&'static self) -> usize {
        self as *const KernelSpec as usize
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

/// Why a kernel's generic parts are inconsistent, if they are.
fn generic_shape_problem(kernel: &KernelSpec) -> Option<String> {
    let templates = kernel.template_params();
    if kernel.is_generic() && templates.is_empty() {
        return Some("it is generic but has no template parameters".to_string());
    }
    for (index, param) in kernel.params().iter().enumerate() {
        let refers_to = match param {
            ParamKind::GenericScalar { param } | ParamKind::GenericSlice { param, .. } => *param,
            _ => continue,
        };
        if !kernel.is_generic() {
            return Some(format!(
                "parameter {index} is generic but the kernel has no template parameters"
            ));
        }
        match templates.get(usize::from(refers_to)) {
            Some(TemplateParam::Type) => {}
            Some(TemplateParam::Const) => {
                return Some(format!(
                    "parameter {index} has the type of template parameter {refers_to}, which is \
                     a const"
                ))
            }
            None => {
                return Some(format!(
                    "parameter {index} refers to template parameter {refers_to}, but there are \
                     only {}",
                    templates.len()
                ))
            }
        }
    }
    None
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
            elem: ElemType::Scalar(ScalarType::F32),
            mutable: false,
        },
        ParamKind::Slice {
            elem: ElemType::Scalar(ScalarType::F32),
            mutable: true,
        },
    ];

    static KERNEL: KernelSpec = KernelSpec::plain("saxpy", "saxpy", "/* cuda */", SAXPY, "", false);

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
        let generic = KernelSpec::generic(
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
        let bad = KernelSpec::plain("k", "", "", &[], "", false);
        assert!(matches!(
            bad.check_well_formed(),
            Err(Error::InvalidKernel { .. })
        ));
    }

    #[test]
    fn matching_arguments_pass() {
        check_args("saxpy", SAXPY, SAXPY).unwrap();
        check_args("saxpy", &SAXPY[..1], &[ParamKind::Scalar(ScalarType::F32)]).unwrap();
    }

    #[test]
    fn wrong_scalar_type() {
        let (index, expected, found) =
            mismatch(&[ParamKind::Scalar(ScalarType::F64), SAXPY[1], SAXPY[2]]);
        assert_eq!(
            (index, expected.as_str(), found.as_str()),
            (0, "f32", "f64")
        );
    }

    #[test]
    fn wrong_element_type_and_mutability() {
        let f64_slice = ParamKind::Slice {
            elem: ElemType::Scalar(ScalarType::F64),
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

    #[test]
    fn malformed_generic_shapes() {
        let scale = KernelSpec::generic(
            "scale",
            "",
            &[ParamKind::GenericScalar { param: 0 }],
            &[TemplateParam::Type, TemplateParam::Const],
            "",
            false,
        );
        assert_eq!(generic_shape_problem(&scale), None);
        assert_eq!(generic_shape_problem(&KERNEL), None);
        let const_typed = KernelSpec::generic(
            "k",
            "",
            &[ParamKind::GenericScalar { param: 1 }],
            &[TemplateParam::Type, TemplateParam::Const],
            "",
            false,
        );
        assert!(generic_shape_problem(&const_typed)
            .unwrap()
            .contains("const"));
        let out_of_range = KernelSpec::generic(
            "k",
            "",
            &[ParamKind::GenericScalar { param: 4 }],
            &[TemplateParam::Type],
            "",
            false,
        );
        assert!(generic_shape_problem(&out_of_range)
            .unwrap()
            .contains("only 1"));
        let not_generic = KernelSpec::plain(
            "k",
            "k",
            "",
            &[ParamKind::GenericScalar { param: 0 }],
            "",
            false,
        );
        assert!(generic_shape_problem(&not_generic).is_some());
        let no_params = KernelSpec::generic("k", "", &[], &[], "", false);
        assert!(generic_shape_problem(&no_params).is_some());
    }
}
