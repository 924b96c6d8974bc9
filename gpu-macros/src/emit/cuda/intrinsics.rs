//! Intrinsic calls: the emitter's answers to what an intrinsic's CUDA spelling (in
//! `intrinsics/`) asks of it.

use super::{cuda_type, fresh, strip_outer_parens, Emitter};
use crate::intrinsics::{CudaWriter, Op, SyncOp};
use crate::ir::*;
use crate::types::{Len, Scalar, Ty};

/// The hidden last parameter of a kernel that reaches `grid_sync`: its grid barrier's word,
/// which the runtime allocates per stream.
pub(super) const GRID_WORD_PARAM: &str = "unsigned int* rs_grid_word_arg";

/// The kernel's first statement when it has that parameter: thread 0 of each block, the thread
/// that spins in `rs_grid_sync`, keeps the word where device functions can reach it.
pub(super) const GRID_WORD_PROLOGUE: &str =
    "if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) rs_grid_word = rs_grid_word_arg;";

/// Whether any function of `program` calls `grid_sync`, so that its kernel launches
/// cooperatively and takes the barrier's word.
pub(super) fn calls_grid_sync(program: &Program) -> bool {
    program.functions.iter().any(|function| {
        function.exprs.iter().any(|expr| {
            matches!(
                expr.kind,
                ExprKind::Intrinsic {
                    op: Op::Sync(SyncOp::GridSync),
                    ..
                }
            )
        })
    })
}

impl Emitter<'_> {
    /// Spells a call of `op`; for a `let` initializer, writes the declaration of `target`.
    pub(super) fn intrinsic(
        &mut self,
        op: Op,
        id: ExprId,
        args: &[ExprId],
        target: Option<String>,
    ) -> String {
        op.cuda(&mut CudaCall {
            emitter: self,
            id,
            args,
            target,
        })
    }
}

/// One intrinsic call being spelled: the emitter's answers to what the spelling asks.
struct CudaCall<'e, 'a> {
    emitter: &'e mut Emitter<'a>,
    id: ExprId,
    args: &'e [ExprId],
    /// The variable a `let` initializer declares.
    target: Option<String>,
}

impl CudaCall<'_, '_> {
    pub(super) fn loc(&self) -> Loc {
        self.emitter.kernel.expr(self.id).span
    }
}

impl CudaWriter for CudaCall<'_, '_> {
    fn count(&self) -> usize {
        self.args.len()
    }

    fn arg(&mut self, i: usize) -> String {
        self.emitter.expr(self.args[i])
    }

    fn bare(&mut self, i: usize) -> String {
        strip_outer_parens(&self.arg(i)).to_string()
    }

    fn helper(&mut self, name: &'static str) -> &'static str {
        self.emitter.use_helper(name)
    }

    fn checked_index(&mut self, base: usize, index: usize) -> String {
        let loc = self.loc();
        self.emitter
            .checked_index(self.args[base], self.args[index], loc)
    }

    fn vector_index(&mut self, base: usize, index: usize, lanes: u32) -> String {
        let loc = self.loc();
        self.emitter
            .vector_index(self.args[base], self.args[index], lanes, loc)
    }

    fn copy_index(&mut self, base: usize, index: usize) -> String {
        let (loc, elem) = (self.loc(), self.element(base));
        self.emitter
            .copy_index(self.args[base], self.args[index], elem, loc)
    }

    fn length(&mut self, i: usize) -> String {
        self.emitter.length_of(self.args[i])
    }

    fn element(&self, i: usize) -> Scalar {
        let ty = self.emitter.types.expr(self.args[i]);
        ty.scalar_element()
            .unwrap_or_else(|| unreachable!("checked: memory of scalars, found {ty:?}"))
    }

    fn scalar(&self, i: usize) -> Scalar {
        self.emitter.types.scalar(self.args[i])
    }

    fn array_len(&self, i: usize) -> u64 {
        match self.emitter.types.expr(self.args[i]) {
            Ty::Array {
                len: Len::Known(len),
                ..
            } => len,
            other => unreachable!("checked: a fixed array, found {other:?}"),
        }
    }

    fn cuda_type(&self, scalar: Scalar) -> String {
        cuda_type(scalar).to_string()
    }

    fn vector_type(&mut self, elem: Scalar, lanes: u32) -> String {
        self.emitter.vector_type(elem, lanes)
    }

    fn line(&self) -> usize {
        self.loc().line()
    }

    fn target(&self) -> String {
        self.target
            .clone()
            .expect("checked: constructors only initialise a `let`")
    }

    fn fresh(&mut self, base: &str) -> String {
        fresh(&mut self.emitter.taken, base)
    }

    fn statement(&mut self, code: &str) {
        self.emitter.out.line(code);
    }
}
