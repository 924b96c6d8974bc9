//! Mutable variables: which ones get a fact, and checking an assumed fact against every value
//! written to the variable. A tree reduction's `stride >>= 1` keeps its first value's bound,
//! and `while d < n { ..; d *= 2; }` stays below twice `n`'s.

use super::{is_wide, minimal, Atom, Bound, BoundOp, Fact};
use crate::check::Types;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// Times a variable's assumed fact is widened before it is given up.
pub(super) const MAX_WIDENINGS: usize = 3;

/// Times more it may be widened after those, only to a threshold (another variable's bound)
/// or by conditions alone (see `settle`).
pub(super) const EXTRA_WIDENINGS: usize = 4;

/// Every value written to each tracked variable in one round (`None`: unknown).
pub(super) type Written = BTreeMap<LocalId, Vec<Option<Fact>>>;

/// How the function writes its mutable variables.
pub(super) struct Writes {
    /// The mutable 64-bit variables bound by `let`, whose every write the walk sees.
    pub tracked: BTreeSet<LocalId>,
    /// Mutable variables written where the walk does not follow every value: borrowed as
    /// `&mut`, assigned as part of a tuple or inside a closure, or bound without a `let`
    /// (a parameter, a tuple pattern, a loop variable).
    pub unbounded: BTreeSet<LocalId>,
    /// Tracked variables written only by statements of the block that declares them, after
    /// the `let`, so each read sees the value of the write before it in the block (`let mut
    /// ai = ..; ai += conflict_free_offset(ai);`).
    pub straight: BTreeSet<LocalId>,
}

impl Writes {
    pub fn of(function: &Function, types: &Types) -> Writes {
        let mut let_bound = BTreeSet::new();
        let mut unbounded = BTreeSet::new();
        let mut assigned = Vec::new();
        visit(&function.body, &mut |stmt| match &stmt.kind {
            StmtKind::Let { local, .. } => {
                let_bound.insert(*local);
            }
            StmtKind::Assign { place, .. } => assigned.push(*place),
            _ => {}
        });
        for expr in &function.exprs {
            match &expr.kind {
                ExprKind::Ref {
                    expr,
                    mutable: true,
                } => unbounded.extend(local_of(function, *expr)),
                ExprKind::Closure { body, .. } => visit(body, &mut |stmt| {
                    if let StmtKind::Assign { place, .. } = &stmt.kind {
                        unbounded.extend(local_of(function, *place));
                    }
                }),
                _ => {}
            }
        }
        for place in assigned {
            if let ExprKind::Tuple { elems } = &function.expr(place).kind {
                unbounded.extend(elems.iter().filter_map(|e| local_of(function, *e)));
            }
        }
        for (index, local) in function.locals.iter().enumerate() {
            let id = LocalId(index as u32);
            if local.mutable && !let_bound.contains(&id) {
                unbounded.insert(id);
            }
        }
        let tracked: BTreeSet<LocalId> = let_bound
            .into_iter()
            .filter(|id| {
                function.local(*id).mutable && is_wide(types.local(*id)) && !unbounded.contains(id)
            })
            .collect();
        let mut all_writes: BTreeMap<LocalId, usize> = BTreeMap::new();
        visit(&function.body, &mut |stmt| {
            if let StmtKind::Assign { place, .. } = &stmt.kind {
                if let Some(local) = local_of(function, *place) {
                    *all_writes.entry(local).or_default() += 1;
                }
            }
        });
        // Every write of the variable is a statement of its `let`'s block, after the `let`.
        let straight = tracked
            .iter()
            .copied()
            .filter(|&local| {
                declaring_block(&function.body, local).is_some_and(|(block, index)| {
                    let direct = block.stmts[index + 1..]
                        .iter()
                        .filter(|s| {
                            matches!(&s.kind, StmtKind::Assign { place, .. }
                                if local_of(function, *place) == Some(local))
                        })
                        .count();
                    direct == all_writes.get(&local).copied().unwrap_or(0)
                })
            })
            .collect();
        Writes {
            tracked,
            unbounded,
            straight,
        }
    }

