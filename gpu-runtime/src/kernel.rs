//! Kernels as the macro emits them, and the typed arguments a launch passes to them.

use std::cell::RefCell;
use std::fmt;

use crate::buffer::{DeviceBuffer, LaunchSlice};
use crate::core::assertion::AssertionMessages;
use crate::core::kernel::TemplateParam;
use crate::core::kernel::{KernelSpec, ParamKind};
use crate::core::scalar::{Scalar, ScalarType, ScalarValue};
use crate::core::value::{ElemType, StoredValue, Value, ValueBytes};
use crate::cpu::{CpuBlockFn, CpuKernelFn};
use crate::tensor_map::{LaunchTensorMap, TensorMap};

/// A kernel as the macro emits it: built in a `static`.
pub struct Kernel {
    /// What every backend reads: source, entry, parameters, checks.
    spec: KernelSpec,
    cpu_twin: Option<CpuKernelFn>,
    /// The twin of a whole block, for barrier-free kernels.
    cpu_block: Option<CpuBlockFn>,
    needs_sync: bool,
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
    /// the ABI of `params`, and follows the checked-mode prelude contract (see `core/checks.rs`).
    #[doc(hidden)]
    pub const fn __generated_v2(
        name: &'static str,
        entry: &'static str,
        source: &'static str,
        params: &'static [ParamKind],
        file: &'static str,
        checked_by_default: bool,
    ) -> Kernel {
        Kernel::from_spec(KernelSpec::plain(
            name,
            entry,
            source,
            params,
            file,
            checked_by_default,
        ))
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
        Kernel::from_spec(KernelSpec::generic(
            name,
            source,
            params,
            template_params,
            file,
            checked_by_default,
        ))
    }

    const fn from_spec(spec: KernelSpec) -> Kernel {
        Kernel {
            spec,
            cpu_twin: None,
            cpu_block: None,
            needs_sync: false,
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

    /// The same kernel with the twin of a whole block, which the CPU backend calls once per
    /// block of a barrier-free kernel instead of the thread twin once per thread. Chained
    /// after `with_cpu` in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __with_cpu_block(self, block: CpuBlockFn) -> Kernel {
        Kernel {
            cpu_block: Some(block),
            ..self
        }
    }

    /// The same kernel with `assert!`s or `panic!`s, whose messages `messages` formats from
    /// the values a failing GPU thread recorded. Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __with_assertions(self, messages: AssertionMessages) -> Kernel {
        Kernel {
            spec: self.spec.with_assertions(messages),
            ..self
        }
    }

