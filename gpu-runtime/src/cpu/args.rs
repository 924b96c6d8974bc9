//! `CpuArgs`: a launch's arguments as a CPU twin reads them, by kernel parameter index.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::core::element::Element;
use crate::core::generic::TemplateArg;
use crate::core::scalar::{Scalar, ScalarType, ScalarValue};
use crate::core::tensor_map::TmaGeometry;
use crate::core::value::{zero, ElemType, Value, ValueType};
use crate::cpu::launch_state::LaunchState;
use crate::cpu::owned::{CpuOwnedSlice, CpuReadSlice};
use crate::cpu::slice::CpuSlice;
use crate::cpu::tma::CpuTensorMap;

/// Tag bit of a slice argument (the low byte is the element or scalar type).
const SLICE_TAG: u16 = 0x100;

/// A writable slice argument not yet handed out in this launch.
const UNCLAIMED: u8 = 0;
/// A writable slice argument handed out as `CpuSlice`s (atomic accesses).
const SHARED: u8 = 1;
/// A writable slice argument handed out as `CpuOwnedSlice`s (plain accesses).
const OWNED: u8 = 2;

/// Tag of an array or struct (by value, or with `SLICE_TAG` as a slice's element), whose type
/// is the argument's `value_ty`.
const VALUE_TAG: u16 = 0x200;

/// Tag bit of a tensor map argument (the low byte is its element type).
const MAP_TAG: u16 = 0x400;

/// The tag a twin's read of a `T` scalar (or, with `SLICE_TAG`, slice) must find.
const fn type_tag(ty: ScalarType) -> u16 {
    ty as u16
}

/// The tag of an element or by-value type.
const fn elem_tag(elem: ElemType) -> u16 {
    match elem {
        ElemType::Scalar(ty) => type_tag(ty),
        ElemType::Value(_) => VALUE_TAG,
    }
}

/// One argument, flattened so a twin's per-thread read is one bounds check and one compare.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuArg {
    /// `type_tag(type)`, with `SLICE_TAG` for slices.
    tag: u16,
    /// A scalar's bits (as `Element::to_bits`).
    bits: u64,
    /// A slice's first element (dangling for scalars).
    ptr: *mut u8,
    /// A slice's length.
    len: usize,
    /// `len` for `&mut [T]`, 0 for `&[T]`.
    write_len: usize,
    /// The array or struct type, with `VALUE_TAG`.
    value_ty: Option<ValueType>,
    /// A tensor map's geometry, with `MAP_TAG`.
    map: Option<TmaGeometry>,
}

impl CpuArg {
    /// A scalar argument.
    pub(crate) fn scalar(ty: ScalarType, value: ScalarValue) -> CpuArg {
        let bits = match value {
            ScalarValue::Bool(v) => v.to_bits(),
            ScalarValue::I8(v) => v.to_bits(),
            ScalarValue::U8(v) => v.to_bits(),
            ScalarValue::I16(v) => v.to_bits(),
            ScalarValue::U16(v) => v.to_bits(),
            ScalarValue::I32(v) => v.to_bits(),
            ScalarValue::U32(v) => v.to_bits(),
            ScalarValue::I64(v) => v.to_bits(),
            ScalarValue::U64(v) => v.to_bits(),
            ScalarValue::F32(v) => Element::to_bits(v),
            ScalarValue::F64(v) => Element::to_bits(v),
            ScalarValue::F16(v) => Element::to_bits(v),
            ScalarValue::Bf16(v) => Element::to_bits(v),
        };
        CpuArg::scalar_bits(ty, bits)
    }

    /// A scalar argument given by its bits (as `Element::to_bits`).
    pub(crate) fn scalar_bits(ty: ScalarType, bits: u64) -> CpuArg {
        CpuArg {
            tag: type_tag(ty),
            bits,
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            write_len: 0,
            value_ty: None,
            map: None,
        }
    }

    /// An array or struct passed by value: a valid, aligned value of type `ty` at `ptr`, which
    /// the launch keeps alive and unchanged while the grid runs.
    pub(crate) fn value(ty: ValueType, ptr: *const u8) -> CpuArg {
        CpuArg {
            tag: VALUE_TAG,
            bits: 0,
            ptr: ptr.cast_mut(),
            len: 0,
            write_len: 0,
            value_ty: Some(ty),
            map: None,
        }
    }

