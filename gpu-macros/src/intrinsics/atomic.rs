//! Atomics: methods on the elements of `&mut [T]` slices and shared memory, each yielding
//! the element's old value.

use super::{Access, Arg, CpuWriter, CudaWriter, Ret, Signature};
use crate::types::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// `x.atomic_load(i)`: a load no write can tear.
    Load,
    Add,
    Sub,
    Min,
    Max,
    Exchange,
    /// `x.atomic_compare_exchange(i, current, new)`.
    CompareExchange,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    const ALL: [AtomicOp; 10] = [
        AtomicOp::Load,
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exchange,
        AtomicOp::CompareExchange,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];

    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The method's name, which is also the name of its CPU and CUDA helpers.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Load => "atomic_load",
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Exchange => "atomic_exchange",
            AtomicOp::CompareExchange => "atomic_compare_exchange",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
        }
    }

    /// The values after the index.
    fn values(self) -> usize {
        match self {
            AtomicOp::Load => 0,
            AtomicOp::CompareExchange => 2,
            AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::Min
            | AtomicOp::Max
            | AtomicOp::Exchange
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor => 1,
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        let access = Access::Atomic {
            writes: self != AtomicOp::Load,
            bitwise: matches!(self, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor),
        };
        let mut args = vec![Arg::Memory(access), Arg::Scalar(Scalar::Usize)];
        args.extend((0..self.values()).map(|_| Arg::Element));
        let form = match self.values() {
            0 => "(index)",
            2 => "(index, current, new)",
            _ => "(index, value)",
        };
        Signature::new(args, Ret::Element).usage(format!("`{}` takes {form}", self.name()))
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        w.helper("rs_atomics");
        let index = w.checked_index(0, 1);
        let mut args = vec![format!("&{}[{index}]", w.arg(0))];
        args.extend((2..w.count()).map(|i| w.bare(i)));
        format!("rs_{}({})", self.name(), args.join(", "))
    }

    /// The CPU twin's Rust of a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        let memory = w.memory(0);
        let values: Vec<String> = (1..w.count()).map(|i| w.arg(i)).collect();
        format!(
            "{memory}.{}({}, __t, {})",
            self.name(),
            values.join(", "),
            w.line()
        )
    }
}
