//! Which slice parameters a barrier-free kernel's block twin may access with plain loads and
//! stores in its owned loop (`ThreadCtx::__each_owned_thread`).
//!
//! A `&mut [T]` parameter is *owned* when every use of it is `y.len()` or `y[i]` read or
//! written, with `i` exactly the thread's global x index: `global_idx().x`, or
//! `block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize` in either order,
//! directly or through immutable `let`s of those. In a one-dimensional launch that index names
//! one thread, so no other thread touches the element. A `&[T]` parameter is *read* when every
//! use is `x.len()` or `x[j]` for any `j`: nothing writes it during a launch. Anything else (a
//! device function or an intrinsic given the slice, a sub-slice, `&mut y[i]`, an element of a
//! struct or array type, any other index) leaves the parameter as it is, a `CpuSlice`. The
//! runtime's views check ownership again at run time, so a wrong answer here fails the launch
//! rather than racing; what this proof buys is that the check folds away.

use std::collections::HashMap;

use crate::check::Types;
use crate::intrinsics::Builtin;
use crate::ir::*;
use crate::types::{Scalar, Ty};

/// How the owned loop reads one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// As every other loop does: a scalar, or a `CpuSlice` with atomic accesses.
    Shared,
    /// `CpuOwnedSlice`: each element plainly accessed by the thread it belongs to.
    Owned,
    /// `CpuReadSlice`: plain loads of a `&[T]`.
    Read,
}

/// The owned loop's view of each parameter of a kernel.
#[derive(Debug, PartialEq, Eq)]
pub struct Ownership {
    /// Per parameter, in order.
    pub views: Vec<View>,
    /// The parameters indexed at the thread's global x index: threads below all their lengths
    /// pass every bounds check on them, which the owned loop tells the compiler.
    pub bounded: Vec<usize>,
}

impl Ownership {
    /// Whether any parameter gets a plain view, so the owned loop is worth writing.
    pub fn any(&self) -> bool {
        self.views.iter().any(|v| *v != View::Shared)
    }
}

/// The views of `kernel`'s parameters in its owned loop.
pub fn ownership(kernel: &Function, types: &Types) -> Ownership {
    let uses = Uses::of(kernel);
    let mut views = Vec::with_capacity(kernel.params.len());
    let mut bounded = Vec::new();
    for (index, param) in kernel.params.iter().enumerate() {
        let (view, at_own_index) = match param.ty {
            Ty::Slice {
                elem: Ty::Scalar(_),
                mutable,
            } => uses.slice_view(param.local, mutable, types),
            _ => (View::Shared, false),
        };
        if view != View::Shared && at_own_index {
            bounded.push(index);
        }
        views.push(view);
    }
    Ownership { views, bounded }
}

/// Where each expression of a function is used, and what each immutable `let` binds.
struct Uses<'f> {
    function: &'f Function,
    /// The expression each expression is a direct part of; absent for those a statement
    /// holds directly.
    parent: HashMap<ExprId, ExprId>,
    /// The initializer of each `let` of one local.
    lets: HashMap<LocalId, ExprId>,
}

impl<'f> Uses<'f> {
    fn of(function: &'f Function) -> Uses<'f> {
        let mut parent = HashMap::new();
        for (id, expr) in function.exprs.iter().enumerate() {
            for child in expr.kind.children() {
                parent.insert(child, ExprId(id as u32));
            }
        }
        let mut lets = HashMap::new();
        let mut blocks = vec![&function.body];
        for expr in &function.exprs {
            if let ExprKind::Closure { body, .. } = &expr.kind {
                blocks.push(body);
            }
        }
        while let Some(block) = blocks.pop() {
            for stmt in &block.stmts {
                if let StmtKind::Let { local, init } = stmt.kind {
                    lets.insert(local, init);
                }
                blocks.extend(stmt.kind.blocks());
            }
        }
        Uses {
            function,
            parent,
            lets,
        }
    }

    /// The view of slice parameter `local`, and whether some access indexes it at the
    /// thread's global x index.
    fn slice_view(&self, local: LocalId, mutable: bool, types: &Types) -> (View, bool) {
        let mut at_own_index = false;
        for (id, expr) in self.function.exprs.iter().enumerate() {
            if !matches!(expr.kind, ExprKind::Local(l) if l == local) {
                continue;
            }
            let id = ExprId(id as u32);
            let Some(&parent) = self.parent.get(&id) else {
                return (View::Shared, false);
            };
            match &self.function.expr(parent).kind {
                ExprKind::Len(_) => {}
                ExprKind::Index { base, index } if *base == id => {
                    // `&mut y[i]` would hand the element to a device function as a place.
                    if let Some(&user) = self.parent.get(&parent) {
                        if matches!(self.function.expr(user).kind, ExprKind::Ref { .. }) {
                            return (View::Shared, false);
                        }
                    }
                    let own = self.is_own_index(*index, types, 0);
                    if mutable && !own {
                        return (View::Shared, false);
                    }
                    at_own_index |= own;
                }
                _ => return (View::Shared, false),
            }
        }
        let view = if mutable { View::Owned } else { View::Read };
        (view, at_own_index)
    }

    /// Whether `id` is exactly the thread's global x index (`depth` bounds the `let`s
    /// followed).
    fn is_own_index(&self, id: ExprId, types: &Types, depth: u32) -> bool {
        if depth > 16 {
            return false;
        }
        match &self.function.expr(id).kind {
            ExprKind::Local(local) => {
                !self.function.local(*local).mutable
                    && self
                        .lets
                        .get(local)
                        .is_some_and(|init| self.is_own_index(*init, types, depth + 1))
            }
            ExprKind::Field { base, name, .. } => {
                name == "x"
                    && matches!(
                        self.function.expr(*base).kind,
                        ExprKind::Builtin(Builtin::GlobalIdx)
                    )
            }
            ExprKind::Cast {
                expr,
                to: Scalar::Usize,
            } => {
                types.expr(*expr) == Ty::Scalar(Scalar::Usize)
                    && self.is_own_index(*expr, types, depth + 1)
            }
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => {
                let thread = |e| self.is_index_x(e, Builtin::ThreadIdx);
                (self.is_block_start(*lhs) && thread(*rhs))
                    || (self.is_block_start(*rhs) && thread(*lhs))
            }
            _ => false,
        }
    }

    /// `block_idx().x as usize * block_dim().x as usize`, in either order.
    fn is_block_start(&self, id: ExprId) -> bool {
        let ExprKind::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } = self.function.expr(id).kind
        else {
            return false;
        };
        let (idx, dim) = (Builtin::BlockIdx, Builtin::BlockDim);
        (self.is_index_x(lhs, idx) && self.is_index_x(rhs, dim))
            || (self.is_index_x(lhs, dim) && self.is_index_x(rhs, idx))
    }

