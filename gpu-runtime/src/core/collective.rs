//! Collectives, backend-neutral: the reductions, the element types a communicator moves, what
//! a collective call is (so ranks can check that they agree), and the errors of a group.

use std::fmt;

use half::{bf16, f16};

use crate::core::scalar::Scalar;

/// How an all-reduce or reduce-scatter combines the ranks' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum over the ranks.
    Sum,
    /// The sum divided by the number of ranks (integer division for integer types).
    Mean,
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
        })
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The element types a communicator can move and reduce: the types NCCL has (`i8`, `u8`,
/// `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`, `f32`, `f64`). Sealed.
pub trait CommElement: Scalar + sealed::Sealed {
    /// `self + other` as the reduction adds: wrapping for integers, rounded to the type for
    /// floats (so `f16` and `bf16` round after every addition, as a reduction in that type does).
    #[doc(hidden)]
    fn __add(self, other: Self) -> Self;

    /// `self / count`, for [`ReduceOp::Mean`].
    #[doc(hidden)]
    fn __div_count(self, count: usize) -> Self;
}

macro_rules! impl_int {
    ($($ty:ty),*) => {$(
        impl sealed::Sealed for $ty {}
        impl CommElement for $ty {
            fn __add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn __div_count(self, count: usize) -> Self {
                // A group has at most i32::MAX ranks (NCCL's limit), which fits every type but
                // the 8-bit ones; dividing by more than their range leaves zero.
                match <$ty>::try_from(count) {
                    Ok(count) if count != 0 => self / count,
                    _ => 0,
                }
            }
        }
    )*};
}

impl_int!(i8, u8, i32, u32, i64, u64);

macro_rules! impl_float {
    ($($ty:ty => $from:expr),*) => {$(
        impl sealed::Sealed for $ty {}
        impl CommElement for $ty {
            fn __add(self, other: Self) -> Self {
                self + other
            }
            fn __div_count(self, count: usize) -> Self {
                self / $from(count)
            }
        }
    )*};
}

impl_float!(
    f32 => |n: usize| n as f32,
    f64 => |n: usize| n as f64,
    f16 => |n: usize| f16::from_f64(n as f64),
    bf16 => |n: usize| bf16::from_f64(n as f64)
);

/// Which collective a rank called, with what every rank must agree on; ranks compare these
/// before any data moves, so a disagreement is an error on every rank rather than a hang or
/// garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Collective {
    /// An all-reduce of `len` elements (all the buffers of a bucket together).
    AllReduce { op: ReduceOp, len: usize },
    /// A broadcast of `len` elements from `root`.
    Broadcast { root: usize, len: usize },
    /// An all-gather of `len` elements from each rank.
    AllGather { len: usize },
    /// A reduce-scatter leaving `len` elements on each rank.
    ReduceScatter { op: ReduceOp, len: usize },
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Collective::AllReduce { op, len } => write!(f, "all_reduce({op}) of {len} elements"),
            Collective::Broadcast { root, len } => {
                write!(f, "broadcast of {len} elements from rank {root}")
            }
            Collective::AllGather { len } => write!(f, "all_gather of {len} elements per rank"),
            Collective::ReduceScatter { op, len } => {
                write!(f, "reduce_scatter({op}) to {len} elements per rank")
            }
        }
    }
}

