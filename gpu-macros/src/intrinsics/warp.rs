//! Warp-level operations: shuffles, votes, the lane's position and the warp barrier.

use super::{Arg, CpuWriter, CudaWriter, Ret, Signature};
use crate::ir::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `sync_warp()`: the lanes of the warp wait for each other.
    SyncWarp,
    /// `shfl_*_sync(mask, value, lane)`: a value read from another lane.
    Shuffle(ShuffleOp),
    /// `all_sync`, `any_sync`, `ballot_sync(mask, predicate)`.
    Vote(VoteOp),
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

impl WarpOp {
    const ALL: [WarpOp; 11] = [
        WarpOp::SyncWarp,
        WarpOp::Shuffle(ShuffleOp::Index),
        WarpOp::Shuffle(ShuffleOp::Up),
        WarpOp::Shuffle(ShuffleOp::Down),
        WarpOp::Shuffle(ShuffleOp::Xor),
        WarpOp::Vote(VoteOp::All),
        WarpOp::Vote(VoteOp::Any),
        WarpOp::Vote(VoteOp::Ballot),
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
            WarpOp::LaneId | WarpOp::WarpSize | WarpOp::ActiveMask => {
                Signature::new(vec![], Ret::Scalar(Scalar::U32))
            }
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            WarpOp::SyncWarp => w.template("__syncwarp()", None),
            WarpOp::Shuffle(ShuffleOp::Index) => {
                w.template("__shfl_sync({0}, {1}, (int)({2}))", None)
            }
            WarpOp::Shuffle(ShuffleOp::Up) => w.template("__shfl_up_sync({0}, {1}, {2})", None),
            WarpOp::Shuffle(ShuffleOp::Down) => w.template("__shfl_down_sync({0}, {1}, {2})", None),
            WarpOp::Shuffle(ShuffleOp::Xor) => {
                w.template("__shfl_xor_sync({0}, {1}, (int)({2}))", None)
            }
            WarpOp::Vote(VoteOp::All) => w.template("(__all_sync({0}, {1}) != 0)", None),
            WarpOp::Vote(VoteOp::Any) => w.template("(__any_sync({0}, {1}) != 0)", None),
            WarpOp::Vote(VoteOp::Ballot) => w.template("__ballot_sync({0}, {1})", None),
            WarpOp::LaneId => w.template("rs_lane_id()", Some("rs_lane_id")),
            WarpOp::WarpSize => w.template("((unsigned int)warpSize)", None),
            WarpOp::ActiveMask => w.template("__activemask()", None),
        }
    }

    /// The CPU backend's warp operations have the CUDA names, as methods of the thread.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            WarpOp::SyncWarp
            | WarpOp::Shuffle(_)
            | WarpOp::Vote(_)
            | WarpOp::LaneId
            | WarpOp::WarpSize
            | WarpOp::ActiveMask => w.template(&format!("__t.{}({{args}})", self.name())),
        }
    }

    /// Whether every thread named must reach the call before any leaves it.
    pub fn synchronizes(self) -> bool {
        match self {
            WarpOp::SyncWarp | WarpOp::Shuffle(_) | WarpOp::Vote(_) => true,
            WarpOp::LaneId | WarpOp::WarpSize | WarpOp::ActiveMask => false,
        }
    }
}
