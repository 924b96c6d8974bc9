//! Whether a kernel's launch-dependent narrowing is worth a second body (see
//! [`Ranges::gains_at_launch`]).

use super::{mutable, Fact, Ranges, LOOP_WEIGHT};
use crate::ir::*;

impl Ranges {
    /// Whether the facts that hold only where the parameters fit narrow enough to be worth a
    /// second body: loop variables (a counter, a halving stride), products of two values and
    /// divisions by other than a power of two (a single one), each several times dearer in 64
    /// bits, weighed by how often they run. One product per thread (a pixel's final store) is not, nor is a
    /// length kept in a variable or an index scaled by a constant, which, mixed with 64-bit
    /// values, cost conversions (H100: the half-precision sum kernel lost 3-4% to those).
    pub fn gains_at_launch(&self, function: &Function) -> bool {
        const WORTH: u32 = 4;
        let at_launch = |fact: &Fact| {
            fact.varies
                && fact
                    .cond
                    .iter()
                    .any(|(a, b)| a.at_run_time() || b.at_run_time())
        };
        let mut loop_vars = Vec::new();
        mutable::visit(&function.body, &mut |stmt| {
            if let StmtKind::For { var, .. } = &stmt.kind {
                loop_vars.push(*var);
            }
        });
        let locals = self.locals.iter().enumerate().filter(|(index, fact)| {
            let local = LocalId(*index as u32);
            fact.as_ref().is_some_and(at_launch)
                && (function.local(local).mutable || loop_vars.contains(&local))
        });
        let literal = |id: &ExprId| match function.expr(*id).kind {
            ExprKind::Lit(Lit::Int { value, .. }) => Some(value),
            _ => None,
        };
        let exprs = self.exprs.iter().enumerate().filter_map(|(index, fact)| {
            let Some(Some(fact)) = fact else {
                return None;
            };
            // A division by a value is a few instructions in 32 bits and a long routine in
            // 64: one a thread is worth a second body (a ring's `(i + 1) % n`).
            let cost = match &function.expr(ExprId(index as u32)).kind {
                ExprKind::Binary {
                    op: BinOp::Mul,
                    lhs,
                    rhs,
                } => u32::from(literal(lhs).is_none() && literal(rhs).is_none()),
                ExprKind::Binary {
                    op: BinOp::Div | BinOp::Rem,
                    rhs,
                    ..
                } if !literal(rhs).is_some_and(u128::is_power_of_two) => WORTH,
                ExprKind::Method { method, .. } if method == "rem_euclid" => WORTH,
                // A clamp is a compare and a select in 32 bits, two of each in 64: in a loop
                // (a filter's neighbour clamped at the edge) they add up.
                ExprKind::Method { method, .. }
                    if matches!(
                        method.as_str(),
                        "min" | "max" | "clamp" | "saturating_sub" | "saturating_add" | "abs_diff"
                    ) =>
                {
                    1
                }
                _ => 0,
            };
            (cost > 0 && at_launch(fact)).then(|| self.weights[index].saturating_mul(cost))
        });
        let weight = (locals.count() as u32)
            .saturating_mul(LOOP_WEIGHT)
            .saturating_add(exprs.fold(0u32, u32::saturating_add));
        weight >= WORTH
    }
}
