//! The GPU intrinsics kernels call as free functions, with their signatures and CUDA spellings,
//! read by both the type checker and the CUDA emitter.

/// An argument's type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    U32,
    Bool,
    F16,
    Bf16,
    /// Any number type; the result has the same type.
    Value,
}

/// The result type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Unit,
    U32,
    U64,
    Bool,
    F32,
    /// The type of the `Value` argument.
    Value,
}

/// One intrinsic: its Rust name, signature, and C++ template (`{0}`, `{1}`: arguments).
pub struct Intrinsic {
    pub name: &'static str,
    pub args: &'static [Arg],
    pub ret: Ret,
    pub cuda: &'static str,
    /// A helper from the prelude the template calls.
    pub helper: Option<&'static str>,
}

const fn plain(name: &'static str, ret: Ret, cuda: &'static str) -> Intrinsic {
    Intrinsic {
        name,
        args: &[],
        ret,
        cuda,
        helper: None,
    }
}

const SHUFFLE: &[Arg] = &[Arg::U32, Arg::Value, Arg::U32];
const VOTE: &[Arg] = &[Arg::U32, Arg::Bool];

/// Every intrinsic.
pub const INTRINSICS: &[Intrinsic] = &[
    plain("sync_threads", Ret::Unit, "__syncthreads()"),
    plain("sync_warp", Ret::Unit, "__syncwarp()"),
    plain("thread_fence", Ret::Unit, "__threadfence()"),
    plain("thread_fence_block", Ret::Unit, "__threadfence_block()"),
    plain("thread_fence_system", Ret::Unit, "__threadfence_system()"),
    plain("warp_size", Ret::U32, "((unsigned int)warpSize)"),
    plain("active_mask", Ret::U32, "__activemask()"),
    plain("clock64", Ret::U64, "((unsigned long long)clock64())"),
    Intrinsic {
        name: "lane_id",
        args: &[],
        ret: Ret::U32,
        cuda: "rs_lane_id()",
        helper: Some("rs_lane_id"),
    },
    Intrinsic {
        name: "shfl_sync",
        args: SHUFFLE,
        ret: Ret::Value,
        cuda: "__shfl_sync({0}, {1}, (int)({2}))",
        helper: None,
    },
    Intrinsic {
        name: "shfl_up_sync",
        args: SHUFFLE,
        ret: Ret::Value,
        cuda: "__shfl_up_sync({0}, {1}, {2})",
        helper: None,
    },
    Intrinsic {
        name: "shfl_down_sync",
        args: SHUFFLE,
        ret: Ret::Value,
        cuda: "__shfl_down_sync({0}, {1}, {2})",
        helper: None,
    },
    Intrinsic {
        name: "shfl_xor_sync",
        args: SHUFFLE,
        ret: Ret::Value,
        cuda: "__shfl_xor_sync({0}, {1}, (int)({2}))",
        helper: None,
    },
    Intrinsic {
        name: "all_sync",
        args: VOTE,
        ret: Ret::Bool,
        cuda: "(__all_sync({0}, {1}) != 0)",
        helper: None,
    },
    Intrinsic {
        name: "any_sync",
        args: VOTE,
        ret: Ret::Bool,
        cuda: "(__any_sync({0}, {1}) != 0)",
        helper: None,
    },
    Intrinsic {
        name: "ballot_sync",
        args: VOTE,
        ret: Ret::U32,
        cuda: "__ballot_sync({0}, {1})",
        helper: None,
    },
    Intrinsic {
        name: "pack_f16x2",
        args: &[Arg::F16, Arg::F16],
        ret: Ret::U32,
        cuda: "((unsigned int)({0}).bits | ((unsigned int)({1}).bits << 16))",
        helper: None,
    },
    Intrinsic {
        name: "pack_bf16x2",
        args: &[Arg::Bf16, Arg::Bf16],
        ret: Ret::U32,
        cuda: "((unsigned int)({0}).bits | ((unsigned int)({1}).bits << 16))",
        helper: None,
    },
    Intrinsic {
        name: "cp_async_commit",
        args: &[],
        ret: Ret::Unit,
        cuda: "rs_cp_async_commit()",
        helper: Some("rs_cp_async"),
    },
    Intrinsic {
        name: "cp_async_wait",
        args: &[Arg::U32],
        ret: Ret::Unit,
        cuda: "rs_cp_async_wait({0})",
        helper: Some("rs_cp_async"),
    },
    Intrinsic {
        name: "wgmma_fence",
        args: &[],
        ret: Ret::Unit,
        cuda: "rs_wgmma_fence()",
        helper: Some("rs_wgmma"),
    },
    Intrinsic {
        name: "wgmma_commit",
        args: &[],
        ret: Ret::Unit,
        cuda: "rs_wgmma_commit()",
        helper: Some("rs_wgmma"),
    },
    Intrinsic {
        name: "fence_proxy_async",
        args: &[],
        ret: Ret::Unit,
        cuda: "rs_fence_proxy_async()",
        helper: Some("rs_fence_proxy_async"),
    },
    Intrinsic {
        name: "uniform_f32",
        args: &[Arg::U32],
        ret: Ret::F32,
        cuda: "rs_uniform_f32({0})",
        helper: Some("rs_uniform_f32"),
    },
];

/// The intrinsic called `name`.
pub fn lookup(name: &str) -> Option<&'static Intrinsic> {
    INTRINSICS.iter().find(|i| i.name == name)
}

/// The atomic methods on slice and shared-array elements: a load and the read-modify-writes.
pub const ATOMICS: &[&str] = &[
    "atomic_load",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_exchange",
    "atomic_compare_exchange",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
];
