//! Warp-level operations: shuffles, votes, reductions, the lane's position and the warp
//! barrier.

use super::{Arg, CpuWriter, CudaWriter, Ret, Signature};
use crate::types::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `sync_warp()`: the lanes of the warp wait for each other.
    SyncWarp,
    /// `shfl_*_sync(mask, value, lane)`: a value read from another lane.
    Shuffle(ShuffleOp),
    /// `all_sync`, `any_sync`, `ballot_sync(mask, predicate)`.
    Vote(VoteOp),
    /// `reduce_add_sync(mask, v)`, `reduce_min_sync`, `reduce_max_sync`: the `u32` or `i32`
    /// values of the lanes in `mask` combined, every one of them getting the result (PTX
    /// `redux.sync`, sm_80 and later).
    Reduce(ReduceOp),
    /// `lane_id()`: this thread's position in its warp.
    LaneId,
    /// `warp_size()`.
    WarpSize,
    /// `active_mask()`: the lanes executing this call together.
    ActiveMask,
}

/// Which lane a shuffle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleOp {
    /// `shfl_sync`: the lane given.
    Index,
    /// `shfl_up_sync`: `delta` lanes below.
    Up,
    /// `shfl_down_sync`: `delta` lanes above.
    Down,
    /// `shfl_xor_sync`: this lane's index xor the mask.
    Xor,
}

/// What a vote computes from the lanes' predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteOp {
    All,
    Any,
    /// One bit per lane.
    Ballot,
}

/// How a warp reduction combines two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Wrapping, as Rust's integer arithmetic in kernels.
    Add,
    Min,
    Max,
}

