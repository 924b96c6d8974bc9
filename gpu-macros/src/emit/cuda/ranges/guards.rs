//! Conditions as facts: inside `if i < n { .. }`, after `if i >= n { return; }`, in the arm
//! of `if c { a } else { b }` that `c` chose, in the right operand of `&&` and `||`, and in a
//! `while` body, a variable compared with a bounded value is bounded by it. This is what lets
//! `y * width + x` behind `if x < width && y < height` be computed in 32 bits when the image
//! fits.

use super::{Bound, BoundOp, Fact, Walk};
use crate::ir::*;

/// Whether a block always leaves the code after it: it ends in `return`, `break` or
/// `continue`.
pub(super) fn diverges(block: &Block) -> bool {
    matches!(
        block.stmts.last().map(|stmt| &stmt.kind),
        Some(StmtKind::Return(_) | StmtKind::Break(_) | StmtKind::Continue(_))
    )
}

/// One thing a condition says of a variable.
enum Guard {
    /// Its fact where the condition holds.
    Fact(LocalId, Fact),
    /// An upper bound of a signed variable with no fact: a fact only with an [`Guard::AtLeast`]
    /// of the same condition (`lo` is then that one's).
    Below(LocalId, Fact),
    /// A lower bound, not negative, of a signed variable with no fact.
    AtLeast(LocalId, Bound),
}

