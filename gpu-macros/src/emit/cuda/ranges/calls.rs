//! Calls of `#[device]` functions. A call's value has the fact of the value its function
//! returns, with each parameter known by its argument's fact: `i + conflict_free_offset(i)`
//! (`fn conflict_free_offset(i: usize) -> usize { i >> 5 }`) then narrows as the same
//! expression written out would. Only functions that return once, at their end, whose
//! parameters are never written and that call nothing and are not generic are looked into,
//! and a fact that names a constant of the function's own (which the caller's code cannot
//! spell) is dropped.

use super::{Bound, Fact, Ranges, Scope, Walk};
use crate::check::Types;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The program's functions, for the facts of calls.
pub(in crate::emit::cuda) struct Callees<'a> {
    pub program: &'a Program,
    pub types: &'a [Types],
}

impl Walk<'_> {
    /// The fact of a call of `#[device]` function `name` with `args`, whose facts are known.
    pub(super) fn call(&mut self, name: &str, args: &[ExprId]) -> Option<Fact> {
        let callees = self.callees?;
        let (index, callee) = callees.program.function(name)?;
        let returned = returned_value(callee)?;
        let plain = callee.generics.is_empty()
            && callee.params.len() == args.len()
            && callee
                .params
                .iter()
                .all(|param| !callee.local(param.local).mutable)
            && !callee
                .exprs
                .iter()
                .any(|expr| matches!(expr.kind, ExprKind::GenericConst(_) | ExprKind::Call { .. }));
        if !plain {
            return None;
        }
        let seeded: BTreeMap<LocalId, Fact> = callee
            .params
            .iter()
            .zip(args)
            .filter_map(|(param, arg)| Some((param.local, self.ranges.expr(*arg)?.clone())))
            .collect();
        let scope = Scope {
            params: None,
            callees: None,
            seeded: &seeded,
            for_call: true,
        };
        let ranges = Ranges::in_scope(callee, callees.types.get(index)?, &scope);
        let fact = ranges.expr(returned)?;
        // A constant of the function's own is spelt as the caller's code cannot spell it.
        let known: BTreeSet<&str> = seeded.values().flat_map(constants).collect();
        let own = constants(fact).any(|name| !known.contains(name));
        (!own).then(|| fact.clone())
    }
}

/// The C++ names of the constants a fact's bounds and condition name.
fn constants(fact: &Fact) -> impl Iterator<Item = &str> {
    let mut bounds = vec![&fact.lo, &fact.hi, &fact.shift];
    bounds.extend(fact.cond.iter().flat_map(|(a, b)| [a, b]));
    let mut names = Vec::new();
    while let Some(bound) = bounds.pop() {
        match bound {
            Bound::Sym(cuda, _) => names.push(cuda.as_str()),
            Bound::Op(_, a, b) => bounds.extend([&**a, &**b]),
            Bound::Num(_) | Bound::Param(_) => {}
        }
    }
    names.into_iter()
}

/// The value `function` returns, where it returns once, at its end.
fn returned_value(function: &Function) -> Option<ExprId> {
    let Some(StmtKind::Return(Some(value))) = function.body.stmts.last().map(|stmt| &stmt.kind)
    else {
        return None;
    };
    let mut returns = 0;
    super::mutable::visit(&function.body, &mut |stmt| {
        returns += usize::from(matches!(stmt.kind, StmtKind::Return(_)));
    });
    (returns == 1).then_some(*value)
}