    /// The mutable variables that `body` writes, if at all, only by its own statements (not
    /// in a nested block), so a loop condition over them holds until the first such write.
    pub fn written_at_top_only(&self, function: &Function, body: &Block) -> Vec<LocalId> {
        let mut deep = Vec::new();
        visit(body, &mut |stmt| {
            if let StmtKind::Assign { place, .. } = &stmt.kind {
                deep.extend(local_of(function, *place));
            }
        });
        let top: Vec<LocalId> = body
            .stmts
            .iter()
            .filter_map(|stmt| match &stmt.kind {
                StmtKind::Assign { place, .. } => local_of(function, *place),
                _ => None,
            })
            .collect();
        (0..function.locals.len() as u32)
            .map(LocalId)
            .filter(|id| function.local(*id).mutable && !self.unbounded.contains(id))
            .filter(|id| {
                deep.iter().filter(|l| *l == id).count() == top.iter().filter(|l| *l == id).count()
            })
            .collect()
    }
}

/// Calls `f` on every statement of `block` and of the blocks inside it (not closures').
pub(super) fn visit(block: &Block, f: &mut impl FnMut(&Stmt)) {
    for stmt in &block.stmts {
        f(stmt);
        for inner in stmt.kind.blocks() {
            visit(inner, f);
        }
    }
}

/// The variable an expression names, if it is one.
pub(super) fn local_of(function: &Function, id: ExprId) -> Option<LocalId> {
    match function.expr(id).kind {
        ExprKind::Local(local) => Some(local),
        _ => None,
    }
}

/// Checks each variable's assumed fact against the values written to it this round: widens
/// the ones that a write left, gives up the ones written an unknown value. Returns whether
/// every assumption held, so the round's facts stand.
pub(super) fn settle(
    assumed: &mut BTreeMap<LocalId, Fact>,
    given_up: &mut BTreeSet<LocalId>,
    widenings: &mut BTreeMap<LocalId, usize>,
    written: Written,
) -> bool {
    let mut settled = true;
    // The other variables' bounds this round, where a variable that keeps creeping up may
    // stop (see `threshold`).
    let thresholds: Vec<(LocalId, Bound)> = assumed
        .iter()
        .map(|(local, fact)| (*local, fact.hi.clone()))
        .collect();
    for (local, values) in written {
        let Some(values) = values.into_iter().collect::<Option<Vec<Fact>>>() else {
            given_up.insert(local);
            assumed.remove(&local);
            settled = false;
            continue;
        };
        let level = widenings.get(&local).copied().unwrap_or(0);
        let joined = match assumed.get(&local) {
            Some(fact) if values.iter().all(|value| within(value, fact)) => continue,
            // Past its widenings a variable's condition is kept minimal, so it may imply a
            // write's atoms rather than hold each of them.
            Some(fact)
                if level > MAX_WIDENINGS
                    && values.iter().all(|value| {
                        bounds_within(value, fact) && implies(&fact.cond, &value.cond)
                    }) =>
            {
                continue
            }
            Some(fact) if level >= MAX_WIDENINGS => {
                let others: Vec<&Bound> = thresholds
                    .iter()
                    .filter(|(other, _)| *other != local)
                    .map(|(_, hi)| hi)
                    .collect();
                let widened = (level <= MAX_WIDENINGS + EXTRA_WIDENINGS)
                    .then(|| widened_past(fact, &values, &others))
                    .flatten();
                let Some(widened) = widened else {
                    given_up.insert(local);
                    assumed.remove(&local);
                    settled = false;
                    continue;
                };
                widenings.insert(local, level + 1);
                widened
            }
            Some(fact) => {
                *widenings.entry(local).or_default() += 1;
                let mut joined = values.iter().fold(fact.clone(), |acc, v| join(&acc, v));
                // A value that goes lower (a halving) would go lower each round: 0 at once.
                if values.iter().any(|value| !above(value, fact)) {
                    joined.lo = Bound::Num(0);
                }
                joined
            }
            None => match values.split_first() {
                Some((first, rest)) => rest.iter().fold(first.clone(), |acc, v| join(&acc, v)),
                None => continue,
            },
        };
        assumed.insert(local, joined);
        settled = false;
    }
    settled
}