impl Walk<'_> {
    /// Runs `inside` with what `cond` being `truth` says of variables added to their facts;
    /// `mutable` lists the mutable variables it may speak of (a `while` body's, until they
    /// are written).
    pub(super) fn guarded(
        &mut self,
        cond: ExprId,
        truth: bool,
        mutable: Option<&[LocalId]>,
        inside: impl FnOnce(&mut Self),
    ) {
        let mark = self.refined.len();
        let guards = self.guards(cond, truth, mutable);
        self.refined.extend(guards.into_iter().map(Some));
        inside(self);
        self.refined.truncate(mark);
    }

    /// What `cond` being `truth` says of variables: `a < b` bounds `a` above by `b - 1` and
    /// `b` below by `a + 1`; `&&` when true and `||` when false say what both sides say. A
    /// signed variable with no fact of its own gets one only where the condition bounds it
    /// both ways, below by a value that is not negative (`r >= 0 && r < height as i64`).
    pub(super) fn guards(
        &mut self,
        cond: ExprId,
        truth: bool,
        mutable: Option<&[LocalId]>,
    ) -> Vec<(LocalId, Fact)> {
        let guards = self.guard_list(cond, truth, mutable);
        let mut facts = Vec::new();
        for guard in &guards {
            match guard {
                Guard::Fact(local, fact) => facts.push((*local, fact.clone())),
                Guard::Below(local, fact) => {
                    let lower = guards.iter().find_map(|other| match other {
                        Guard::AtLeast(l, lo) if l == local => Some(lo.clone()),
                        _ => None,
                    });
                    if let Some(lo) = lower {
                        facts.push((*local, Fact { lo, ..fact.clone() }));
                    }
                }
                Guard::AtLeast(..) => {}
            }
        }
        facts
    }

    fn guard_list(&mut self, cond: ExprId, truth: bool, mutable: Option<&[LocalId]>) -> Vec<Guard> {
        let function = self.function;
        match &function.expr(cond).kind {
            ExprKind::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                lhs,
                rhs,
            } => {
                if (*op == BinOp::And) != truth {
                    return Vec::new();
                }
                let mut guards = self.guard_list(*lhs, truth, mutable);
                guards.extend(self.guard_list(*rhs, truth, mutable));
                guards
            }
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => self.guard_list(*operand, !truth, mutable),
            ExprKind::Binary { op, lhs, rhs } => {
                // `small < big` (strict) or `small <= big`.
                let (small, big, strict) = match (op, truth) {
                    (BinOp::Lt, true) | (BinOp::Ge, false) => (*lhs, *rhs, true),
                    (BinOp::Le, true) | (BinOp::Gt, false) => (*lhs, *rhs, false),
                    (BinOp::Gt, true) | (BinOp::Le, false) => (*rhs, *lhs, true),
                    (BinOp::Ge, true) | (BinOp::Lt, false) => (*rhs, *lhs, false),
                    _ => return Vec::new(),
                };
                self.compared(small, big, strict, mutable)
            }
            _ => Vec::new(),
        }
    }

    /// What `small < big` (or `<=`) says of whichever side is a variable.
    fn compared(
        &mut self,
        small: ExprId,
        big: ExprId,
        strict: bool,
        mutable: Option<&[LocalId]>,
    ) -> Vec<Guard> {
        let step = Bound::Num(u128::from(strict));
        let small_fact = self.fact(small);
        let big_fact = self.fact(big);
        let mut guards = Vec::new();
        if let (Some(local), Some(big)) = (self.refinable(small, mutable), &big_fact) {
            // `big - 1` does not wrap where `small < big` holds.
            let hi = Bound::op(BoundOp::Sub, &big.hi, &step);
            let fact = match self.current(local) {
                // Below the bound, but maybe negative: see `guards`.
                _ if self.bounds_alone(local) => Fact {
                    lo: Bound::Num(0),
                    hi,
                    cond: big.cond.clone(),
                    varies: true,
                    shift: Bound::Num(0),
                },
                // A mutable variable's own bound may be the one being established: the
                // condition's stands alone, so the widening converges.
                Some(own) if self.function.local(local).mutable => Fact {
                    hi,
                    cond: own.cond.union(&big.cond).cloned().collect(),
                    varies: true,
                    lo: own.lo,
                    shift: Bound::Num(0),
                },
                Some(own) => Fact {
                    hi: Bound::op(BoundOp::Min, &own.hi, &hi),
                    cond: own.cond.union(&big.cond).cloned().collect(),
                    varies: true,
                    lo: own.lo,
                    shift: Bound::Num(0),
                },
                None => Fact {
                    lo: Bound::Num(0),
                    hi,
                    cond: big.cond.clone(),
                    varies: true,
                    shift: Bound::Num(0),
                },
            };
            guards.push(if self.bounds_alone(local) {
                Guard::Below(local, fact)
            } else {
                Guard::Fact(local, fact)
            });
        }
        if let Some(local) = self.refinable(big, mutable) {
            // Only an unconditional lower bound of `small` is used, so the variable's fact
            // gains no condition from it; without one, an unsigned `small` is at least 0 and a
            // signed one may be negative, which bounds `big` by nothing.
            let below = match small_fact {
                Some(fact) if fact.cond.is_empty() => Some(fact.lo),
                // An unsigned constant is its own lower bound, whatever its condition says of
                // its fit (`t - BLOCK` in the `else` of `if t < BLOCK`).
                Some(fact) if self.unsigned_constant(small) => Some(fact.lo),
                _ if super::unsigned_max(self.types.expr(small)).is_some() => Some(Bound::Num(0)),
                _ => None,
            };
            if let Some(below) = below {
                let lo = Bound::op(BoundOp::Add, &below, &step);
                if self.bounds_alone(local) {
                    guards.push(Guard::AtLeast(local, lo));
                } else if let Some(own) = self.current(local) {
                    guards.push(Guard::Fact(
                        local,
                        Fact {
                            lo: Bound::op(BoundOp::Max, &own.lo, &lo),
                            ..own
                        },
                    ));
                }
            }
        }
        guards
    }

    /// Whether `id` is a module `const` of an unsigned type or a literal.
    fn unsigned_constant(&self, id: ExprId) -> bool {
        matches!(
            self.function.expr(id).kind,
            ExprKind::Outer(_) | ExprKind::Lit(_)
        ) && super::unsigned_max(self.types.expr(id)).is_some()
    }

    /// Whether a condition's bounds of `local` must stand alone: it is signed and not known
    /// to be non-negative without a condition (a conditional fact may not hold, and then
    /// the value may be negative, so `x < n` alone says nothing of it).
    fn bounds_alone(&self, local: LocalId) -> bool {
        super::signed_max(self.types.local(local)).is_some()
            && self.current(local).is_none_or(|fact| !fact.cond.is_empty())
    }

    /// The variable `id` reads, if a condition may bound it: an integer one that is never
    /// written, or one of `mutable`.
    fn refinable(&self, id: ExprId, mutable: Option<&[LocalId]>) -> Option<LocalId> {
        let ExprKind::Local(local) = self.function.expr(id).kind else {
            return None;
        };
        if !super::has_facts(self.types.local(local)) {
            return None;
        }
        let fixed = !self.function.local(local).mutable;
        (fixed || mutable.is_some_and(|m| m.contains(&local))).then_some(local)
    }
}