    /// `builtin().x as usize`.
    fn is_index_x(&self, id: ExprId, builtin: Builtin) -> bool {
        let ExprKind::Cast {
            expr,
            to: Scalar::Usize,
        } = self.function.expr(id).kind
        else {
            return false;
        };
        matches!(
            &self.function.expr(expr).kind,
            ExprKind::Field { base, name, .. }
                if name == "x" && matches!(self.function.expr(*base).kind, ExprKind::Builtin(b) if b == builtin)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{ownership, Ownership, View};

    /// The owned loop's views of the kernel in `source` (the first function).
    fn views_of(source: &str) -> Ownership {
        let (program, types) = crate::checked_program_of(source)
            .unwrap_or_else(|errors| panic!("kernel rejected: {errors}"));
        ownership(program.root(), &types[0])
    }

    #[test]
    fn saxpy_owns_y_and_reads_x() {
        let got = views_of(
            "fn k(a: f32, x: &[f32], y: &mut [f32]) { let i = global_idx().x; if i < y.len() { y[i] = a * x[i] + y[i]; } }",
        );
        assert_eq!(got.views, [View::Shared, View::Read, View::Owned]);
        assert_eq!(got.bounded, [1, 2]);
    }

    #[test]
    fn spelled_out_indices_through_lets_are_the_threads_own() {
        let got = views_of(
            "fn k(x: &[f32], y: &mut [f32], z: &mut [u32]) { let i = thread_idx().x as usize + block_dim().x as usize * block_idx().x as usize; let j = i as usize; let n = x.len(); if j < n { y[j] += x[n - 1 - j]; z[i] = 1; } }",
        );
        assert_eq!(got.views, [View::Read, View::Owned, View::Owned]);
        // `x` is read only at another index: its length bounds no thread.
        assert_eq!(got.bounded, [1, 2]);
    }

    #[test]
    fn other_indices_and_uses_keep_atomic_accesses() {
        let kernels = [
            // Another thread's element.
            "fn k(y: &mut [f32]) { let i = global_idx().x; if i + 1 < y.len() { y[i + 1] = y[i]; } }",
            "fn k(y: &mut [f32]) { let i = global_idx().x; let n = y.len(); if i < n { y[n - 1 - i] = 1.0; } }",
            // A mutable index, which may change after it was the thread's.
            "fn k(y: &mut [f32]) { let mut i = global_idx().x; i += 0; if i < y.len() { y[i] = 1.0; } }",
            // The y index, or a 32-bit product that may wrap.
            "fn k(y: &mut [f32]) { let i = global_idx().y; if i < y.len() { y[i] = 1.0; } }",
            "fn k(y: &mut [f32]) { let i = (block_idx().x * block_dim().x + thread_idx().x) as usize; if i < y.len() { y[i] = 1.0; } }",
            // An atomic, a sub-slice, a device function given the slice.
            "fn k(y: &mut [u32]) { let i = global_idx().x; if i < y.len() { y[i] = 1; y.atomic_add(0, 1); } }",
            "fn k(y: &mut [f32]) { let i = global_idx().x; let s = &mut y[0..4]; s[0] = 1.0; if i < y.len() { y[i] = 1.0; } }",
            "fn k(y: &mut [f32]) { let i = global_idx().x; if i < y.len() { set(y, i); } } fn set(y: &mut [f32], i: usize) { y[i] = 1.0; }",
        ];
        for source in kernels {
            let got = views_of(source);
            assert_eq!(got.views, [View::Shared], "{source}");
            assert!(!got.any(), "{source}");
        }
    }

    #[test]
    fn a_read_only_slice_given_away_keeps_its_view() {
        let got = views_of(
            "fn k(x: &[f32], y: &mut [f32]) { let i = global_idx().x; if i < y.len() { y[i] = get(x, i); } } fn get(x: &[f32], i: usize) -> f32 { x[i] }",
        );
        assert_eq!(got.views, [View::Shared, View::Owned]);
        assert_eq!(got.bounded, [1]);
    }
}