/// What can go wrong in a group of ranks: starting it, and its collectives.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommError {
    /// The NCCL library could not be loaded.
    #[error(
        "NCCL not found (the loader looks for libnccl.so{}): pip install nvidia-nccl-cu13 and \
         put a directory holding libnccl.so on LD_LIBRARY_PATH (scripts/nccl-lib makes a link \
         libnccl.so -> libnccl.so.2 and prints its directory), or run the ranks on the CPU \
         backend",
        if *.versioned_only { "; only libnccl.so.2 is on the search path" } else { "" }
    )]
    NoNccl {
        /// Whether `libnccl.so.2` loads but no name the loader tries does.
        versioned_only: bool,
    },

    /// An NCCL call failed.
    #[error(
        "NCCL error while {context}: {name}{}; NCCL_DEBUG=WARN prints NCCL's own account, and \
         every rank must make the same collective calls in the same order",
        .detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    Nccl {
        /// What the runtime was doing.
        context: &'static str,
        /// The status's name, e.g. `ncclInvalidArgument`.
        name: String,
        /// NCCL's description of the last error, when it gave one.
        detail: Option<String>,
    },

    /// A group needs at least one rank.
    #[error("a group needs at least one rank; pass one device per rank")]
    Empty,

    /// A rank number outside the group.
    #[error("rank {rank} is not in a group of {world_size}: ranks are 0..{world_size}")]
    InvalidRank {
        /// The rank asked for.
        rank: usize,
        /// The ranks in the group.
        world_size: usize,
    },

    /// The devices of one process's group were not all of one backend.
    #[error(
        "a group's devices must all be CUDA devices or all the CPU backend; found both (rank 0 on \
         {first}, rank {rank} on {other})"
    )]
    MixedBackends {
        /// Rank 0's backend.
        first: String,
        /// The first rank on another backend.
        rank: usize,
        /// Its backend.
        other: String,
    },

    /// The ranks called different collectives, or the same one with different arguments.
    #[error(
        "the ranks disagree on collective call {call}: rank {rank} called {found}, rank 0 called \
         {expected}; every rank must make the same collective calls, with the same lengths, \
         element type and root, in the same order"
    )]
    Mismatch {
        /// Which call of the group (0 for the first).
        call: u64,
        /// The first rank that disagrees with rank 0.
        rank: usize,
        /// What rank 0 called.
        expected: String,
        /// What that rank called.
        found: String,
    },

    /// A rank left the group (its communicator was dropped, or its thread panicked) while
    /// others still waited for it.
    #[error(
        "rank {rank} left the group before joining collective call {call} ({what}); the ranks \
         must make the same collective calls, and a rank that failed ends the group"
    )]
    RankLeft {
        /// The rank that left.
        rank: usize,
        /// Which call of the group it missed.
        call: u64,
        /// The collective this rank was in.
        what: String,
    },

    /// A collective or the rendezvous waited longer than the group's timeout.
    #[error(
        "{what} timed out after {seconds} s waiting for the other ranks (missing: {missing}); \
         check that every rank was started and makes the same calls, or raise GPU_COMM_TIMEOUT \
         (seconds)"
    )]
    Timeout {
        /// What was waited for.
        what: String,
        /// The limit.
        seconds: u64,
        /// The ranks that had not arrived, as a list.
        missing: String,
    },

    /// A rank's launch environment (RANK, WORLD_SIZE, ...) is missing or malformed.
    #[error("{var}={value:?}: {reason}")]
    BadEnv {
        /// The variable.
        var: &'static str,
        /// Its value (empty when unset).
        value: String,
        /// What is wrong and what to set.
        reason: String,
    },

    /// Exchanging the group's id between processes failed.
    #[error("rendezvous through {at} failed: {reason}")]
    Rendezvous {
        /// The file or address.
        at: String,
        /// What went wrong.
        reason: String,
    },

    /// Something only a CUDA group does was asked of a CPU-backend group, or the reverse.
    #[error("{what}")]
    Unsupported {
        /// What, and what to do instead.
        what: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_add_and_divide_in_the_type() {
        assert_eq!(i8::MAX.__add(1), i8::MIN);
        assert_eq!(7u32.__div_count(2), 3);
        assert_eq!(100u8.__div_count(300), 0);
        assert_eq!(3.0f32.__div_count(2), 1.5);
        // f16 rounds the sum to 11 significant bits: 2048 + 1 is 2048 again.
        assert_eq!(f16::from_f32(2048.0).__add(f16::ONE), f16::from_f32(2048.0));
        assert_eq!(bf16::from_f32(6.0).__div_count(3), bf16::from_f32(2.0));
    }

    #[test]
    fn messages_say_what_to_do() {
        let missing = CommError::NoNccl {
            versioned_only: true,
        }
        .to_string();
        assert!(missing.contains("nvidia-nccl-cu13"), "{missing}");
        assert!(missing.contains("only libnccl.so.2"), "{missing}");
        let mismatch = CommError::Mismatch {
            call: 3,
            rank: 1,
            expected: Collective::AllReduce {
                op: ReduceOp::Sum,
                len: 4,
            }
            .to_string(),
            found: Collective::AllGather { len: 4 }.to_string(),
        }
        .to_string();
        assert!(
            mismatch.contains("all_reduce(sum) of 4 elements"),
            "{mismatch}"
        );
        assert!(mismatch.contains("rank 1 called all_gather"), "{mismatch}");
    }
}
