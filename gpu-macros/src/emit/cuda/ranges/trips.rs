//! Variables that grow in a loop whose trips are bounded. `offset *= 2` once an iteration of
//! `while d > 0 { ..; d >>= 1; }` leaves every bound an induction over the writes assumes, yet
//! `d` reaches 0 after as many halvings as its first value has bits, so `offset` is at most
//! its first value times 2 to that count. The work-efficient scan of GPU Gems 3 is written
//! this way: its `offset` doubles while `d` halves, then halves in a second loop. A counter
//! that steps by a constant once an iteration (`k += 1` in `while bits != 0 { ..; bits >>= 1;
//! }`, Sobol's walk over an index's set bits) is at most its first value plus that many steps.

use super::mutable::{declaring_block, local_of};
use super::{unsigned_max, Bound, Fact, Ranges, U32_MAX};
use crate::check::Types;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The facts, from counting trips, of those `candidates` (mutable variables the induction
/// gave up) whose every write either shrinks them (`>>=`, `/=` by a constant) or multiplies
/// them by a constant (or, every write, adds one) once an iteration of a loop that is bounded
/// by [`trip_bound`] and nested in no loop inside the variable's scope.
pub(super) fn bounded_growth(
    function: &Function,
    types: &Types,
    ranges: &Ranges,
    candidates: &BTreeSet<LocalId>,
) -> BTreeMap<LocalId, Fact> {
    candidates
        .iter()
        .filter_map(|&local| Some((local, growth_bound(function, types, ranges, local, None)?)))
        .collect()
}

/// Where a write sits: whether it is a statement of the body of a `while` that no other loop
/// encloses, and which.
#[derive(Clone, Copy)]
struct Place<'a> {
    loops: usize,
    top_of: Option<&'a Stmt>,
}

/// A variable's fact over part of its scope: in statements `from..to` of the block that
/// declares it, which only the writes of its statements before `to` reach (the variable is
/// declared anew each time the block runs). The work-efficient scan's `offset` doubles in its
/// first loop and halves in its second: in the first it is at least its first value.
pub(super) struct Phase {
    pub block: *const Block,
    pub from: usize,
    pub to: usize,
    pub local: LocalId,
    pub fact: Fact,
}

/// The phases of the variables of `grown` written by two statements or more of the block that
/// declares them: after each such statement but the last, the fact from the writes so far.
pub(super) fn phases(
    function: &Function,
    types: &Types,
    ranges: &Ranges,
    grown: &BTreeMap<LocalId, Fact>,
) -> Vec<Phase> {
    let mut phases = Vec::new();
    for &local in grown.keys() {
        let Some((block, declared)) = declaring_block(&function.body, local) else {
            continue;
        };
        let writers: Vec<usize> = (declared + 1..block.stmts.len())
            .filter(|&index| !assigns_to(function, &block.stmts[index], local).is_empty())
            .collect();
        for (p, window) in writers.windows(2).enumerate() {
            let within: BTreeSet<*const Stmt> = writers[..=p]
                .iter()
                .flat_map(|&index| assigns_to(function, &block.stmts[index], local))
                .collect();
            if let Some(fact) = growth_bound(function, types, ranges, local, Some(&within)) {
                phases.push(Phase {
                    block,
                    from: window[0],
                    to: window[1],
                    local,
                    fact,
                });
            }
        }
    }
    phases
}

/// The assignments to `local` in `stmt` and the blocks inside it.
fn assigns_to(function: &Function, stmt: &Stmt, local: LocalId) -> Vec<*const Stmt> {
    let mut found = Vec::new();
    let mut note = |s: &Stmt| {
        if let StmtKind::Assign { place, .. } = &s.kind {
            if local_of(function, *place) == Some(local) {
                found.push(s as *const Stmt);
            }
        }
    };
    note(stmt);
    for inner in stmt.kind.blocks() {
        super::mutable::visit(inner, &mut note);
    }
    found
}

/// The bound of `local` from its first value and its writes (those of `within` alone, where
/// given). Without a shrinking write it is at least its first value.
fn growth_bound(
    function: &Function,
    types: &Types,
    ranges: &Ranges,
    local: LocalId,
    within: Option<&BTreeSet<*const Stmt>>,
) -> Option<Fact> {
    let mut first = None;
    let mut first_lo = 0;
    let mut shrinks = false;
    // How many loops enclose the variable's `let`: a loop nested that deep runs its trips
    // from the variable's first value each time the `let` runs.
    let mut depth = 0;
    let mut growth: Vec<(&Stmt, u128)> = Vec::new();
    let mut steps: Vec<(&Stmt, u128)> = Vec::new();
    let mut ok = true;
    let top = Place {
        loops: 0,
        top_of: None,
    };
    walk(&function.body, top, &mut |stmt, place| match &stmt.kind {
        StmtKind::Let { local: l, init } if *l == local => {
            let fact = ranges
                .expr(*init)
                .filter(|fact| fact.cond.is_empty() && !fact.is_shifted());
            first = fact.and_then(Fact::hi_num);
            if let Some(Bound::Num(lo)) = fact.map(|fact| &fact.lo) {
                first_lo = *lo;
            }
            depth = place.loops;
        }
        StmtKind::Assign {
            place: target,
            op,
            value,
        } if local_of(function, *target) == Some(local)
            && within.is_none_or(|within| within.contains(&(stmt as *const Stmt))) =>
        {
            // A statement of a `while` body that no other loop inside the variable's scope
            // encloses runs once an iteration of that loop.
            let each_trip = place.top_of.filter(|_| place.loops == depth + 1);
            match (op, literal(function, *value), each_trip) {
                // Shrinking writes keep any upper bound.
                (Some(BinOp::Shr), Some(_), _) => shrinks = true,
                (Some(BinOp::Div), Some(n), _) if n >= 1 => shrinks = true,
                (Some(BinOp::Mul), Some(n), Some(w)) => {
                    shrinks |= n == 0;
                    growth.push((w, n));
                }
                (Some(BinOp::Shl), Some(k), Some(w)) if k < 64 => growth.push((w, 1 << k)),
                (Some(BinOp::Add), Some(n), Some(w)) => steps.push((w, n)),
                _ => ok = false,
            }
        }
        _ => {}
    });
    let mut bound = first?;
    if !ok || growth.is_empty() == steps.is_empty() {
        return None;
    }
    // Each loop multiplies by the product of its writes' factors, once an iteration; or adds
    // the sum of its steps.
    for (stmt, factor) in per_loop(growth, u128::saturating_mul) {
        let trips = trip_bound(function, types, ranges, stmt)?;
        for _ in 0..trips {
            bound = bound.saturating_mul(factor);
        }
    }
    for (stmt, step) in per_loop(steps, u128::saturating_add) {
        let trips = trip_bound(function, types, ranges, stmt)?;
        bound = bound.saturating_add(step.saturating_mul(u128::from(trips)));
    }
    let lo = if shrinks { 0 } else { first_lo };
    (bound <= U32_MAX).then(|| Fact::varying(lo, bound))
}