/// A variable's fact past its widenings, if it has one: with the conditions the writes name
/// added, where only those grew (they name new ones while the variables they read settle:
/// `lo + hi` fits where both are below `N`), or at a threshold, from 0 (a creeping lower bound
/// would creep too). Its condition is kept minimal.
fn widened_past(fact: &Fact, values: &[Fact], others: &[&Bound]) -> Option<Fact> {
    let conds = values.iter().flat_map(|value| value.cond.iter().cloned());
    if values.iter().all(|value| bounds_within(value, fact)) {
        let mut widened = fact.clone();
        widened.cond.extend(conds);
        widened.cond = minimal(&widened.cond);
        return Some(widened);
    }
    let joined = values.iter().fold(fact.clone(), |acc, v| join(&acc, v));
    Some(Fact {
        lo: Bound::Num(0),
        hi: threshold(&joined, others)?,
        cond: minimal(&conds.collect()),
        varies: true,
        shift: Bound::Num(0),
    })
}

/// Where a variable still creeping up after its widenings may stop: the least of the other
/// variables' upper bounds that is at least its own. A binary search's `lo = mid` with `mid =
/// (lo + hi) / 2` creeps towards `hi`'s bound (10, 15, 17, 18, .. of 20) and stays below it
/// once assumed there, as the next round checks.
fn threshold(joined: &Fact, others: &[&Bound]) -> Option<Bound> {
    let covers = |t: &Bound, hi: &Bound| {
        t == hi || t.dominates(hi) || hi.upper().is_some_and(|hi| hi <= t.lower())
    };
    let covering: Vec<&Bound> = others
        .iter()
        .copied()
        .filter(|t| covers(t, &joined.hi))
        .collect();
    covering
        .iter()
        .find(|t| covering.iter().all(|other| covers(other, t)))
        .or(covering.first())
        .map(|t| (*t).clone())
}

/// Whether `value` lies within `fact`: its bounds inside, its condition implied.
fn within(value: &Fact, fact: &Fact) -> bool {
    bounds_within(value, fact) && value.cond.is_subset(&fact.cond)
}

/// Whether the atoms of `cond` imply every atom of `atoms`: the same bound on a value that
/// one of them bounds from above, or one the numbers prove.
fn implies(cond: &BTreeSet<Atom>, atoms: &BTreeSet<Atom>) -> bool {
    atoms.iter().all(|(lhs, rhs)| {
        lhs.upper().is_some_and(|upper| upper <= rhs.lower())
            || cond
                .iter()
                .any(|(other, bound)| bound == rhs && other.dominates(lhs))
    })
}

/// Whether `value`'s bounds lie within `fact`'s, whatever the conditions.
fn bounds_within(value: &Fact, fact: &Fact) -> bool {
    let hi = fact.hi == value.hi
        || fact.hi.dominates(&value.hi)
        || value.hi.upper().is_some_and(|hi| hi <= fact.hi.lower());
    hi && above(value, fact)
}

/// Whether `value`'s lower bound is at least `fact`'s.
fn above(value: &Fact, fact: &Fact) -> bool {
    fact.lo == value.lo
        || value.lo.dominates(&fact.lo)
        || fact.lo.upper().is_some_and(|lo| lo <= value.lo.lower())
}

/// The least fact this analysis spells that holds of both.
pub(super) fn join(a: &Fact, b: &Fact) -> Fact {
    Fact {
        shift: Bound::Num(0),
        lo: Bound::op(BoundOp::Min, &a.lo, &b.lo),
        hi: Bound::op(BoundOp::Max, &a.hi, &b.hi),
        cond: a.cond.union(&b.cond).cloned().collect(),
        varies: true,
    }
}

/// The block whose statement `index` is `local`'s `let`.
pub(super) fn declaring_block(block: &Block, local: LocalId) -> Option<(&Block, usize)> {
    for (index, stmt) in block.stmts.iter().enumerate() {
        if matches!(stmt.kind, StmtKind::Let { local: l, .. } if l == local) {
            return Some((block, index));
        }
        for inner in stmt.kind.blocks() {
            if let Some(found) = declaring_block(inner, local) {
                return Some(found);
            }
        }
    }
    None
}
