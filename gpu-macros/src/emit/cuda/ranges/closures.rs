//! Closures bound by `let` and only ever called: their parameters get the facts of the
//! arguments at every call, so `let at = |x: usize, y: usize| image[y * width + x];` indexes in
//! 32 bits where every call's coordinates do. Such a closure's body is walked after the rest of
//! the function, once every call is seen.

use super::mutable::join;
use super::{Fact, Walk};
use crate::ir::*;
use std::collections::BTreeMap;

/// The closures whose parameters take their calls' facts.
pub(super) struct Closures {
    /// Each such closure's expression, its variable and how many calls it has.
    pub deferred: BTreeMap<ExprId, (LocalId, usize)>,
}

impl Closures {
    pub fn of(function: &Function) -> Closures {
        let mut bound = BTreeMap::new();
        let visit = |block: &Block, bound: &mut BTreeMap<LocalId, ExprId>| {
            super::mutable::visit(block, &mut |stmt| {
                if let StmtKind::Let { local, init } = &stmt.kind {
                    if matches!(function.expr(*init).kind, ExprKind::Closure { .. }) {
                        bound.insert(*local, *init);
                    }
                }
            });
        };
        visit(&function.body, &mut bound);
        for expr in &function.exprs {
            if let ExprKind::Closure { body, .. } = &expr.kind {
                visit(body, &mut bound);
            }
        }
        // A closure read other than as a call's callee may be called where the walk does not
        // see it.
        let mut calls: BTreeMap<LocalId, usize> = BTreeMap::new();
        let mut other_uses: Vec<LocalId> = Vec::new();
        let mut callees = Vec::new();
        for expr in &function.exprs {
            if let ExprKind::CallClosure { callee, .. } = &expr.kind {
                callees.push(*callee);
                if let ExprKind::Local(local) = function.expr(*callee).kind {
                    *calls.entry(local).or_default() += 1;
                }
            }
        }
        for (index, expr) in function.exprs.iter().enumerate() {
            if let ExprKind::Local(local) = expr.kind {
                if bound.contains_key(&local) && !callees.contains(&ExprId(index as u32)) {
                    other_uses.push(local);
                }
            }
        }
        let deferred = bound
            .into_iter()
            .filter(|(local, _)| !other_uses.contains(local))
            .map(|(local, closure)| (closure, (local, calls.get(&local).copied().unwrap_or(0))))
            .collect();
        Closures { deferred }
    }
}

impl Walk<'_> {
    /// Records the facts of a call's arguments, if the callee is a deferred closure.
    pub(super) fn closure_call(&mut self, callee: ExprId, args: &[ExprId]) {
        let ExprKind::Local(local) = self.function.expr(callee).kind else {
            return;
        };
        if !self.closures.deferred.values().any(|(l, _)| *l == local) {
            return;
        }
        let facts = args.iter().map(|arg| self.fact(*arg)).collect();
        self.calls.entry(local).or_default().push(facts);
    }

    /// Walks the deferred closures' bodies, their parameters known from every call.
    pub(super) fn deferred_closures(&mut self) {
        let function = self.function;
        for (&closure, &(local, count)) in &self.closures.deferred {
            let ExprKind::Closure { params, body, .. } = &function.expr(closure).kind else {
                continue;
            };
            let calls = self.calls.remove(&local).unwrap_or_default();
            if calls.len() == count && count > 0 {
                for (index, param) in params.iter().enumerate() {
                    if function.local(*param).mutable {
                        continue;
                    }
                    let facts: Option<Vec<Fact>> = calls
                        .iter()
                        .map(|args| args.get(index).cloned().flatten())
                        .collect();
                    let fact = facts.and_then(|facts| {
                        let (first, rest) = facts.split_first()?;
                        Some(rest.iter().fold(first.clone(), |acc, f| join(&acc, f)))
                    });
                    // Not the variable's own fact: the lambda declares it 64-bit.
                    if let Some(fact) = fact {
                        self.closure_params.insert(*param, fact);
                    }
                }
            }
            // The body runs once a call.
            self.weighted(count.max(1) as u32, |walk| walk.block(body));
        }
    }
}
