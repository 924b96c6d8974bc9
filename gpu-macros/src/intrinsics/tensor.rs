//! Tensor cores: the warp-wide `mma` with its `ldmatrix` fragment loads, the warpgroup-wide
//! asynchronous `wgmma` with its shared-memory descriptors, and packing 16-bit pairs.

use super::{Arg, CpuWriter, CudaWriter, Elem, Placement, Ret, Signature};
use crate::types::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorOp {
    /// `mma_m16n8k16_f16(acc, a, b)` / `_bf16`: one multiply-accumulate of a warp,
    /// `D = A * B + C` with A 16x16 and B 16x8 in `input` pairs packed into `u32` and C, D
    /// 16x8 in `f32`; only as a `let` initializer.
    Mma { input: Scalar },
    /// `ldmatrix_x4(shared, index)` and its `x1`/`x2`/`_trans` forms: a warp loads `count`
    /// 8x8 matrices of 16-bit values from `u32` shared memory, each lane giving the word
    /// index of one 16-byte row, into `[u32; count]` fragments; only as a `let` initializer.
    Ldmatrix { count: u32, trans: bool },
    /// `wgmma_desc(shared, index, lbo, sbo)`: the 64-bit descriptor of a 128-byte-swizzled
    /// operand tile starting at element `index` of `shared`, with its leading and stride
    /// byte offsets.
    WgmmaDesc,
    /// `wgmma_m64n{n}k16_f16(&mut acc, shared, a, b, accumulate, trans_a, trans_b)` and
    /// `_bf16`: a warpgroup's asynchronous 64×n×16 multiply of the descriptors' tiles in
    /// `shared` into `acc` (`[f32; n / 2]` per thread); only as a statement.
    Wgmma { input: Scalar, n: u32 },
    /// `wgmma_m64n{n}k8_tf32(&mut acc, shared, a, b, accumulate)`: the same for `f32` operands
    /// the tensor cores read as TF32 (sign, exponent and the top 10 mantissa bits), 64×n×8,
    /// both operands K-major (PTX has no transpose for TF32); only as a statement.
    WgmmaTf32 { n: u32 },
    /// `wgmma_m64n{n}k8_tf32_rs(&mut acc, a, shared, b, accumulate)`: [`TensorOp::WgmmaTf32`]
    /// with A from registers: `a` is this thread's `[f32; 4]` fragment of the 64×8 A (the
    /// layout of `mma.m16n8k8`'s A per warp of 16 rows), B a K-major descriptor; only as a
    /// statement.
    WgmmaTf32Rs { n: u32 },
    /// `wgmma_fence()`: orders register accesses before the next `wgmma`.
    WgmmaFence,
    /// `wgmma_commit()`: closes the group of `wgmma`s issued so far.
    WgmmaCommit,
    /// `wgmma_wait(pending, &mut acc)`: waits until at most `pending` committed groups are
    /// in flight; the accumulators may be read afterwards.
    WgmmaWait,
    /// `pack_f16x2(lo, hi)` / `pack_bf16x2`: two 16-bit floats in one `u32` operand word.
    Pack { input: Scalar },
}

/// The 16-bit input types, as the PTX instructions name them.
fn ptx_half(input: Scalar) -> &'static str {
    if input == Scalar::Bf16 {
        "bf16"
    } else {
        "f16"
    }
}

