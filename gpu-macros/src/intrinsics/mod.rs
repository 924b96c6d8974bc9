//! The GPU intrinsics: each one an entry in the file of its domain, owning everything the
//! stages need to know about it.
//!
//! An entry gives its name (how [`Op::function`] and [`Op::method`] find it), its
//! [`Signature`] (the argument shapes the parser accepts and the checker interprets, and its
//! result), its CUDA spelling, its CPU-twin spelling and whether it synchronizes threads (so
//! the CPU backend runs the kernel's threads as coroutines that meet there). The stages read
//! this data; nothing here knows about them: the spellings write through [`CudaWriter`] and
//! [`CpuWriter`], which the emitters implement.
//!
//! Adding an intrinsic is one variant in its domain's enum; every `match` on the enums is
//! exhaustive, so the compiler lists what the new variant still lacks.
//!
//! The index builtins ([`Builtin`]: `thread_idx()` and the like) live here too, with their
//! spellings per axis, though they are not calls but values read through `.x`, `.y`, `.z`.

mod atomic;
mod memory;
mod random;
mod tensor;
mod thread;
mod warp;

pub use atomic::AtomicOp;
pub use memory::MemoryOp;
pub use random::RandomOp;
pub use tensor::TensorOp;
pub use thread::{Builtin, SyncOp};
pub use warp::WarpOp;

use crate::types::Scalar;

/// An intrinsic with its static parameters (the `N` of `wgmma_m64n{N}k16_f16`, say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Sync(SyncOp),
    Warp(WarpOp),
    Atomic(AtomicOp),
    Memory(MemoryOp),
    Tensor(TensorOp),
    Random(RandomOp),
}

impl Op {
    /// The intrinsic called as the free function `name`.
    pub fn function(name: &str) -> Option<Op> {
        SyncOp::from_name(name)
            .map(Op::Sync)
            .or_else(|| WarpOp::from_name(name).map(Op::Warp))
            .or_else(|| MemoryOp::from_name(name).map(Op::Memory))
            .or_else(|| TensorOp::from_name(name).map(Op::Tensor))
            .or_else(|| RandomOp::from_name(name).map(Op::Random))
    }

    /// The intrinsic called as the method `name` with `count` arguments on a slice or shared
    /// memory (the receiver becomes the first argument).
    pub fn method(name: &str, count: usize) -> Option<Op> {
        AtomicOp::from_name(name)
            .map(Op::Atomic)
            .or_else(|| MemoryOp::from_method(name, count).map(Op::Memory))
    }

    /// The name a user writes, for messages.
    pub fn name(self) -> String {
        match self {
            Op::Sync(op) => op.name().to_string(),
            Op::Warp(op) => op.name().to_string(),
            Op::Atomic(op) => op.name().to_string(),
            Op::Memory(op) => op.name().to_string(),
            Op::Tensor(op) => op.name(),
            Op::Random(op) => op.name().to_string(),
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        match self {
            Op::Sync(op) => op.signature(),
            Op::Warp(op) => op.signature(),
            Op::Atomic(op) => op.signature(),
            Op::Memory(op) => op.signature(),
            Op::Tensor(op) => op.signature(),
            Op::Random(op) => op.signature(),
        }
    }

    /// Writes the CUDA C++ of a call: an expression, or for a `let` initializer the
    /// declaration of [`CudaWriter::target`] (then the returned expression is empty).
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            Op::Sync(op) => op.cuda(w),
            Op::Warp(op) => op.cuda(w),
            Op::Atomic(op) => op.cuda(w),
            Op::Memory(op) => op.cuda(w),
            Op::Tensor(op) => op.cuda(w),
            Op::Random(op) => op.cuda(w),
        }
    }

    /// The CPU twin's Rust for a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            Op::Sync(op) => op.cpu(w),
            Op::Warp(op) => op.cpu(w),
            Op::Atomic(op) => op.cpu(w),
            Op::Memory(op) => op.cpu(w),
            Op::Tensor(op) => op.cpu(w),
            Op::Random(op) => op.cpu(w),
        }
    }

    /// Whether every thread named must reach the call before any leaves it: the CPU backend
    /// then runs the kernel's threads as coroutines that meet there.
    pub fn synchronizes(self) -> bool {
        match self {
            Op::Sync(op) => op.synchronizes(),
            Op::Warp(op) => op.synchronizes(),
            Op::Atomic(_) | Op::Random(_) => false,
            Op::Memory(op) => op.synchronizes(),
            Op::Tensor(op) => op.synchronizes(),
        }
    }
}