    /// The same kernel with its parameters' Rust names, which the race checker's reports use.
    /// Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __with_param_names(self, names: &'static [&'static str]) -> Kernel {
        Kernel {
            spec: self.spec.with_param_names(names),
            ..self
        }
    }

    /// The same kernel, marked as using instructions only compute capability `major.minor`
    /// has (compiled for `sm_<major><minor>a`). Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __arch_specific(self, major: u32, minor: u32) -> Kernel {
        Kernel {
            spec: self.spec.limited_to(major, minor),
            ..self
        }
    }

    /// The same kernel, whose body chosen at launch when its arguments fit in 32 bits (the
    /// hidden last `u32` parameter is 1) is also entry `entry` alone, which launches then run.
    /// Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __with_fits_entry(self, entry: &'static str) -> Kernel {
        Kernel {
            spec: self.spec.with_fits_entry(entry),
            ..self
        }
    }

    /// The same kernel, marked as calling `grid_sync` (directly or through a device function):
    /// it launches cooperatively, every block co-resident, with its grid barrier's word as a
    /// hidden last parameter. Chained in the `static`'s initializer.
    #[doc(hidden)]
    pub const fn __cooperative(self) -> Kernel {
        Kernel {
            spec: self.spec.cooperative_launch(),
            ..self
        }
    }

    /// Whether the kernel calls `grid_sync`, so that its launches need every block co-resident
    /// (see [`crate::Stream::max_cooperative_blocks`]).
    pub fn cooperative(&self) -> bool {
        self.spec.cooperative()
    }

    /// The compute capability the kernel is limited to, when it uses architecture-specific
    /// instructions (Hopper's `wgmma`: 9.0); `None` when it runs on any supported GPU.
    pub fn arch_specific(&self) -> Option<(u32, u32)> {
        self.spec.arch_specific()
    }

    /// The CPU twin the CPU backend runs, if the kernel has one.
    pub fn cpu_twin(&self) -> Option<CpuKernelFn> {
        self.cpu_twin
    }

    /// The twin of a whole block the CPU backend runs for a barrier-free kernel, if it has one.
    pub(crate) fn cpu_block(&self) -> Option<CpuBlockFn> {
        self.cpu_block
    }

    /// Whether the CPU twin needs barriers or warp rendezvous (and so runs its threads as
    /// coroutines on the CPU backend).
    pub fn needs_sync(&self) -> bool {
        self.needs_sync
    }

    /// The kernel's Rust name.
    pub fn name(&self) -> &'static str {
        self.spec.name()
    }

    /// The `extern "C"` symbol of the `__global__` function (the template's name when generic).
    pub fn entry(&self) -> &'static str {
        self.spec.entry()
    }

    /// The complete CUDA C++ source.
    pub fn source(&self) -> &'static str {
        self.spec.source()
    }

    /// The parameters as declared in Rust.
    pub fn params(&self) -> &'static [ParamKind] {
        self.spec.params()
    }

    /// The Rust source file the kernel was written in ("" when unknown).
    pub fn file(&self) -> &'static str {
        self.spec.file()
    }

    /// Whether launches run in checked mode when neither the launch nor `GPU_CHECKED` decides.
    pub fn checked_by_default(&self) -> bool {
        self.spec.checked_by_default()
    }

    /// Whether the kernel is a C++ template instantiated at launch.
    pub fn is_generic(&self) -> bool {
        self.spec.is_generic()
    }

    /// The template parameters of a generic kernel, in Rust declaration order.
    pub fn template_params(&self) -> &'static [TemplateParam] {
        self.spec.template_params()
    }

    /// The backend-neutral part, which the compiler, the caches and the checks read.
    pub(crate) fn spec(&self) -> &KernelSpec {
        &self.spec
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.spec.name())
            .field("entry", &self.spec.entry())
            .field("source", &self.spec.source())
            .field("params", &self.spec.params())
            .field("template_params", &self.spec.template_params())
            .field("generic", &self.spec.is_generic())
            .field("file", &self.spec.file())
            .field("checked_by_default", &self.spec.checked_by_default())
            .field("cpu_twin", &self.cpu_twin)
            .field("needs_sync", &self.needs_sync)
            .field("arch_specific", &self.spec.arch_specific())
            .field("cooperative", &self.spec.cooperative())
            .finish()
    }
}

/// One launch argument.
pub struct KernelArg<'a> {
    pub(crate) inner: ArgInner<'a>,
}