impl TensorOp {
    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<TensorOp> {
        let half = |suffix: &str| match suffix {
            "f16" => Some(Scalar::F16),
            "bf16" => Some(Scalar::Bf16),
            _ => None,
        };
        if let Some(input) = name.strip_prefix("mma_m16n8k16_").and_then(half) {
            return Some(TensorOp::Mma { input });
        }
        if let Some(input) = name
            .strip_prefix("pack_")
            .and_then(|rest| rest.strip_suffix("x2"))
            .and_then(half)
        {
            return Some(TensorOp::Pack { input });
        }
        if let Some(rest) = name.strip_prefix("ldmatrix_x") {
            let (count, trans) = match rest.strip_suffix("_trans") {
                Some(count) => (count, true),
                None => (rest, false),
            };
            let count = match count {
                "1" => 1,
                "2" => 2,
                "4" => 4,
                _ => return None,
            };
            return Some(TensorOp::Ldmatrix { count, trans });
        }
        // `wgmma_m64n{n}k16_f16` / `_bf16`, n a multiple of 8 up to 256.
        if let Some((n, input)) = name
            .strip_prefix("wgmma_m64n")
            .and_then(|rest| rest.split_once("k16_"))
        {
            let input = half(input)?;
            let n: u32 = n.parse().ok()?;
            return (n.is_multiple_of(8) && (8..=256).contains(&n))
                .then_some(TensorOp::Wgmma { input, n });
        }
        // `wgmma_m64n{n}k8_tf32_rs`, n a multiple of 8 up to 256.
        if let Some(n) = name
            .strip_prefix("wgmma_m64n")
            .and_then(|rest| rest.strip_suffix("k8_tf32_rs"))
        {
            let n: u32 = n.parse().ok()?;
            return (n.is_multiple_of(8) && (8..=256).contains(&n))
                .then_some(TensorOp::WgmmaTf32Rs { n });
        }
        // `wgmma_m64n{n}k8_tf32`, n a multiple of 8 up to 256.
        if let Some(n) = name
            .strip_prefix("wgmma_m64n")
            .and_then(|rest| rest.strip_suffix("k8_tf32"))
        {
            let n: u32 = n.parse().ok()?;
            return (n.is_multiple_of(8) && (8..=256).contains(&n))
                .then_some(TensorOp::WgmmaTf32 { n });
        }
        match name {
            "wgmma_desc" => Some(TensorOp::WgmmaDesc),
            "wgmma_fence" => Some(TensorOp::WgmmaFence),
            "wgmma_commit" => Some(TensorOp::WgmmaCommit),
            "wgmma_wait" => Some(TensorOp::WgmmaWait),
            _ => None,
        }
    }