/// What a call takes and gives.
pub struct Signature {
    pub args: Vec<Arg>,
    pub ret: Ret,
    pub placement: Placement,
    pub arity: Arity,
}

impl Signature {
    /// A value-producing call whose argument count the checker verifies.
    pub fn new(args: Vec<Arg>, ret: Ret) -> Signature {
        Signature {
            args,
            ret,
            placement: Placement::Value,
            arity: Arity::Counted,
        }
    }

    /// The same, with the parser saying `usage` when the argument count is wrong.
    pub fn usage(self, usage: impl Into<String>) -> Signature {
        Signature {
            arity: Arity::Usage(usage.into()),
            ..self
        }
    }

    pub fn placement(self, placement: Placement) -> Signature {
        Signature { placement, ..self }
    }
}

/// One argument's shape: what the parser accepts there and the type rule the checker applies.
pub enum Arg {
    /// A value of this type.
    Scalar(Scalar),
    /// A value of a type `accepts` allows; a [`Ret::Value`] result has its type. `message`
    /// (with `{name}` and `{found}`) when it is another.
    Value {
        accepts: fn(Scalar) -> bool,
        message: &'static str,
    },
    /// An element index: `usize`.
    Index,
    /// An integer compiled into the instruction (literals and const generic parameters);
    /// `message` when it is not.
    Constant { message: &'static str },
    /// Shared memory whose element type `elem` accepts; `message` (with `{found}`) when not.
    Shared { elem: Elem, message: &'static str },
    /// A slice whose element type `elem` accepts; `message` (with `{found}`) when not.
    Slice { elem: Elem, message: &'static str },
    /// A `&TensorMap<T>` kernel parameter; `message` (with `{found}`) when something else.
    TensorMap { message: &'static str },
    /// A local array variable `[elem; len]` (any length when `len` is `None`), written
    /// `&mut name` when the call updates it in place; `message` when it is something else.
    Fragment {
        elem: Scalar,
        len: Option<u32>,
        by_mut_ref: bool,
        message: String,
    },
    /// The slice or shared memory a method is called on.
    Memory(Access),
    /// A value of the [`Arg::Memory`] argument's element type.
    Element,
    /// An array of `n` values of the [`Arg::Memory`] argument's element type.
    Elements(u32),
}

/// The element types an [`Arg::Shared`] or [`Arg::Slice`] accepts.
#[derive(Clone, Copy)]
pub enum Elem {
    Any,
    Is(Scalar),
    /// A concrete number type (one whose size is known).
    Concrete,
}

impl Elem {
    /// Whether `elem` is one of these types.
    pub fn accepts(self, elem: Scalar) -> bool {
        match self {
            Elem::Any => true,
            Elem::Is(scalar) => elem == scalar,
            Elem::Concrete => elem != Scalar::Bool && elem.size_bytes().is_some(),
        }
    }
}

/// How a method reaches the memory it is called on.
#[derive(Clone, Copy)]
pub enum Access {
    /// An atomic on one element: a `&mut [T]` slice or shared memory (`&[T]` too for a
    /// plain load), of integers (and floats unless `bitwise`).
    Atomic { writes: bool, bitwise: bool },
    /// `lanes` elements moved at once (`load2`/`store2`, `load4`/`store4`).
    Vector { store: bool, lanes: u32 },
}

/// The result type.
pub enum Ret {
    Unit,
    Scalar(Scalar),
    /// The type of the [`Arg::Value`] argument.
    Value,
    /// The [`Arg::Memory`] argument's element type.
    Element,
    /// A fresh `[elem; len]` array.
    Array {
        elem: Scalar,
        len: u32,
    },
    /// `n` of the [`Arg::Memory`] argument's elements.
    Elements(u32),
}

/// Where a call may stand.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Anywhere a value may.
    Value,
    /// Only as a `let` initializer: it creates an array.
    LetInit,
    /// Only as a statement; `message` when used as a value.
    Statement { message: &'static str },
}

/// Who checks the number of arguments.
pub enum Arity {
    /// The checker: "`name` takes N arguments, found M".
    Counted,
    /// The parser, which says this message.
    Usage(String),
}

/// What a CUDA spelling may ask of the emitter.
pub trait CudaWriter {
    /// The number of arguments.
    fn count(&self) -> usize;
    /// Argument `i` as C++.
    fn arg(&mut self, i: usize) -> String;
    /// Argument `i` as C++ without its outer parentheses, for an operand that stands alone.
    fn bare(&mut self, i: usize) -> String;
    /// Includes the prelude helper `name` and returns its name.
    fn helper(&mut self, name: &'static str) -> &'static str;
    /// The element index argument `index` into argument `base`, bounds-checked in checked mode.
    fn checked_index(&mut self, base: usize, index: usize) -> String;
    /// The first index of a `lanes`-element access, checked to have all of them in bounds.
    fn vector_index(&mut self, base: usize, index: usize, lanes: u32) -> String;
    /// The first index of a 16-byte copy, its last element checked.
    fn copy_index(&mut self, base: usize, index: usize) -> String;
    /// The length of argument `i` (a slice, an array, shared memory) as C++.
    fn length(&mut self, i: usize) -> String;
    /// The element type of argument `i`.
    fn element(&self, i: usize) -> Scalar;
    /// The length of the array argument `i`.
    fn array_len(&self, i: usize) -> u64;
    /// The scalar type of argument `i` (its element type for memory).
    fn scalar(&self, i: usize) -> Scalar;
    /// The C++ spelling of `scalar`.
    fn cuda_type(&self, scalar: Scalar) -> String;
    /// The C++ type moving `lanes` (2 or 4) `elem` at once.
    fn vector_type(&mut self, elem: Scalar, lanes: u32) -> String;
    /// The source line of the call.
    fn line(&self) -> usize;
    /// The variable a `let` initializer declares.
    fn target(&self) -> String;
    /// A name not yet used in the function, starting with `base`.
    fn fresh(&mut self, base: &str) -> String;
    /// Writes one line of the `let`'s declaration.
    fn statement(&mut self, code: &str);

    /// `template` with `{0}`, `{1}`, ... replaced by the bare arguments, after including
    /// `helper`.
    fn template(&mut self, template: &str, helper: Option<&'static str>) -> String {
        if let Some(helper) = helper {
            self.helper(helper);
        }
        let args: Vec<String> = (0..self.count()).map(|i| self.bare(i)).collect();
        fill(template, |key| {
            key.parse::<usize>().ok().and_then(|i| args.get(i).cloned())
        })
    }
}

/// What a CPU-twin spelling may ask of the emitter.
pub trait CpuWriter {
    /// The number of arguments.
    fn count(&self) -> usize;
    /// Argument `i` as Rust.
    fn arg(&mut self, i: usize) -> String;
    /// Argument `i` as the memory a method works on: a slice, or a row of memory (an array
    /// element of a slice or shared memory) as a slice of its elements.
    fn memory(&mut self, i: usize) -> String;
    /// The runtime crate's path.
    fn rt(&self) -> String;
    /// The source line of the call.
    fn line(&self) -> usize;

    /// `template` with `{0}`, `{1}`, ... replaced by the arguments, `{args}` by all of them
    /// separated by commas, `{rt}` by the runtime's path and `{line}` by the line.
    fn template(&mut self, template: &str) -> String {
        let args: Vec<String> = (0..self.count()).map(|i| self.arg(i)).collect();
        let (rt, line) = (self.rt(), self.line());
        fill(template, |key| match key {
            "rt" => Some(rt.clone()),
            "line" => Some(line.to_string()),
            "args" => Some(args.join(", ")),
            _ => key.parse::<usize>().ok().and_then(|i| args.get(i).cloned()),
        })
    }
}

/// `template` with each `{key}` that `value` knows replaced, in one pass (so an argument's
/// own braces are never read as placeholders).
fn fill(template: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find('}')
            .and_then(|close| Some((close, value(&after[..close])?)))
        {
            Some((close, text)) => {
                out.push_str(&text);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every free-function intrinsic of the language, as users write them.
    const FUNCTIONS: &[&str] = &[
        "sync_threads",
        "grid_sync",
        "thread_fence",
        "thread_fence_block",
        "thread_fence_system",
        "clock64",
        "sync_warp",
        "shfl_sync",
        "shfl_up_sync",
        "shfl_down_sync",
        "shfl_xor_sync",
        "all_sync",
        "any_sync",
        "ballot_sync",
        "reduce_add_sync",
        "reduce_min_sync",
        "reduce_max_sync",
        "lane_id",
        "warp_size",
        "active_mask",
        "cp_async_16",
        "cp_async_commit",
        "cp_async_wait",
        "mbarrier_init",
        "mbarrier_arrive",
        "mbarrier_wait",
        "cp_async_mbarrier_arrive",
        "fence_proxy_async",
        "mma_m16n8k16_f16",
        "mma_m16n8k16_bf16",
        "ldmatrix_x1",
        "ldmatrix_x2",
        "ldmatrix_x4",
        "ldmatrix_x1_trans",
        "ldmatrix_x2_trans",
        "ldmatrix_x4_trans",
        "wgmma_desc",
        "wgmma_m64n8k16_f16",
        "wgmma_m64n128k16_bf16",
        "wgmma_m64n256k16_f16",
        "wgmma_fence",
        "wgmma_commit",
        "wgmma_wait",
        "pack_f16x2",
        "pack_bf16x2",
        "philox4x32_10",
        "uniform_f32",
    ];

    /// The method intrinsics with their argument counts (the receiver not counted).
    const METHODS: &[(&str, usize)] = &[
        ("atomic_load", 1),
        ("atomic_add", 2),
        ("atomic_compare_exchange", 3),
        ("atomic_xor", 2),
        ("load2", 1),
        ("store2", 2),
        ("load4", 1),
        ("store4", 2),
    ];

    #[test]
    fn names_find_their_op_and_ops_give_their_name() {
        for name in FUNCTIONS {
            let op = Op::function(name).unwrap_or_else(|| panic!("`{name}` is no intrinsic"));
            assert_eq!(op.name(), *name);
            assert!(Op::method(name, 1).is_none(), "`{name}` is no method");
        }
        for (name, count) in METHODS {
            let op = Op::method(name, *count).unwrap_or_else(|| panic!("`{name}` is no method"));
            assert_eq!(op.name(), *name);
            assert!(Op::function(name).is_none(), "`{name}` is no free function");
        }
    }

    #[test]
    fn malformed_names_are_not_intrinsics() {
        for name in [
            "ldmatrix_x3",
            "ldmatrix_x4_transpose",
            "mma_m16n8k16_f32",
            "wgmma_m64n12k16_f16",
            "wgmma_m64n264k16_f16",
            "wgmma_m64n64k16_f32",
            "pack_f32x2",
        ] {
            assert_eq!(Op::function(name), None, "{name}");
        }
        // `load4` and `store4` are recognised by their argument count only.
        assert_eq!(Op::method("load4", 2), None);
        assert_eq!(Op::method("store4", 1), None);
    }

    /// An intrinsic that may only initialise a `let` creates an array the emitters declare,
    /// and one standing alone as a statement gives nothing.
    #[test]
    fn placements_agree_with_results() {
        let ops = FUNCTIONS
            .iter()
            .filter_map(|name| Op::function(name))
            .chain(METHODS.iter().filter_map(|(name, n)| Op::method(name, *n)));
        for op in ops {
            let signature = op.signature();
            match signature.placement {
                Placement::LetInit => assert!(
                    matches!(signature.ret, Ret::Array { .. } | Ret::Elements(_)),
                    "{}",
                    op.name()
                ),
                Placement::Statement { .. } => {
                    assert!(matches!(signature.ret, Ret::Unit), "{}", op.name())
                }
                Placement::Value => {}
            }
            let by_mut_ref = signature.args.iter().any(|arg| {
                matches!(
                    arg,
                    Arg::Fragment {
                        by_mut_ref: true,
                        ..
                    }
                )
            });
            // An argument written `&mut acc` is only checked in place, so the parser must
            // know the argument count.
            if by_mut_ref {
                assert!(matches!(signature.arity, Arity::Usage(_)), "{}", op.name());
            }
        }
    }
}