pub(crate) enum ArgInner<'a> {
    Scalar(ScalarType, ScalarValue),
    /// A value copied for the launch (`KernelArg::value`); a scalar one is passed as a scalar.
    Value(Box<dyn ValueBytes>),
    Slice(&'a dyn LaunchSlice),
    // The launch receives `&[KernelArg]` (a literal array in generated code) yet must hand cudarc
    // a `&mut` buffer so it records the write for cross-stream ordering; the RefCell gives that
    // access back without unsafe code. The exclusive borrow is still held for 'a.
    SliceMut(RefCell<&'a mut dyn LaunchSlice>),
    /// A `#[constant]` table: its element type, length and bytes.
    Constant(ScalarType, usize, &'a [u8]),
    /// A tensor map for `tma_load_2d`.
    TensorMap(&'a dyn LaunchTensorMap),
}

impl<'a> KernelArg<'a> {
    /// A scalar passed by value.
    pub fn scalar<T: Scalar>(value: T) -> Self {
        KernelArg {
            inner: ArgInner::Scalar(T::TYPE, value.__into_value()),
        }
    }

    /// An array or a `#[device]` struct passed by value: its bytes are copied here, and the
    /// kernel receives them as one parameter in the type's C layout.
    pub fn value<T: Value>(value: T) -> Self {
        KernelArg {
            inner: ArgInner::Value(StoredValue::boxed(value)),
        }
    }

    /// A buffer the kernel reads (`&[T]`).
    pub fn slice<T: Value>(buf: &'a DeviceBuffer<T>) -> Self {
        KernelArg {
            inner: ArgInner::Slice(buf),
        }
    }

    /// A buffer the kernel writes (`&mut [T]`).
    pub fn slice_mut<T: Value>(buf: &'a mut DeviceBuffer<T>) -> Self {
        KernelArg {
            inner: ArgInner::SliceMut(RefCell::new(buf)),
        }
    }

    /// A read-only table for a `#[constant]` parameter (`&[T; N]`), passed by value.
    pub fn constant<T: Scalar, const N: usize>(table: &'a [T; N]) -> Self {
        let bytes = std::mem::size_of_val(table);
        // SAFETY: every Scalar is a plain primitive without padding (bool, integers, floats,
        // half's f16/bf16), so its N elements are `bytes` initialised bytes, borrowed for 'a.
        let bytes = unsafe { std::slice::from_raw_parts(table.as_ptr().cast::<u8>(), bytes) };
        KernelArg {
            inner: ArgInner::Constant(T::TYPE, N, bytes),
        }
    }

    /// A read-only table of rows for a `#[constant]` parameter (`&[[T; R]; N]`), passed by
    /// value as its `R * N` numbers one after the other, the layout C gives it.
    pub fn constant_rows<T: Scalar, const R: usize, const N: usize>(
        table: &'a [[T; R]; N],
    ) -> Self {
        let numbers = table.as_flattened();
        let bytes = std::mem::size_of_val(numbers);
        // SAFETY: as in `constant`: arrays of a Scalar have no padding, so the rows are
        // `bytes` initialised bytes, borrowed for 'a.
        let bytes = unsafe { std::slice::from_raw_parts(numbers.as_ptr().cast::<u8>(), bytes) };
        KernelArg {
            inner: ArgInner::Constant(T::TYPE, R * N, bytes),
        }
    }

    /// A tensor map for a `&TensorMap<T>` parameter.
    pub fn tensor_map<T: Scalar>(map: &'a TensorMap<'a, T>) -> Self {
        KernelArg {
            inner: ArgInner::TensorMap(map),
        }
    }

    /// The parameter kind this argument fits.
    pub fn kind(&self) -> ParamKind {
        match &self.inner {
            ArgInner::Constant(elem, len, _) => ParamKind::Constant {
                elem: *elem,
                len: *len,
            },
            ArgInner::Scalar(ty, _) => ParamKind::Scalar(*ty),
            ArgInner::Value(value) => match value.elem() {
                ElemType::Scalar(ty) => ParamKind::Scalar(ty),
                ElemType::Value(ty) => ParamKind::Value(ty),
            },
            ArgInner::Slice(buf) => ParamKind::Slice {
                elem: buf.elem(),
                mutable: false,
            },
            ArgInner::SliceMut(buf) => ParamKind::Slice {
                elem: buf.borrow().elem(),
                mutable: true,
            },
            ArgInner::TensorMap(map) => ParamKind::TensorMap { elem: map.elem() },
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

#[cfg(test)]
mod tests {
    use super::*;

    static KERNEL: Kernel = Kernel::__generated("saxpy", "saxpy", "/* cuda */", &[]);

    #[test]
    fn accessors_read_the_spec() {
        assert_eq!((KERNEL.name(), KERNEL.entry()), ("saxpy", "saxpy"));
        assert_eq!((KERNEL.file(), KERNEL.checked_by_default()), ("", false));
        assert!(KERNEL.cpu_twin().is_none() && !KERNEL.needs_sync());
        let v2 = Kernel::__generated_v2("k", "k", "", &[], "examples/k.rs", true);
        assert_eq!(
            (v2.file(), v2.checked_by_default()),
            ("examples/k.rs", true)
        );
        let limited = Kernel::__generated("k", "k", "", &[]).__arch_specific(9, 0);
        assert_eq!(limited.arch_specific(), Some((9, 0)));
    }

    #[test]
    fn scalar_arguments_have_their_kind() {
        assert_eq!(
            KernelArg::scalar(2.0f32).kind(),
            ParamKind::Scalar(ScalarType::F32)
        );
        assert_eq!(
            KernelArg::scalar(2.0f64).kind(),
            ParamKind::Scalar(ScalarType::F64)
        );
    }
}