    /// The name a user writes.
    pub fn name(self) -> String {
        match self {
            TensorOp::Mma { input } => format!("mma_m16n8k16_{}", input.rust_name()),
            TensorOp::Ldmatrix { count, trans } => {
                format!("ldmatrix_x{count}{}", if trans { "_trans" } else { "" })
            }
            TensorOp::WgmmaDesc => "wgmma_desc".to_string(),
            TensorOp::Wgmma { input, n } => format!("wgmma_m64n{n}k16_{}", input.rust_name()),
            TensorOp::WgmmaTf32 { n } => format!("wgmma_m64n{n}k8_tf32"),
            TensorOp::WgmmaTf32Rs { n } => format!("wgmma_m64n{n}k8_tf32_rs"),
            TensorOp::WgmmaFence => "wgmma_fence".to_string(),
            TensorOp::WgmmaCommit => "wgmma_commit".to_string(),
            TensorOp::WgmmaWait => "wgmma_wait".to_string(),
            TensorOp::Pack { input } => format!("pack_{}x2", input.rust_name()),
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        let name = self.name();
        let fragment = |elem, len, message: &str| Arg::Fragment {
            elem,
            len: Some(len),
            by_mut_ref: false,
            message: message.to_string(),
        };
        match self {
            TensorOp::Mma { .. } => Signature::new(
                vec![
                    fragment(Scalar::F32, 4, "expected the accumulator, a `[f32; 4]` variable"),
                    fragment(Scalar::U32, 4, "expected `a`, a `[u32; 4]` of packed pairs variable"),
                    fragment(Scalar::U32, 2, "expected `b`, a `[u32; 2]` of packed pairs variable"),
                ],
                Ret::Array {
                    elem: Scalar::F32,
                    len: 4,
                },
            )
            .placement(Placement::LetInit)
            .usage(format!(
                "`{name}` takes (accumulator [f32; 4], a [u32; 4], b [u32; 2])"
            )),
            TensorOp::Ldmatrix { count, .. } => Signature::new(
                vec![
                    Arg::Shared {
                        elem: Elem::Is(Scalar::U32),
                        message: "`ldmatrix` reads shared memory of `u32` (16-bit pairs), not {found}: declare it `shared_array::<u32, N>()` or `dynamic_shared::<u32>()`",
                    },
                    Arg::Index,
                ],
                Ret::Array {
                    elem: Scalar::U32,
                    len: count,
                },
            )
            .placement(Placement::LetInit)
            .usage(format!(
                "`{name}` takes (shared memory of u32, this lane's row index)"
            )),
            TensorOp::WgmmaDesc => Signature::new(
                vec![
                    Arg::Shared {
                        elem: Elem::Concrete,
                        message: "`wgmma_desc` describes shared memory of a concrete number type, not {found}",
                    },
                    Arg::Index,
                    Arg::Scalar(Scalar::U32),
                    Arg::Scalar(Scalar::U32),
                ],
                Ret::Scalar(Scalar::U64),
            )
            .usage("`wgmma_desc` takes (shared, element index, leading byte offset, stride byte offset)"),
            TensorOp::Wgmma { n, .. } => {
                let transpose = || Arg::Constant {
                    message: "a `wgmma` transpose flag is compiled into the instruction: write a constant (integer literals and const generic parameters), 0 or 1",
                };
                Signature::new(
                    vec![
                        Arg::Fragment {
                            elem: Scalar::F32,
                            len: Some(n / 2),
                            by_mut_ref: true,
                            message: format!(
                                "expected the accumulators, an `[f32; {}]` variable",
                                n / 2
                            ),
                        },
                        Arg::Shared {
                            elem: Elem::Any,
                            message: "`wgmma` reads its operands from the shared memory their descriptors were made from, not {found}",
                        },
                        Arg::Scalar(Scalar::U64),
                        Arg::Scalar(Scalar::U64),
                        Arg::Scalar(Scalar::Bool),
                        transpose(),
                        transpose(),
                    ],
                    Ret::Unit,
                )
                .placement(Placement::Statement {
                    message: "`wgmma` updates its accumulators in place: call it as a statement, `wgmma_...(&mut acc, ...);`",
                })
                .usage(format!(
                    "`{name}` takes (&mut acc [f32; {}], shared, a descriptor, b descriptor, accumulate: bool, trans_a, trans_b)",
                    n / 2
                ))
            }
            TensorOp::WgmmaTf32 { n } => Signature::new(
                vec![
                    Arg::Fragment {
                        elem: Scalar::F32,
                        len: Some(n / 2),
                        by_mut_ref: true,
                        message: format!(
                            "expected the accumulators, an `[f32; {}]` variable",
                            n / 2
                        ),
                    },
                    Arg::Shared {
                        elem: Elem::Any,
                        message: "`wgmma` reads its operands from the shared memory their descriptors were made from, not {found}",
                    },
                    Arg::Scalar(Scalar::U64),
                    Arg::Scalar(Scalar::U64),
                    Arg::Scalar(Scalar::Bool),
                ],
                Ret::Unit,
            )
            .placement(Placement::Statement {
                message: "`wgmma` updates its accumulators in place: call it as a statement, `wgmma_...(&mut acc, ...);`",
            })
            .usage(format!(
                "`{name}` takes (&mut acc [f32; {}], shared, a descriptor, b descriptor, accumulate: bool); TF32 operands are K-major, so there are no transpose flags",
                n / 2
            )),
            TensorOp::WgmmaTf32Rs { n } => Signature::new(
                vec![
                    Arg::Fragment {
                        elem: Scalar::F32,
                        len: Some(n / 2),
                        by_mut_ref: true,
                        message: format!(
                            "expected the accumulators, an `[f32; {}]` variable",
                            n / 2
                        ),
                    },
                    fragment(
                        Scalar::F32,
                        4,
                        "expected `a`, this thread's `[f32; 4]` fragment of A, a variable",
                    ),
                    Arg::Shared {
                        elem: Elem::Any,
                        message: "`wgmma` reads B from the shared memory its descriptor was made from, not {found}",
                    },
                    Arg::Scalar(Scalar::U64),
                    Arg::Scalar(Scalar::Bool),
                ],
                Ret::Unit,
            )
            .placement(Placement::Statement {
                message: "`wgmma` updates its accumulators in place: call it as a statement, `wgmma_...(&mut acc, ...);`",
            })
            .usage(format!(
                "`{name}` takes (&mut acc [f32; {}], a [f32; 4], shared, b descriptor, accumulate: bool)",
                n / 2
            )),
            TensorOp::WgmmaFence | TensorOp::WgmmaCommit => Signature::new(vec![], Ret::Unit),
            TensorOp::WgmmaWait => Signature::new(
                vec![
                    Arg::Scalar(Scalar::U32),
                    Arg::Fragment {
                        elem: Scalar::F32,
                        len: None,
                        by_mut_ref: true,
                        message: "expected the `wgmma` accumulators: an `[f32; N]` variable"
                            .to_string(),
                    },
                ],
                Ret::Unit,
            )
            .placement(Placement::Statement {
                message: "`wgmma_wait` is a statement: `wgmma_wait(n, &mut acc);`",
            })
            .usage("`wgmma_wait` takes (groups left pending: u32, &mut acc)"),
            TensorOp::Pack { input } => Signature::new(
                vec![Arg::Scalar(input), Arg::Scalar(input)],
                Ret::Scalar(Scalar::U32),
            ),
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            TensorOp::Mma { input } => {
                let name = w.target();
                let (c, a, b) = (w.arg(0), w.arg(1), w.arg(2));
                let kind = ptx_half(input);
                w.statement(&format!("float {name}[4];"));
                w.statement(&format!(
                    "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 \
                     {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\" \
                     : \"=f\"({name}[0]), \"=f\"({name}[1]), \"=f\"({name}[2]), \"=f\"({name}[3]) \
                     : \"r\"({a}[0]), \"r\"({a}[1]), \"r\"({a}[2]), \"r\"({a}[3]), \"r\"({b}[0]), \"r\"({b}[1]), \
                     \"f\"({c}[0]), \"f\"({c}[1]), \"f\"({c}[2]), \"f\"({c}[3]));"
                ));
                String::new()
            }
            TensorOp::Ldmatrix { count, trans } => {
                let name = w.target();
                // Every lane's row is 16 bytes: four words from its index.
                let index = w.vector_index(0, 1, 4);
                let base = w.arg(0);
                let helper = w.helper("rs_ldmatrix");
                let trans = if trans { "_trans" } else { "" };
                w.statement(&format!("unsigned int {name}[{count}];"));
                w.statement(&format!(
                    "{helper}_x{count}{trans}({name}, {base}, (unsigned int){index});"
                ));
                String::new()
            }
            TensorOp::WgmmaDesc => {
                w.helper("rs_wgmma");
                let shared = w.arg(0);
                let (index, lbo, sbo) = (w.bare(1), w.bare(2), w.bare(3));
                format!("rs_wgmma_desc({shared}, (unsigned int)({index}), {lbo}, {sbo})")
            }
            TensorOp::Wgmma { input, n } => {
                w.helper("rs_wgmma");
                let kind = ptx_half(input);
                let regs = (n / 2) as usize;
                let acc = w.arg(0);
                let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
                let outputs: Vec<String> =
                    (0..regs).map(|i| format!("\"+f\"({acc}[{i}])")).collect();
                let (a, b) = (w.arg(2), w.arg(3));
                let accumulate = w.bare(4);
                let (ta, tb) = (w.arg(5), w.arg(6));
                // scale-d is a predicate: 0 overwrites the accumulators, 1 adds to them. The
                // transposes are immediates, so they must be compile-time constants.
                format!(
                    "asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{p}, 0;\\n\"\n        \
                     \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind} {{{list}}}, %{da}, %{db}, p, 1, 1, %{ta_at}, %{tb_at};\\n}}\\n\"\n        \
                     : {outputs}\n        \
                     : \"l\"({a}), \"l\"({b}), \"r\"((int)({accumulate})), \"n\"((int)({ta})), \"n\"((int)({tb})))",
                    list = list.join(", "),
                    outputs = outputs.join(", "),
                    da = regs,
                    db = regs + 1,
                    p = regs + 2,
                    ta_at = regs + 3,
                    tb_at = regs + 4,
                )
            }
            TensorOp::WgmmaTf32 { n } => {
                w.helper("rs_wgmma");
                let regs = (n / 2) as usize;
                let acc = w.arg(0);
                let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
                let outputs: Vec<String> =
                    (0..regs).map(|i| format!("\"+f\"({acc}[{i}])")).collect();
                let (a, b) = (w.arg(2), w.arg(3));
                let accumulate = w.bare(4);
                // As the 16-bit form, without the transpose immediates PTX allows only there.
                format!(
                    "asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{p}, 0;\\n\"\n        \
                     \"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{{list}}}, %{da}, %{db}, p, 1, 1;\\n}}\\n\"\n        \
                     : {outputs}\n        \
                     : \"l\"({a}), \"l\"({b}), \"r\"((int)({accumulate})))",
                    list = list.join(", "),
                    outputs = outputs.join(", "),
                    da = regs,
                    db = regs + 1,
                    p = regs + 2,
                )
            }
            TensorOp::WgmmaTf32Rs { n } => {
                w.helper("rs_wgmma");
                let regs = (n / 2) as usize;
                let acc = w.arg(0);
                let a = w.arg(1);
                let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
                let outputs: Vec<String> =
                    (0..regs).map(|i| format!("\"+f\"({acc}[{i}])")).collect();
                let inputs: Vec<String> = (0..4)
                    .map(|i| format!("\"r\"(__float_as_uint({a}[{i}]))"))
                    .collect();
                let b = w.arg(3);
                let accumulate = w.bare(4);
                // A's four registers are b32 operands; PTX reads them until the wgmma's group
                // is waited for, so the kernel leaves them alone until then.
                format!(
                    "asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{p}, 0;\\n\"\n        \
                     \"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{{list}}}, {{%{a0}, %{a1}, %{a2}, %{a3}}}, %{db}, p, 1, 1;\\n}}\\n\"\n        \
                     : {outputs}\n        \
                     : {inputs}, \"l\"({b}), \"r\"((int)({accumulate})))",
                    list = list.join(", "),
                    outputs = outputs.join(", "),
                    inputs = inputs.join(", "),
                    a0 = regs,
                    a1 = regs + 1,
                    a2 = regs + 2,
                    a3 = regs + 3,
                    db = regs + 4,
                    p = regs + 5,
                )
            }
            TensorOp::WgmmaFence => w.template("rs_wgmma_fence()", Some("rs_wgmma")),
            TensorOp::WgmmaCommit => w.template("rs_wgmma_commit()", Some("rs_wgmma")),
            TensorOp::WgmmaWait => {
                w.helper("rs_wgmma");
                let pending = w.bare(0);
                let len = w.array_len(1);
                let acc = w.arg(1);
                let operands: Vec<String> =
                    (0..len).map(|i| format!("\"+f\"({acc}[{i}])")).collect();
                // The empty asm "rewrites" every accumulator after the wait, so the compiler
                // cannot move their reads above it.
                format!(
                    "rs_wgmma_wait({pending}); asm volatile(\"\" : {} :: \"memory\")",
                    operands.join(", ")
                )
            }
            TensorOp::Pack { .. } => w.template(
                "((unsigned int)({0}).bits | ((unsigned int)({1}).bits << 16))",
                None,
            ),
        }
    }

    /// The CPU twin's Rust of a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            TensorOp::Mma { input } => w.template(
                &"{rt}::cpu::mma_m16n8k16(__t, {rt}::ScalarType::{kind}, {0}, {1}, {2})"
                    .replace("{kind}", input.runtime_variant()),
            ),
            TensorOp::Ldmatrix { count, trans } => w.template(
                &"{rt}::cpu::ldmatrix::<{count}>(__t, {0}, {1}, {trans}, {line})"
                    .replace("{count}", &count.to_string())
                    .replace("{trans}", &trans.to_string()),
            ),
            TensorOp::WgmmaDesc => {
                w.template("{rt}::cpu::wgmma_desc(__t, {0}, {1}, {2}, {3}, {line})")
            }
            TensorOp::Wgmma { input, .. } => w.template(
                &"{rt}::cpu::wgmma(__t, {rt}::ScalarType::{kind}, &mut {0}, {1}, [{2}, {3}], {4}, [({5}) != 0, ({6}) != 0], {line})"
                    .replace("{kind}", input.runtime_variant()),
            ),
            TensorOp::WgmmaTf32 { .. } => w.template(
                "{rt}::cpu::wgmma_tf32(__t, &mut {0}, {1}, [{2}, {3}], {4}, {line})",
            ),
            TensorOp::WgmmaTf32Rs { .. } => w.template(
                "{rt}::cpu::wgmma_tf32_rs(__t, &mut {0}, {1}, {2}, {3}, {4}, {line})",
            ),
            TensorOp::WgmmaFence => w.template("__t.wgmma_fence()"),
            TensorOp::WgmmaCommit => w.template("__t.wgmma_commit()"),
            TensorOp::WgmmaWait => w.template("__t.wgmma_wait({0})"),
            TensorOp::Pack { .. } => {
                w.template("(({0}).to_bits() as u32 | (({1}).to_bits() as u32) << 16)")
            }
        }
    }

    /// Whether every thread named must reach the call before any leaves it.
    pub fn synchronizes(self) -> bool {
        match self {
            // The register form gathers A's rows from the fragments of each warp's lanes.
            TensorOp::Mma { .. } | TensorOp::Ldmatrix { .. } | TensorOp::WgmmaTf32Rs { .. } => true,
            TensorOp::WgmmaDesc
            | TensorOp::Wgmma { .. }
            | TensorOp::WgmmaTf32 { .. }
            | TensorOp::WgmmaFence
            | TensorOp::WgmmaCommit
            | TensorOp::WgmmaWait
            | TensorOp::Pack { .. } => false,
        }
    }
}