    /// A slice argument: `len` elements of `elem` at `ptr`.
    pub(crate) fn slice(elem: ElemType, ptr: *mut u8, len: usize, writable: bool) -> CpuArg {
        CpuArg {
            tag: elem_tag(elem) | SLICE_TAG,
            bits: 0,
            ptr,
            len,
            write_len: if writable { len } else { 0 },
            value_ty: match elem {
                ElemType::Scalar(_) => None,
                ElemType::Value(ty) => Some(ty),
            },
            map: None,
        }
    }

    /// A tensor map over `len` elements of `elem` at `ptr`, read only.
    pub(crate) fn tensor_map(
        elem: ElemType,
        ptr: *mut u8,
        len: usize,
        geometry: TmaGeometry,
    ) -> CpuArg {
        CpuArg {
            tag: elem_tag(elem) | MAP_TAG,
            map: Some(geometry),
            ..CpuArg::slice(elem, ptr, len, false)
        }
    }

    /// Whether the argument is a `T` (a slice of `T`s when `slice`); folds to one compare for
    /// scalars, as `T::ELEM` is a constant.
    #[inline(always)]
    fn is<T: Value>(&self, slice: bool) -> bool {
        let slice_tag = if slice { SLICE_TAG } else { 0 };
        self.tag == elem_tag(T::ELEM) | slice_tag
            && match T::ELEM {
                ElemType::Scalar(_) => true,
                ElemType::Value(ty) => self.value_ty == Some(ty),
            }
    }

    /// A slice argument's memory: its first byte, its length and its element's size.
    pub(crate) fn memory(&self) -> Option<(usize, usize, usize)> {
        if self.tag & (SLICE_TAG | MAP_TAG) == 0 {
            return None;
        }
        let size = match self.value_ty {
            Some(ty) => ty.size,
            None => ScalarType::ALL
                .into_iter()
                .find(|&ty| type_tag(ty) == self.tag & !(SLICE_TAG | MAP_TAG))?
                .size(),
        };
        Some((self.ptr as usize, self.len, size))
    }

    fn describe(&self) -> String {
        let ty = match self.value_ty {
            Some(ty) => ty.to_string(),
            None => ScalarType::ALL
                .into_iter()
                .find(|&ty| type_tag(ty) == self.tag & !(SLICE_TAG | MAP_TAG))
                .map_or_else(|| "?".to_string(), |ty| ty.to_string()),
        };
        if self.tag & MAP_TAG != 0 {
            return format!("&TensorMap<{ty}>");
        }
        match (
            self.tag & SLICE_TAG != 0,
            self.write_len == self.len && self.len > 0,
        ) {
            (false, _) => ty,
            (true, true) => format!("&mut [{ty}]"),
            (true, false) => format!("&[{ty}] (or an empty &mut [{ty}])"),
        }
    }
}

/// A launch's arguments as its CPU twin reads them: by the kernel's parameter index (slices
/// count once), with the template arguments of a generic kernel.
pub struct CpuArgs<'a> {
    args: Vec<CpuArg>,
    /// Per argument, how its writable memory has been handed out (`UNCLAIMED`, `SHARED` or
    /// `OWNED`): one way per launch, as plain and atomic accesses to one element must not mix.
    claims: Vec<AtomicU8>,
    template_args: &'a [TemplateArg],
    launch: &'a LaunchState,
    /// The buffers behind slice arguments stay borrowed for `'a`.
    marker: PhantomData<&'a mut [u8]>,
}

// SAFETY: the raw pointers are host buffers borrowed for 'a (mutably for writable ones) by the
// launch, or by-value arguments the launch keeps alive and unchanged for 'a; every access to a
// buffer goes through CpuSlice or CpuPlace, which are atomic, through a CpuOwnedSlice, whose
// elements each one thread touches (and a writable buffer is handed out one way or the other
// per launch, `claim`), or through a CpuReadSlice of a buffer nothing writes; by-value
// arguments are only read. So sharing the arguments between the worker threads of one launch
// is sound.
unsafe impl Sync for CpuArgs<'_> {}
// SAFETY: as for Sync.
unsafe impl Send for CpuArgs<'_> {}

