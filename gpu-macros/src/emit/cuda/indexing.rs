//! Element indices, bounds-checked in checked mode, and the lengths they are checked against.

use super::{strip_outer_parens, Emitter};
use crate::ir::*;
use crate::types::{Len, Scalar, Ty};

impl<'a> Emitter<'a> {
    /// The index expression of `base[index]`, bounds-checked in checked mode (a constant index
    /// into an array is checked here, at compile time, instead).
    pub(super) fn checked_index(&mut self, base: ExprId, index: ExprId, loc: Loc) -> String {
        // Shared memory and local arrays are addressed in 32 bits: an index that fits stays so.
        let narrow = match self.types.expr(base) {
            Ty::Shared { .. } | Ty::Array { .. } => self.narrow_index(index),
            _ if self.table_name(base).is_some() => self.narrow_index(index),
            _ => None,
        };
        let code = match narrow {
            Some(code) => code,
            None => self.expr(index),
        };
        let code = strip_outer_parens(&code).to_string();
        let len = self.length_of(base);
        if let (
            Ty::Array {
                len: Len::Known(n), ..
            },
            ExprKind::Lit(Lit::Int { value, .. }),
        ) = (self.types.expr(base), &self.kernel.expr(index).kind)
        {
            if *value < n as u128 {
                return code;
            }
        }
        self.use_helper("rs_checked");
        format!("rs_idx({code}, {len}, {})", loc.line())
    }

    /// The C++ name of the table `base` names, if it is an outer constant's table (declared at
    /// file scope by [`super::emit`]).
    pub(super) fn table_name(&self, base: ExprId) -> Option<String> {
        match self.kernel.expr(base).kind {
            ExprKind::Outer(constant) if self.kernel.outer[constant.index as usize].table => {
                Some(constant.cuda_table())
            }
            _ => None,
        }
    }

    /// The first index of a `lanes`-element vector access, checked to have all of them in
    /// bounds.
    pub(super) fn vector_index(
        &mut self,
        base: ExprId,
        index: ExprId,
        lanes: u32,
        loc: Loc,
    ) -> String {
        self.run_index(base, index, lanes - 1, loc)
    }

    /// The index of the first element of a 16-byte copy at `index` into `base`, whose last
    /// element is bounds-checked in checked mode.
    pub(super) fn copy_index(
        &mut self,
        base: ExprId,
        index: ExprId,
        elem: Scalar,
        loc: Loc,
    ) -> String {
        let last = 16 / elem.size_bytes().expect("checked: a concrete type") - 1;
        self.run_index(base, index, last, loc)
    }

    /// The first index of the elements `index..=index + last` of `base`. Checking the last
    /// element covers them all (and `i + last` cannot wrap for real lengths).
    fn run_index(&mut self, base: ExprId, index: ExprId, last: u32, loc: Loc) -> String {
        self.use_helper("rs_checked");
        let code = self.offset_operand(index);
        let len = self.length_of(base);
        format!(
            "(rs_idx({code} + {last}ull, {len}, {}) - {last}ull)",
            loc.line()
        )
    }

    /// `index` as the left operand of a `+`: its outer parentheses go only when its own
    /// operator binds at least as tightly, since `c ? i : j + 3` adds to `j` alone and
    /// `i << 2 + 3` shifts by 5.
    fn offset_operand(&mut self, index: ExprId) -> String {
        let code = self.expr(index);
        let loose = match &self.kernel.expr(index).kind {
            ExprKind::Binary { op, .. } => !matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
            ),
            ExprKind::Select { .. } => true,
            _ => false,
        };
        if loose {
            code
        } else {
            strip_outer_parens(&code).to_string()
        }
    }

    /// The length of something indexable, as C++.
    pub(super) fn length_of(&self, base: ExprId) -> String {
        if let ExprKind::Outer(constant) = self.kernel.expr(base).kind {
            if self.kernel.outer[constant.index as usize].table {
                return constant.cuda_table_len();
            }
        }
        match (self.types.expr(base), &self.kernel.expr(base).kind) {
            (Ty::Array { len, .. } | Ty::Shared { len: Some(len), .. }, _) => len.cuda(),
            (_, ExprKind::Local(local)) => self.len_name(*local).to_string(),
            _ => unreachable!("checked: only slices, arrays and shared memory have a length"),
        }
    }
}
