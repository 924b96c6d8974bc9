//! Counter-based random numbers: the same stream on the GPU and the CPU backend.

use super::{Arg, CpuWriter, CudaWriter, Placement, Ret, Signature};
use crate::types::Scalar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomOp {
    /// `philox4x32_10(c0, c1, c2, c3, k0, k1)`: four random words from a counter and a key,
    /// only as a `let` initializer.
    Philox,
    /// `uniform_f32(bits)`: a random word mapped to `[0, 1)`.
    UniformF32,
}

impl RandomOp {
    /// The operation called `name`, if it is one of this domain's.
    pub fn from_name(name: &str) -> Option<RandomOp> {
        [RandomOp::Philox, RandomOp::UniformF32]
            .into_iter()
            .find(|op| op.name() == name)
    }

    /// The name a user writes.
    pub fn name(self) -> &'static str {
        match self {
            RandomOp::Philox => "philox4x32_10",
            RandomOp::UniformF32 => "uniform_f32",
        }
    }

    /// What a call takes and gives.
    pub fn signature(self) -> Signature {
        let u32 = || Arg::Scalar(Scalar::U32);
        match self {
            RandomOp::Philox => Signature::new(
                (0..6).map(|_| u32()).collect(),
                Ret::Array {
                    elem: Scalar::U32,
                    len: 4,
                },
            )
            .placement(Placement::LetInit)
            .usage("`philox4x32_10` takes six `u32`: four counter words, then two key words"),
            RandomOp::UniformF32 => Signature::new(vec![u32()], Ret::Scalar(Scalar::F32)),
        }
    }

    /// The CUDA C++ of a call.
    pub fn cuda(self, w: &mut dyn CudaWriter) -> String {
        match self {
            RandomOp::Philox => {
                let name = w.target();
                let helper = w.helper("rs_philox4x32_10");
                let args: Vec<String> = (0..w.count()).map(|i| w.bare(i)).collect();
                w.statement(&format!("unsigned int {name}[4];"));
                w.statement(&format!("{helper}({name}, {});", args.join(", ")));
                String::new()
            }
            RandomOp::UniformF32 => w.template("rs_uniform_f32({0})", Some("rs_uniform_f32")),
        }
    }

    /// The CPU twin's Rust of a call.
    pub fn cpu(self, w: &mut dyn CpuWriter) -> String {
        match self {
            RandomOp::Philox => {
                w.template("{rt}::random::philox4x32_10([{0}, {1}, {2}, {3}], [{4}, {5}])")
            }
            RandomOp::UniformF32 => w.template("{rt}::random::uniform_f32({0})"),
        }
    }
}
