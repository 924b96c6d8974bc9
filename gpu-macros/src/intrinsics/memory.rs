//! Memory movement: vector accesses of two and four elements, asynchronous copies into shared memory, and the
//! mbarriers and proxy fence that order them.

use super::{Access, Arg, CpuWriter, CudaWriter, Elem, Placement, Ret, Signature};
use crate::types::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOp {
    /// `x.load2(i)`: elements `i..i + 2` in one access (`float2`), only as a `let`
    /// initializer.
    Load2,
    /// `x.store2(i, v)`: a 2-element array stored in one access.
    Store2,
    /// `x.load4(i)`: elements `i..i + 4` in one 16-byte load, only as a `let` initializer.
    Load4,
    /// `x.store4(i, v)`: a 4-element array stored in one 16-byte store.
    Store4,
    /// `cp_async_16(dst, dst_index, src, src_index, valid)`: an asynchronous 16-byte copy
    /// from a slice to shared memory (zeros when `valid` is false).
    CpAsync16,
    /// `cp_async_commit()`: closes the group of copies issued so far.
    CpAsyncCommit,
    /// `cp_async_wait(n)`: waits until at most `n` committed groups are in flight.
    CpAsyncWait,
    /// An mbarrier in shared memory of `u64` (`bars[index]`).
    Mbarrier(MbarrierOp),
    /// `fence_proxy_async()`: makes shared-memory writes visible to the async proxy.
    FenceProxyAsync,
    /// `tma_load_2d(dst, dst_index, map, x, y, bars, i)`: a tensor copy of the box of `map` at
    /// column `x`, row `y` into shared memory, completing its bytes on `bars[i]`.
    TmaLoad2d,
}

/// What an mbarrier intrinsic does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierOp {
    /// `mbarrier_init(bars, i, count)`: sets the expected arrival count; the first phase has
    /// parity 0.
    Init,
    /// `mbarrier_arrive(bars, i)`: one arrival; the last of a phase completes it.
    Arrive,
    /// `mbarrier_wait(bars, i, parity)`: waits until the phase of that parity has completed.
    Wait,
    /// `cp_async_mbarrier_arrive(bars, i)`: one arrival once this thread's `cp_async_16`
    /// copies so far have landed.
    CpAsyncArrive,
    /// `mbarrier_arrive_expect_tx(bars, i, bytes)`: announces `bytes` of tensor copies for
    /// the current phase, then one arrival.
    ArriveExpectTx,
}

impl MemoryOp {
    const FUNCTIONS: [MemoryOp; 10] = [
        MemoryOp::CpAsync16,
        MemoryOp::CpAsyncCommit,
        MemoryOp::CpAsyncWait,
        MemoryOp::Mbarrier(MbarrierOp::Init),
        MemoryOp::Mbarrier(MbarrierOp::Arrive),
        MemoryOp::Mbarrier(MbarrierOp::Wait),
        MemoryOp::Mbarrier(MbarrierOp::CpAsyncArrive),
        MemoryOp::FenceProxyAsync,
        MemoryOp::TmaLoad2d,
        MemoryOp::Mbarrier(MbarrierOp::ArriveExpectTx),
    ];

    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<MemoryOp> {
        MemoryOp::FUNCTIONS.into_iter().find(|op| op.name() == name)
    }

    /// The vector access methods, recognised by their argument count (other counts are
    /// ordinary, unknown methods).
    pub fn from_method(name: &str, count: usize) -> Option<MemoryOp> {
        match (name, count) {
            ("load2", 1) => Some(MemoryOp::Load2),
            ("store2", 2) => Some(MemoryOp::Store2),
            ("load4", 1) => Some(MemoryOp::Load4),
            ("store4", 2) => Some(MemoryOp::Store4),
            _ => None,
        }
    }