/// The writes' constants folded by `fold` per loop.
fn per_loop(writes: Vec<(&Stmt, u128)>, fold: fn(u128, u128) -> u128) -> Vec<(&Stmt, u128)> {
    let mut loops: Vec<(&Stmt, u128)> = Vec::new();
    for (stmt, n) in writes {
        match loops.iter_mut().find(|(s, _)| std::ptr::eq(*s, stmt)) {
            Some((_, folded)) => *folded = fold(*folded, n),
            None => loops.push((stmt, n)),
        }
    }
    loops
}

/// The most iterations of `while d > 0 { .. }` (or `d != 0`, `0 < d`) whose body halves `d`
/// (`d >>= k`, `d /= n` with `k >= 1`, `n >= 2`) as one of its own statements, writes it
/// nowhere else, and has no `continue`: `d` reaches 0 after at most as many halvings as its
/// largest first value has bits (or, where its first value has no unconditional bound, its
/// unsigned type has).
fn trip_bound(function: &Function, types: &Types, ranges: &Ranges, stmt: &Stmt) -> Option<u32> {
    let StmtKind::While { cond, body, .. } = &stmt.kind else {
        return None;
    };
    let counter = match &function.expr(*cond).kind {
        ExprKind::Binary {
            op: BinOp::Gt | BinOp::Ne,
            lhs,
            rhs,
        } if literal(function, *rhs) == Some(0) => local_of(function, *lhs)?,
        ExprKind::Binary {
            op: BinOp::Lt,
            lhs,
            rhs,
        } if literal(function, *lhs) == Some(0) => local_of(function, *rhs)?,
        _ => return None,
    };
    let halves = |stmt: &Stmt| match &stmt.kind {
        StmtKind::Assign { place, op, value } if local_of(function, *place) == Some(counter) => {
            match (op, literal(function, *value)) {
                (Some(BinOp::Shr), Some(k)) => k >= 1,
                (Some(BinOp::Div), Some(n)) => n >= 2,
                _ => false,
            }
        }
        _ => false,
    };
    let own = body.stmts.iter().filter(|s| halves(s)).count();
    // Every write of the counter in the whole function, and any `continue`, in this body.
    let mut writes = 0;
    let mut skips = false;
    walk(
        &function.body,
        Place {
            loops: 0,
            top_of: None,
        },
        &mut |s, _| {
            if let StmtKind::Assign { place, .. } = &s.kind {
                if local_of(function, *place) == Some(counter) {
                    writes += 1;
                }
            }
        },
    );
    walk(
        body,
        Place {
            loops: 1,
            top_of: None,
        },
        &mut |s, _| skips |= matches!(s.kind, StmtKind::Continue(_)),
    );
    if own == 0 || own != writes || skips || !function.local(counter).mutable {
        return None;
    }
    let first = ranges
        .local(counter)
        .filter(|fact| !fact.is_shifted() && fact.cond.is_empty())
        .and_then(Fact::hi_num);
    let hi = first.or_else(|| unsigned_max(types.local(counter)))?;
    Some(128 - hi.leading_zeros())
}

/// The value of an integer literal.
fn literal(function: &Function, id: ExprId) -> Option<u128> {
    match &function.expr(id).kind {
        ExprKind::Lit(Lit::Int { value, .. }) => Some(*value),
        _ => None,
    }
}

/// Calls `f` on every statement of `block` and the blocks inside it (not closures'), with
/// where it sits.
fn walk<'a>(block: &'a Block, place: Place<'a>, f: &mut impl FnMut(&'a Stmt, Place<'a>)) {
    for stmt in &block.stmts {
        f(stmt, place);
        let inner = match &stmt.kind {
            StmtKind::While { .. } => Place {
                loops: place.loops + 1,
                top_of: Some(stmt),
            },
            StmtKind::For { .. } | StmtKind::Loop { .. } => Place {
                loops: place.loops + 1,
                top_of: None,
            },
            _ => Place {
                loops: place.loops,
                top_of: None,
            },
        };
        for nested in stmt.kind.blocks() {
            walk(nested, inner, f);
        }
    }
}