impl WarpOp {
    const ALL: [WarpOp; 14] = [
        WarpOp::SyncWarp,
        WarpOp::Shuffle(ShuffleOp::Index),
        WarpOp::Shuffle(ShuffleOp::Up),
        WarpOp::Shuffle(ShuffleOp::Down),
        WarpOp::Shuffle(ShuffleOp::Xor),
        WarpOp::Vote(VoteOp::All),
        WarpOp::Vote(VoteOp::Any),
        WarpOp::Vote(VoteOp::Ballot),
        WarpOp::Reduce(ReduceOp::Add),
        WarpOp::Reduce(ReduceOp::Min),
        WarpOp::Reduce(ReduceOp::Max),
        WarpOp::LaneId,
        WarpOp::WarpSize,
        WarpOp::ActiveMask,
    ];

    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<WarpOp> {
        WarpOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name a user writes.
    pub fn name(self) -> &'static str {
        match self {
            WarpOp::SyncWarp => "sync_warp",
            WarpOp::Shuffle(ShuffleOp::Index) => "shfl_sync",
            WarpOp::Shuffle(ShuffleOp::Up) => "shfl_up_sync",
            WarpOp::Shuffle(ShuffleOp::Down) => "shfl_down_sync",
            WarpOp::Shuffle(ShuffleOp::Xor) => "shfl_xor_sync",
            WarpOp::Vote(VoteOp::All) => "all_sync",
            WarpOp::Vote(VoteOp::Any) => "any_sync",
            WarpOp::Vote(VoteOp::Ballot) => "ballot_sync",
            WarpOp::Reduce(ReduceOp::Add) => "reduce_add_sync",
            WarpOp::Reduce(ReduceOp::Min) => "reduce_min_sync",
            WarpOp::Reduce(ReduceOp::Max) => "reduce_max_sync",
            WarpOp::LaneId => "lane_id",
            WarpOp::WarpSize => "warp_size",
            WarpOp::ActiveMask => "active_mask",
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        let u32 = || Arg::Scalar(Scalar::U32);
        match self {
            WarpOp::SyncWarp => Signature::new(vec![], Ret::Unit),
            WarpOp::Shuffle(_) => {
                let value = Arg::Value {
                    accepts: |scalar| scalar.is_number() && !scalar.is_half(),
                    message: "`{name}` moves numbers, found {found}",
                };
                Signature::new(vec![u32(), value, u32()], Ret::Value)
            }
            WarpOp::Vote(vote) => {
                let ret = match vote {
                    VoteOp::All | VoteOp::Any => Scalar::Bool,
                    VoteOp::Ballot => Scalar::U32,
                };
                Signature::new(vec![u32(), Arg::Scalar(Scalar::Bool)], Ret::Scalar(ret))
            }
            WarpOp::Reduce(_) => {
                let value = Arg::Value {
                    accepts: |scalar| matches!(scalar, Scalar::U32 | Scalar::I32),
                    message: "`{name}` reduces `u32` or `i32` values, found {found}: for other \
                              types, combine the lanes with `shfl_xor_sync` in a loop, halving \
                              the lane offset from 16 to 1",
                };
                Signature::new(vec![u32(), value], Ret::Value)
            }
            WarpOp::LaneId | WarpOp::WarpSize | WarpOp::ActiveMask => {
                Signature::new(vec![], Ret::Scalar(Scalar::U32))
            }
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            WarpOp::SyncWarp => w.template("__syncwarp()", None),
            WarpOp::Shuffle(op) => {
                let call = match op {
                    ShuffleOp::Index => w.template("__shfl_sync({0}, {1}, (int)({2}))", None),
                    ShuffleOp::Up => w.template("__shfl_up_sync({0}, {1}, {2})", None),
                    ShuffleOp::Down => w.template("__shfl_down_sync({0}, {1}, {2})", None),
                    ShuffleOp::Xor => w.template("__shfl_xor_sync({0}, {1}, (int)({2}))", None),
                };
                // CUDA shuffles `int` at the narrowest: a small integer comes back promoted,
                // and is converted to its own type so it is one wherever it is used.
                let value = w.scalar(1);
                if value.is_small_int() || (value.bound().is_some() && !value.is_float()) {
                    format!("(({}){call})", w.cuda_type(value))
                } else {
                    call
                }
            }
            WarpOp::Vote(VoteOp::All) => w.template("(__all_sync({0}, {1}) != 0)", None),
            WarpOp::Vote(VoteOp::Any) => w.template("(__any_sync({0}, {1}) != 0)", None),
            WarpOp::Vote(VoteOp::Ballot) => w.template("__ballot_sync({0}, {1})", None),
            WarpOp::Reduce(ReduceOp::Add) => w.template("__reduce_add_sync({0}, {1})", None),
            WarpOp::Reduce(ReduceOp::Min) => w.template("__reduce_min_sync({0}, {1})", None),
            WarpOp::Reduce(ReduceOp::Max) => w.template("__reduce_max_sync({0}, {1})", None),
            WarpOp::LaneId => w.template("rs_lane_id()", Some("rs_lane_id")),
            WarpOp::WarpSize => w.template("((unsigned int)warpSize)", None),
            WarpOp::ActiveMask => w.template("__activemask()", None),
        }
    }

    /// The CPU backend's warp operations have the CUDA names, as methods of the thread.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            // Every lane in the mask reads each lane's value in turn, the same sequence of
            // shuffles in every lane, so any mask works.
            WarpOp::Reduce(op) => w.template(
                &"{ let (__mask, __value) = ({0}, {1}); __t.at({line}); \
                  let mut __result = __t.shfl_sync(__mask, __value, __mask.trailing_zeros()); \
                  let mut __lanes = __mask & __mask.wrapping_sub(1); \
                  while __lanes != 0 { \
                  __result = __result.COMBINE(__t.shfl_sync(__mask, __value, __lanes.trailing_zeros())); \
                  __lanes &= __lanes - 1; } __result }"
                    .replace(
                        "COMBINE",
                        match op {
                            ReduceOp::Add => "wrapping_add",
                            ReduceOp::Min => "min",
                            ReduceOp::Max => "max",
                        },
                    ),
            ),
            // The line names the operation in the race checker's reports.
            WarpOp::SyncWarp | WarpOp::Shuffle(_) | WarpOp::Vote(_) | WarpOp::ActiveMask => {
                w.template(&format!("__t.at({{line}}).{}({{args}})", self.name()))
            }
            WarpOp::LaneId | WarpOp::WarpSize => {
                w.template(&format!("__t.{}({{args}})", self.name()))
            }
        }
    }

    /// Whether every thread named must reach the call before any leaves it.
    pub fn synchronizes(self) -> bool {
        match self {
            WarpOp::SyncWarp | WarpOp::Shuffle(_) | WarpOp::Vote(_) | WarpOp::Reduce(_) => true,
            WarpOp::LaneId | WarpOp::WarpSize | WarpOp::ActiveMask => false,
        }
    }
}