    /// The name a user writes.
    pub fn name(self) -> &'static str {
        match self {
            MemoryOp::Load2 => "load2",
            MemoryOp::Store2 => "store2",
            MemoryOp::Load4 => "load4",
            MemoryOp::Store4 => "store4",
            MemoryOp::CpAsync16 => "cp_async_16",
            MemoryOp::CpAsyncCommit => "cp_async_commit",
            MemoryOp::CpAsyncWait => "cp_async_wait",
            MemoryOp::Mbarrier(MbarrierOp::Init) => "mbarrier_init",
            MemoryOp::Mbarrier(MbarrierOp::Arrive) => "mbarrier_arrive",
            MemoryOp::Mbarrier(MbarrierOp::Wait) => "mbarrier_wait",
            MemoryOp::Mbarrier(MbarrierOp::CpAsyncArrive) => "cp_async_mbarrier_arrive",
            MemoryOp::FenceProxyAsync => "fence_proxy_async",
            MemoryOp::TmaLoad2d => "tma_load_2d",
            MemoryOp::Mbarrier(MbarrierOp::ArriveExpectTx) => "mbarrier_arrive_expect_tx",
        }
    }

    /// The elements a vector access moves.
    fn lanes(self) -> u32 {
        match self {
            MemoryOp::Load2 | MemoryOp::Store2 => 2,
            MemoryOp::Load4
            | MemoryOp::Store4
            | MemoryOp::CpAsync16
            | MemoryOp::CpAsyncCommit
            | MemoryOp::CpAsyncWait
            | MemoryOp::Mbarrier(_)
            | MemoryOp::FenceProxyAsync
            | MemoryOp::TmaLoad2d => 4,
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        match self {
            MemoryOp::Load2 | MemoryOp::Load4 => {
                let lanes = self.lanes();
                Signature::new(
                    vec![
                        Arg::Memory(Access::Vector {
                            store: false,
                            lanes,
                        }),
                        Arg::Index,
                    ],
                    Ret::Elements(lanes),
                )
                .placement(Placement::LetInit)
            }
            MemoryOp::Store2 | MemoryOp::Store4 => {
                let lanes = self.lanes();
                Signature::new(
                    vec![
                        Arg::Memory(Access::Vector { store: true, lanes }),
                        Arg::Index,
                        Arg::Elements(lanes),
                    ],
                    Ret::Unit,
                )
            }
            MemoryOp::CpAsync16 => Signature::new(
                vec![
                    Arg::Shared {
                        elem: Elem::Concrete,
                        message: "`cp_async_16` copies into shared memory of a concrete number type, not {found}",
                    },
                    Arg::Index,
                    Arg::Slice {
                        elem: Elem::Concrete,
                        message: "`cp_async_16` copies from a slice of a concrete number type, not {found}",
                    },
                    Arg::Index,
                    Arg::Scalar(Scalar::Bool),
                ],
                Ret::Unit,
            )
            .usage("`cp_async_16` takes (shared, shared index, slice, slice index, valid: bool)"),
            MemoryOp::TmaLoad2d => Signature::new(
                vec![
                    Arg::Shared {
                        elem: Elem::Concrete,
                        message: "`tma_load_2d` copies into shared memory of a concrete number type, not {found}",
                    },
                    Arg::Index,
                    Arg::TensorMap {
                        message: "`tma_load_2d` reads a `&TensorMap<T>` kernel parameter, not {found}",
                    },
                    Arg::Scalar(Scalar::I32),
                    Arg::Scalar(Scalar::I32),
                    Arg::Shared {
                        elem: Elem::Is(Scalar::U64),
                        message: "mbarriers live in shared memory of `u64`, not {found}: declare them `shared_array::<u64, N>()`",
                    },
                    Arg::Index,
                ],
                Ret::Unit,
            )
            .usage(
                "`tma_load_2d` takes (shared, shared index, map, x: i32, y: i32, barriers, barrier index)",
            ),
            MemoryOp::CpAsyncCommit | MemoryOp::FenceProxyAsync => {
                Signature::new(vec![], Ret::Unit)
            }
            MemoryOp::CpAsyncWait => Signature::new(vec![Arg::Scalar(Scalar::U32)], Ret::Unit),
            MemoryOp::Mbarrier(op) => {
                let mut args = vec![
                    Arg::Shared {
                        elem: Elem::Is(Scalar::U64),
                        message: "mbarriers live in shared memory of `u64`, not {found}: declare them `shared_array::<u64, N>()`",
                    },
                    Arg::Index,
                ];
                let shape = match op {
                    MbarrierOp::Init => "(barriers, index, count: u32)",
                    MbarrierOp::Wait => "(barriers, index, parity: u32)",
                    MbarrierOp::ArriveExpectTx => "(barriers, index, bytes: u32)",
                    MbarrierOp::Arrive | MbarrierOp::CpAsyncArrive => "(barriers, index)",
                };
                if matches!(
                    op,
                    MbarrierOp::Init | MbarrierOp::Wait | MbarrierOp::ArriveExpectTx
                ) {
                    args.push(Arg::Scalar(Scalar::U32));
                }
                Signature::new(args, Ret::Unit).usage(format!(
                    "`{}` takes {shape}, the barriers a `shared_array::<u64, N>()`",
                    self.name()
                ))
            }
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            MemoryOp::Load2 | MemoryOp::Load4 => {
                let lanes = self.lanes();
                let name = w.target();
                let elem = w.element(0);
                let index = w.vector_index(0, 1, lanes);
                let base = w.arg(0);
                let vector = w.vector_type(elem, lanes);
                let v = w.fresh(&format!("{name}_v"));
                let fields: Vec<String> = ["x", "y", "z", "w"][..lanes as usize]
                    .iter()
                    .enumerate()
                    .map(|(k, field)| format!("{name}[{k}] = {v}.{field};"))
                    .collect();
                w.statement(&format!("{} {name}[{lanes}];", w.cuda_type(elem)));
                w.statement(&format!(
                    "{{ const {vector} {v} = *reinterpret_cast<const {vector}*>(&{base}[{index}]); {} }}",
                    fields.join(" ")
                ));
                String::new()
            }
            MemoryOp::Store2 | MemoryOp::Store4 => {
                let lanes = self.lanes();
                let vector = w.vector_type(w.element(0), lanes);
                let index = w.vector_index(0, 1, lanes);
                let base = w.arg(0);
                let value = w.arg(2);
                let values: Vec<String> = (0..lanes).map(|k| format!("{value}[{k}]")).collect();
                format!(
                    "(*reinterpret_cast<{vector}*>(&{base}[{index}]) = {vector}{{{}}})",
                    values.join(", ")
                )
            }
            MemoryOp::CpAsync16 => {
                let dst_index = w.copy_index(0, 1);
                let dst = w.arg(0);
                let src_len = w.length(2);
                let src = w.arg(2);
                let src_index = w.bare(3);
                let valid = w.bare(4);
                let helper = w.helper("rs_cp_async");
                // The helper checks the source index only for a valid copy: an invalid one
                // reads nothing.
                format!(
                    "{helper}_16({dst}, (unsigned int){dst_index}, {src}, {src_len}, {src_index}, {valid}, {})",
                    w.line()
                )
            }
            MemoryOp::CpAsyncCommit => w.template("rs_cp_async_commit()", Some("rs_cp_async")),
            MemoryOp::CpAsyncWait => w.template("rs_cp_async_wait({0})", Some("rs_cp_async")),
            MemoryOp::Mbarrier(op) => {
                w.helper("rs_mbarrier");
                let index = w.checked_index(0, 1);
                let at = format!("&{}[{index}]", w.arg(0));
                match op {
                    MbarrierOp::Init => format!("rs_mbarrier_init({at}, {})", w.bare(2)),
                    MbarrierOp::Wait => format!("rs_mbarrier_wait({at}, {})", w.bare(2)),
                    MbarrierOp::Arrive => format!("rs_mbarrier_arrive({at})"),
                    MbarrierOp::CpAsyncArrive => format!("rs_cp_async_mbarrier_arrive({at})"),
                    MbarrierOp::ArriveExpectTx => {
                        w.helper("rs_tma");
                        format!("rs_mbarrier_arrive_expect_tx({at}, {})", w.bare(2))
                    }
                }
            }
            MemoryOp::TmaLoad2d => {
                let helper = w.helper("rs_tma");
                let dst_index = w.checked_index(0, 1);
                let dst = format!("&{}[{dst_index}]", w.arg(0));
                let bar_index = w.checked_index(5, 6);
                let bar = format!("&{}[{bar_index}]", w.arg(5));
                format!(
                    "{helper}_load_2d({dst}, &{}, {}, {}, {bar})",
                    w.arg(2),
                    w.bare(3),
                    w.bare(4)
                )
            }
            MemoryOp::FenceProxyAsync => {
                w.template("rs_fence_proxy_async()", Some("rs_fence_proxy_async"))
            }
        }
    }

    /// The CPU twin's Rust of a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            MemoryOp::Load2 => w.template("{0}.load2({1}, __t, {line})"),
            MemoryOp::Store2 => w.template("{0}.store2({1}, {2}, __t, {line})"),
            MemoryOp::Load4 => w.template("{0}.load4({1}, __t, {line})"),
            MemoryOp::Store4 => w.template("{0}.store4({1}, {2}, __t, {line})"),
            MemoryOp::CpAsync16 => {
                w.template("{rt}::cpu::cp_async_16(__t, {0}, {1}, {2}, {3}, {4}, {line})")
            }
            MemoryOp::CpAsyncCommit => w.template("__t.cp_async_commit()"),
            MemoryOp::CpAsyncWait => w.template("__t.cp_async_wait({0})"),
            MemoryOp::Mbarrier(MbarrierOp::Init) => {
                w.template("{rt}::cpu::mbarrier_init(__t, {0}, {1}, {2}, {line})")
            }
            MemoryOp::Mbarrier(MbarrierOp::Wait) => {
                w.template("{rt}::cpu::mbarrier_wait(__t, {0}, {1}, {2}, {line})")
            }
            // The CPU's copies land at once: the arrival can be made now.
            MemoryOp::Mbarrier(MbarrierOp::Arrive | MbarrierOp::CpAsyncArrive) => {
                w.template("{rt}::cpu::mbarrier_arrive(__t, {0}, {1}, {line})")
            }
            MemoryOp::FenceProxyAsync => w.template("__t.fence_proxy_async()"),
            MemoryOp::Mbarrier(MbarrierOp::ArriveExpectTx) => {
                w.template("{rt}::cpu::mbarrier_arrive_expect_tx(__t, {0}, {1}, {2}, {line})")
            }
            MemoryOp::TmaLoad2d => {
                w.template("{rt}::cpu::tma_load_2d(__t, {0}, {1}, {2}, {3}, {4}, {5}, {6}, {line})")
            }
        }
    }

    /// Whether every thread named must reach the call before any leaves it.
    pub fn synchronizes(self) -> bool {
        match self {
            MemoryOp::Mbarrier(MbarrierOp::Wait) => true,
            MemoryOp::Load2
            | MemoryOp::Store2
            | MemoryOp::Load4
            | MemoryOp::Store4
            | MemoryOp::CpAsync16
            | MemoryOp::CpAsyncCommit
            | MemoryOp::CpAsyncWait
            | MemoryOp::Mbarrier(
                MbarrierOp::Init
                | MbarrierOp::Arrive
                | MbarrierOp::CpAsyncArrive
                | MbarrierOp::ArriveExpectTx,
            )
            | MemoryOp::FenceProxyAsync
            | MemoryOp::TmaLoad2d => false,
        }
    }
}