impl<'a> CpuArgs<'a> {
    /// Arguments whose slice pointers are valid (and, when writable, exclusively borrowed)
    /// for `'a`.
    pub(crate) fn new(
        args: Vec<CpuArg>,
        template_args: &'a [TemplateArg],
        launch: &'a LaunchState,
    ) -> Self {
        CpuArgs {
            claims: args.iter().map(|_| AtomicU8::new(UNCLAIMED)).collect(),
            args,
            template_args,
            launch,
            marker: PhantomData,
        }
    }

    /// Scalar parameter `index`; a twin that disagrees with the parameter's type gets zero and
    /// the launch fails.
    #[inline]
    pub fn scalar<T: Scalar>(&self, index: usize) -> T {
        match self.args.get(index) {
            Some(arg) if arg.tag == type_tag(T::TYPE) => T::from_bits(arg.bits),
            _ => {
                self.mismatch(index, &T::TYPE.to_string());
                T::from_bits(0)
            }
        }
    }

    /// Slice parameter `index` (`&[T]` or `&mut [T]`; only the latter may be written); a twin
    /// that disagrees with the parameter's type gets an empty slice and the launch fails.
    #[inline]
    pub fn slice<T: Value>(&self, index: usize) -> CpuSlice<'_, T> {
        match self.args.get(index) {
            Some(arg) if arg.is::<T>(true) && (arg.write_len == 0 || self.claim(index, SHARED)) => {
                // SAFETY: the buffer holds `len` valid `T`s (its element type is T), is 64-byte
                // aligned, and is borrowed for 'a (exclusively when writable, which is when
                // write_len, set by `CpuArg::slice` to 0 or len, is nonzero); kernels touch it
                // only through CpuSlices (atomic), host code not at all during the launch.
                unsafe { CpuSlice::from_raw_parts(arg.ptr.cast::<T>(), arg.len, arg.write_len) }
            }
            _ => {
                self.mismatch(index, &format!("a slice of {}", T::ELEM));
                CpuSlice::empty()
            }
        }
    }

    /// Slice parameter `index` of a `&mut [T]`: as [`CpuArgs::slice`], with every element
    /// writable in the slice's own view, so a write's bounds check is the read's (one the
    /// compiler can merge with the kernel's own `i < len`).
    #[inline]
    pub fn slice_mut<T: Value>(&self, index: usize) -> CpuSlice<'_, T> {
        match self.args.get(index) {
            Some(arg)
                if arg.is::<T>(true) && arg.write_len == arg.len && self.claim(index, SHARED) =>
            {
                // SAFETY: as in `slice`, for a writable argument (write_len == len); an empty
                // one has nothing to write.
                unsafe { CpuSlice::from_raw_parts(arg.ptr.cast::<T>(), arg.len, arg.len) }
            }
            _ => {
                self.mismatch(index, &format!("a mutable slice of {}", T::ELEM));
                CpuSlice::empty()
            }
        }
    }

    /// Slice parameter `index` of a `&mut [T]` as an owned slice, for a block twin's owned
    /// loop: each element plainly accessible to the one thread whose global x index it is. A
    /// launch hands a parameter out this way or as `CpuSlice`s, never both; a twin that asks
    /// for both, or disagrees with the parameter's type, gets an empty slice and the launch
    /// fails.
    #[inline]
    pub fn slice_owned<T: Scalar>(&self, index: usize) -> CpuOwnedSlice<'_, T> {
        match self.args.get(index) {
            Some(arg)
                if arg.is::<T>(true) && arg.write_len == arg.len && self.claim(index, OWNED) =>
            {
                // SAFETY: the buffer holds `len` valid, aligned `T`s, exclusively borrowed for
                // 'a (write_len == len: a `&mut` argument, or an empty one); the claim makes
                // every view of it in this launch a CpuOwnedSlice, so each element is touched
                // only by the thread that owns it (`CpuOwnedSlice::get`).
                unsafe { CpuOwnedSlice::from_raw(arg.ptr.cast::<T>(), arg.len) }
            }
            _ => {
                self.mismatch(index, &format!("an owned mutable slice of {}", T::TYPE));
                // SAFETY: no elements, so nothing is ever accessed.
                unsafe { CpuOwnedSlice::from_raw(std::ptr::NonNull::dangling().as_ptr(), 0) }
            }
        }
    }

    /// Slice parameter `index` of a `&[T]`, read with plain loads; a twin that disagrees with
    /// the parameter's type (a `&mut [T]` included) gets an empty slice and the launch fails.
    #[inline]
    pub fn slice_read<T: Scalar>(&self, index: usize) -> CpuReadSlice<'_, T> {
        match self.args.get(index) {
            Some(arg) if arg.is::<T>(true) && arg.write_len == 0 => {
                // SAFETY: the buffer holds `len` valid, aligned `T`s, borrowed for 'a; it is
                // not writable (write_len 0), so every CpuSlice and CpuPlace of it refuses
                // writes and atomics, the host cannot touch it while borrowed, and no `&mut`
                // argument is the same buffer (the launch borrows those exclusively).
                unsafe { CpuReadSlice::from_raw(arg.ptr.cast::<T>(), arg.len) }
            }
            _ => {
                self.mismatch(index, &format!("a read-only slice of {}", T::TYPE));
                // SAFETY: no elements, so nothing is ever read.
                unsafe { CpuReadSlice::from_raw(std::ptr::NonNull::dangling().as_ptr(), 0) }
            }
        }
    }

    /// Claims writable argument `index` for `mode` (`SHARED` or `OWNED`) in this launch;
    /// false, and a failed launch, when it was claimed the other way.
    #[inline(always)]
    fn claim(&self, index: usize, mode: u8) -> bool {
        // Relaxed: a claim changes once, from UNCLAIMED, so every load that sees `mode` sees
        // the final state, and it orders no data: accesses of the other mode never happen.
        self.claims[index].load(Ordering::Relaxed) == mode || self.claim_first(index, mode)
    }

    #[cold]
    #[inline(never)]
    fn claim_first(&self, index: usize, mode: u8) -> bool {
        match self.claims[index].compare_exchange(
            UNCLAIMED,
            mode,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => true,
            Err(current) if current == mode => true,
            Err(_) => {
                self.launch.contract_error(format!(
                    "the CPU twin reads parameter {index} both as an owned slice and as a \
                     shared one in one launch; regenerate it with the matching #[kernel] macro"
                ));
                false
            }
        }
    }

    /// Parameter `index` passed by value (an array or a `#[device]` struct; a scalar reads as
    /// [`CpuArgs::scalar`] does); a twin that disagrees with the parameter's type gets zeros
    /// and the launch fails.
    #[inline]
    pub fn value<T: Value>(&self, index: usize) -> T {
        match self.args.get(index) {
            Some(arg) if arg.is::<T>(false) => match T::ELEM {
                ElemType::Scalar(_) => scalar_from_bits(arg.bits),
                // SAFETY: `CpuArg::value` holds a valid, aligned value of this type (its
                // ValueType matched), kept alive by the launch's arguments for 'a.
                ElemType::Value(_) => unsafe { arg.ptr.cast::<T>().read() },
            },
            _ => {
                self.mismatch(index, &T::ELEM.to_string());
                zero()
            }
        }
    }

    /// Tensor map parameter `index` (`&TensorMap<T>`); a twin that disagrees with the
    /// parameter's type gets a map of an empty tensor and the launch fails.
    #[inline]
    pub fn tensor_map<T: Scalar>(&self, index: usize) -> CpuTensorMap<'_, T> {
        match self.args.get(index) {
            Some(arg) if arg.tag == type_tag(T::TYPE) | MAP_TAG => {
                // SAFETY: as in `slice`, for a read-only buffer (write_len is 0) of `T`s.
                let data = unsafe { CpuSlice::from_raw_parts(arg.ptr.cast::<T>(), arg.len, 0) };
                CpuTensorMap::new(data, arg.map)
            }
            _ => {
                self.mismatch(index, &format!("a tensor map of {}", T::TYPE));
                CpuTensorMap::new(CpuSlice::empty(), None)
            }
        }
    }

    /// `#[constant]` table parameter `index` (`&[T; N]`), copied into the thread's array; a
    /// twin that disagrees with the parameter gets zeros and the launch fails.
    #[inline]
    pub fn constant<T: Scalar, const N: usize>(&self, index: usize) -> [T; N] {
        match self.args.get(index) {
            Some(arg) if arg.is::<T>(true) && arg.len == N => {
                let first = arg.ptr.cast::<T>();
                // SAFETY: the table holds N valid, aligned `T`s (`KernelArg::constant` took a
                // `&[T; N]`), borrowed for the launch and never written (write_len is 0).
                std::array::from_fn(|i| unsafe { T::load(first.add(i)) })
            }
            _ => {
                self.mismatch(index, &format!("a #[constant] table [{}; {N}]", T::TYPE));
                [T::from_bits(0); N]
            }
        }
    }

    /// The rows of a `#[constant]` table of rows (`KernelArg::constant_rows`) at `index`; zeros
    /// and a failed launch when the argument is not one.
    pub fn constant_rows<T: Scalar, const R: usize, const N: usize>(
        &self,
        index: usize,
    ) -> [[T; R]; N] {
        match self.args.get(index) {
            Some(arg) if arg.is::<T>(true) && arg.len == R * N => {
                let first = arg.ptr.cast::<T>();
                // SAFETY: the table holds R * N valid, aligned `T`s, row after row
                // (`KernelArg::constant_rows` took a `&[[T; R]; N]`), borrowed for the launch
                // and never written (write_len is 0).
                std::array::from_fn(|i| {
                    std::array::from_fn(|j| unsafe { T::load(first.add(i * R + j)) })
                })
            }
            _ => {
                self.mismatch(
                    index,
                    &format!("a #[constant] table [[{}; {R}]; {N}]", T::TYPE),
                );
                [[T::from_bits(0); R]; N]
            }
        }
    }

    /// The const template argument at position `index` of a generic kernel's template
    /// parameters (types and consts counted together, in declaration order, as in
    /// [`crate::TemplateArg`] lists); 0 and a failed launch when it is not a const.
    pub fn template_const(&self, index: usize) -> u64 {
        match self.template_args.get(index) {
            Some(TemplateArg::Const(value)) => *value,
            other => {
                self.launch.contract_error(format!(
                    "the CPU twin reads template argument {index} as a const, but it is {}",
                    describe_template(other)
                ));
                0
            }
        }
    }

    /// The type template argument at position `index` of a generic kernel's template
    /// parameters, so a twin can dispatch to the instantiation; `None` (and a failed launch)
    /// when it is not a type.
    pub fn template_type(&self, index: usize) -> Option<ScalarType> {
        match self.template_args.get(index) {
            Some(TemplateArg::Type(ty)) => Some(*ty),
            other => {
                self.launch.contract_error(format!(
                    "the CPU twin reads template argument {index} as a type, but it is {}",
                    describe_template(other)
                ));
                None
            }
        }
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// Whether the kernel takes no parameters.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    #[cold]
    #[inline(never)]
    fn mismatch(&self, index: usize, wanted: &str) {
        let found = match self.args.get(index) {
            Some(arg) => arg.describe(),
            None => format!("absent (the kernel takes {})", self.args.len()),
        };
        self.launch.contract_error(format!(
            "the CPU twin reads parameter {index} as {wanted}, but it is {found}; the twin and \
             the kernel's parameter list disagree (regenerate both with one #[kernel] macro)"
        ));
    }
}

fn describe_template(arg: Option<&TemplateArg>) -> String {
    match arg {
        Some(TemplateArg::Type(ty)) => format!("the type {ty}"),
        Some(TemplateArg::Const(value)) => format!("the const {value}"),
        None => "absent".to_string(),
    }
}

/// A scalar `T` (its `ELEM` is a scalar type) from its bits, zero-extended.
fn scalar_from_bits<T: Value>(bits: u64) -> T {
    let size = std::mem::size_of::<T>();
    if size == 0 || size > 8 {
        return zero();
    }
    let bytes = if cfg!(target_endian = "little") {
        bits.to_le_bytes()
    } else {
        (bits << (64 - 8 * size as u32)).to_be_bytes()
    };
    // SAFETY: T is the scalar whose bits these are (a `Value` with a scalar ELEM is that
    // scalar), at most 8 bytes, and its bytes come first in memory order; every bit pattern
    // a scalar argument carries is valid for its type.
    unsafe { bytes.as_ptr().cast::<T>().read_unaligned() }
}
