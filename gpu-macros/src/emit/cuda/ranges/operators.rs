//! The fact of each kind of expression on its own: literals, constants, the index builtins,
//! kernel parameters and lengths, casts, `min`/`max` and `if` values, and the operators, by
//! interval arithmetic that gives up wherever the result could wrap.

use super::{
    at_most, signed_max, unsigned_max, Bound, BoundOp, Fact, LaunchOf, LaunchValue, Walk, AXES,
    I32_MAX,
};
use crate::intrinsics::{Builtin, Op, WarpOp};
use crate::ir::*;
use crate::types::{Len, Ty};

impl Walk<'_> {
    /// The launch-time value `id` reads, if it is a kernel parameter or a slice parameter's
    /// length, or an immutable variable bound to one.
    pub(super) fn launch_value(&self, id: ExprId) -> Option<Bound> {
        match &self.function.expr(id).kind {
            ExprKind::Local(local) => self
                .launch_bound(*local, false)
                .or_else(|| self.launch_lets.get(local).cloned()),
            ExprKind::Len(base) => match &self.function.expr(*base).kind {
                ExprKind::Local(slice) => self.launch_bound(*slice, true),
                _ => None,
            },
            _ => None,
        }
    }

    /// Kernel parameter `local`'s value (or, `len`, its length), known only at launch.
    pub(super) fn launch_bound(&self, local: LocalId, len: bool) -> Option<Bound> {
        let params = self.params?;
        let names = if len { &params.lens } else { &params.values };
        let (_, name) = names.iter().find(|(l, _)| *l == local)?;
        let of = if len {
            LaunchOf::Len(local)
        } else {
            LaunchOf::Param(local)
        };
        Some(Bound::Param(LaunchValue {
            of,
            cuda: name.clone(),
        }))
    }

    /// The range of component `axis` of an index builtin. In a kernel whose launch bounds the
    /// builtins ([`super::Params::grid`]), the block and grid ones are also below the
    /// launch's extents: a grid-stride loop's index `i` in `while i < n { ..; i +=
    /// grid_size().x; }` then stays below `n` plus the grid's threads, and a row
    /// `block_idx().y * n + i` below the grid's rows times `n`, which fit in 32 bits for most
    /// launches, as CUDA C's `int`s do.
    fn builtin(&self, builtin: Builtin, axis: &str) -> Option<Fact> {
        let fact = builtin_range(builtin, axis)?;
        let index = AXES.iter().position(|a| *a == axis)? as u8;
        if !self.params.is_some_and(|params| params.grid) {
            return Some(fact);
        }
        let extent = |of, cuda: String| Bound::Param(LaunchValue { of, cuda });
        let grid = extent(LaunchOf::Grid(index), format!("gridDim.{axis}"));
        let block = extent(LaunchOf::Block(index), format!("blockDim.{axis}"));
        let threads = Bound::op(BoundOp::Mul, &grid, &block);
        let below = |b: &Bound| Bound::op(BoundOp::Sub, b, &Bound::Num(1));
        let launch = match builtin {
            Builtin::ThreadIdx => return Some(fact),
            Builtin::BlockDim => block,
            Builtin::BlockIdx => below(&grid),
            Builtin::GridDim => grid,
            Builtin::GlobalIdx => below(&threads),
            Builtin::GridSize => threads,
        };
        Some(Fact {
            hi: Bound::op(BoundOp::Min, &fact.hi, &launch),
            ..fact
        })
    }

    /// The fact from the expression's own kind, before its type's limits are applied.
    pub(super) fn raw(&mut self, id: ExprId) -> Option<Fact> {
        let function = self.function;
        match &function.expr(id).kind {
            ExprKind::Lit(Lit::Int { value, .. }) => Some(Fact::between(*value, *value)),
            ExprKind::Call {
                name,
                args,
                turbofish,
                ..
            } if turbofish.is_empty() => self.call(name, args),
            ExprKind::Local(local) => self.signed_current(*local),
            // A table's length: a constant C++ finds by `sizeof`, the launcher by its copy.
            ExprKind::Len(base) => match function.expr(*base).kind {
                ExprKind::Outer(c) if function.outer[c.index as usize].table => {
                    Some(Fact::exact(Bound::Sym(c.cuda_table_len(), c.twin_len())))
                }
                // A shared or local array's length is its type's (`for v in tile.iter()`).
                _ => {
                    let len = match self.types.expr(*base) {
                        Ty::Shared { len, .. } => len,
                        Ty::Array { len, .. } => Some(len),
                        _ => None,
                    };
                    match len {
                        Some(Len::Known(n)) => Some(Fact::exact(Bound::Num(n as u128))),
                        Some(len) => Some(Fact::exact(Bound::Sym(len.cuda(), len.rust()))),
                        None => self.launch_value(id).map(at_most),
                    }
                }
            },
            // A table's name stands for its elements, whose values the analysis never sees.
            ExprKind::Outer(constant) if function.outer[constant.index as usize].table => None,
            ExprKind::Outer(constant) if unsigned_max(self.types.expr(id)).is_some() => {
                Some(Fact::exact(Bound::Sym(constant.cuda(), constant.twin())))
            }
            // A signed constant may be negative, which its symbolic bound cannot say: its fact
            // holds where it is not (converted to `unsigned long long`, a negative value is
            // past `i64::MAX`), which the C++ compiler decides.
            ExprKind::Outer(constant) => {
                let max = signed_max(self.types.expr(id))?;
                let value = Bound::Sym(constant.cuda(), constant.twin());
                Fact::exact(value.clone()).require(value, Bound::Num(max))
            }
            ExprKind::GenericConst(name) if unsigned_max(self.types.expr(id)).is_some() => {
                Some(Fact::exact(Bound::Sym(name.to_string(), name.to_string())))
            }
            ExprKind::Field { base, name, .. } => match &function.expr(*base).kind {
                ExprKind::Builtin(builtin) => self.builtin(*builtin, name),
                _ => None,
            },
            ExprKind::Intrinsic {
                op: Op::Warp(WarpOp::LaneId),
                ..
            } => Some(Fact::varying(0, 31)),
            ExprKind::Intrinsic {
                op: Op::Warp(WarpOp::WarpSize),
                ..
            } => Some(Fact::between(32, 32)),
            // A narrower unsigned value keeps its range; a 64-bit one its fact, so the cast's
            // code is its operand's; a signed one its fact where it has one (then it is not
            // negative). `bool`s have none.
            ExprKind::Cast { expr, .. } => self.signed_fact(*expr),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
            // `-r` of a signed `r` in `[lo, hi]`: `(hi - r) - hi`, shifted by `hi` (the start
            // of `for d in -R..=R`).
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } if signed_max(self.types.expr(id)).is_some() => {
                let r = self.fact(*operand)?;
                let fact = Fact {
                    lo: Bound::Num(0),
                    hi: Bound::op(BoundOp::Sub, &r.hi, &r.lo),
                    shift: r.hi.clone(),
                    ..r
                };
                let shift = fact.shift.clone();
                fact.require(shift, Bound::Num(I32_MAX))
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "min"
                && args.len() == 1
                && unsigned_max(self.types.expr(id)).is_some()
                && (self.fact(*receiver).is_none() || self.fact(args[0]).is_none()) =>
            {
                self.clamped(*receiver, args[0])
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if matches!(method.as_str(), "min" | "max") && args.len() == 1 => {
                let op = if method == "min" {
                    BoundOp::Min
                } else {
                    BoundOp::Max
                };
                self.either(*receiver, args[0], op, op)
            }
            // An unsigned `a.saturating_sub(b)` lies in `[0, a]` (a neighbour clamped at the
            // edge, `(x + k).saturating_sub(R)`).
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "saturating_sub"
                && args.len() == 1
                && unsigned_max(self.types.expr(id)).is_some() =>
            {
                let a = self.fact(*receiver)?;
                let b = self.fact(args[0])?;
                let mut cond = a.cond;
                cond.extend(b.cond);
                Some(Fact {
                    lo: Bound::Num(0),
                    hi: a.hi,
                    cond,
                    varies: a.varies || b.varies,
                    shift: Bound::Num(0),
                })
            }
            // `a.rem_euclid(b)` by a divisor known to be at least 1 lies in `[0, b - 1]`,
            // whatever the sign of `a` (a ring's `(i as isize - 1).rem_euclid(n as isize)`).
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "rem_euclid" && args.len() == 1 => {
                let a = self.signed_fact(*receiver)?;
                let b = self.divisor(args[0])?;
                let mut cond = a.cond;
                cond.extend(b.cond);
                Fact {
                    lo: Bound::Num(0),
                    hi: Bound::op(BoundOp::Sub, &b.hi, &Bound::Num(1)),
                    cond,
                    varies: a.varies || b.varies,
                    shift: Bound::Num(0),
                }
                .require(Bound::Num(1), b.lo)
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                self.fact(*cond);
                self.either(*then_value, *else_value, BoundOp::Min, BoundOp::Max)
            }
            _ => None,
        }
    }

    /// The fact of divisor `id`. A divisor that is a kernel parameter is exactly the launch's
    /// value, so the launch can check it is not zero (`features.len() / nfeatures`: Rodinia's
    /// k-means port went from 0.92 to 0.98 x its CUDA C twin). Elsewhere a parameter keeps 0
    /// as its lower bound: with `nz - 1` narrowed, the 3-D stencil port's z loop ran in
    /// `int`, as its twin's does, and 15% slower on the H100 (cause not found: the loops'
    /// machine code matched).
    fn divisor(&mut self, id: ExprId) -> Option<Fact> {
        let mut fact = self.fact(id)?;
        if let Some(exact) = self.launch_value(id) {
            fact.lo = exact;
        }
        Some(fact)
    }

    /// The unsigned `a.min(b)` where an operand has no fact of its own. A clamp's upper end
    /// `w - 1` of a parameter `w` is bounded where the launch finds `w >= 1` (see
    /// [`Walk::clamp_end`]), which becomes that operand's fact. An operand with none even so
    /// (a coordinate from a float, `(sx as usize).min(w - 1)`) leaves the result at most the
    /// other's `hi`: only the result fits, and that operand is computed in 64 bits (see
    /// `narrow_code`).
    fn clamped(&mut self, a: ExprId, b: ExprId) -> Option<Fact> {
        for id in [a, b] {
            if self.fact(id).is_none() {
                if let Some(end) = self.clamp_end(id) {
                    let fits = end
                        .hi
                        .upper()
                        .map_or(!end.cond.is_empty(), |hi| hi <= I32_MAX);
                    self.ranges.ints[id.0 as usize] = fits;
                    self.ranges.exprs[id.0 as usize] = Some(Some(end));
                }
            }
        }
        match (self.fact(a), self.fact(b)) {
            (Some(_), Some(_)) => self.either(a, b, BoundOp::Min, BoundOp::Min),
            (Some(known), None) | (None, Some(known)) => Some(Fact {
                lo: Bound::Num(0),
                varies: true,
                ..known
            }),
            (None, None) => None,
        }
    }

    /// The fact of `p - k` for a kernel parameter `p`, within `[0, p - k]` where the launch
    /// finds `k <= p`. Only a `min` operand has it: a parameter keeps 0 as its lower bound
    /// elsewhere (see [`Walk::divisor`]).
    fn clamp_end(&mut self, id: ExprId) -> Option<Fact> {
        let ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            rhs,
        } = self.function.expr(id).kind
        else {
            return None;
        };
        let mut l = self.fact(lhs)?;
        l.lo = self.launch_value(lhs)?;
        let r = self.fact(rhs)?;
        Fact {
            lo: Bound::op(BoundOp::Sub, &l.lo, &r.hi),
            hi: Bound::op(BoundOp::Sub, &l.hi, &r.lo),
            cond: l.cond.union(&r.cond).cloned().collect(),
            varies: l.varies || r.varies,
            shift: Bound::Num(0),
        }
        .require(r.hi, l.lo)
    }

    /// One of two values (`a.min(b)`, `a.max(b)`, `if c { a } else { b }`): `lo` and `hi`
    /// combine the operands' bounds. The larger of a signed value that may be negative and
    /// one that may not (`(x as isize - 1).max(0)`, a clamp at an edge) is not negative: at
    /// least the other's `lo`, at most either's `hi`.
    fn either(&mut self, a: ExprId, b: ExprId, lo: BoundOp, hi: BoundOp) -> Option<Fact> {
        let (a, b) = if lo == BoundOp::Max {
            (self.signed_fact(a), self.signed_fact(b))
        } else {
            (self.fact(a), self.fact(b))
        };
        let (a, b) = (a?, b?);
        let (a, b) = match (a.is_shifted(), b.is_shifted()) {
            (false, false) => (a, b),
            (true, false) => (
                Fact {
                    lo: b.lo.clone(),
                    shift: Bound::Num(0),
                    ..a
                },
                b,
            ),
            (false, true) => {
                let b = Fact {
                    lo: a.lo.clone(),
                    shift: Bound::Num(0),
                    ..b
                };
                (a, b)
            }
            (true, true) => return None,
        };
        let mut cond = a.cond;
        cond.extend(b.cond);
        Some(Fact {
            lo: Bound::op(lo, &a.lo, &b.lo),
            hi: Bound::op(hi, &a.hi, &b.hi),
            cond,
            varies: a.varies || b.varies,
            shift: Bound::Num(0),
        })
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> Option<Fact> {
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            // A shift's amount may have any integer type; only its range matters.
            let amount = self.shift_amount(rhs);
            let value = self.fact(lhs)?;
            // Whatever the amount, a right shift leaves no more than it found: the value a
            // called function returns (`i >> LOG_BANKS`) may say so, where the code that
            // computes it is its own, in 64 bits (a 32-bit shift would mask the amount
            // otherwise).
            if amount.is_none() && op == BinOp::Shr && self.for_call {
                return Some(Fact {
                    lo: Bound::Num(0),
                    ..value
                });
            }
            return shift(op, value, amount?);
        }
        if matches!(op, BinOp::Add | BinOp::Sub) && signed_max(self.types.expr(lhs)).is_some() {
            let l = self.signed_fact(lhs);
            let r = self.signed_fact(rhs);
            return signed_sum(op, l?, r?);
        }
        let l = self.fact(lhs);
        let r = if matches!(op, BinOp::Div | BinOp::Rem) {
            self.divisor(rhs)
        } else {
            self.fact(rhs)
        };
        let (l, r) = (l?, r?);
        let mut cond = l.cond.clone();
        cond.extend(r.cond.iter().cloned());
        let varies = l.varies || r.varies;
        let fact = |lo: Bound, hi: Bound| Fact {
            lo,
            hi,
            cond: cond.clone(),
            varies,
            shift: Bound::Num(0),
        };
        match op {
            BinOp::Add => Some(fact(
                Bound::op(BoundOp::Add, &l.lo, &r.lo),
                Bound::op(BoundOp::Add, &l.hi, &r.hi),
            )),
            BinOp::Mul => Some(fact(
                Bound::op(BoundOp::Mul, &l.lo, &r.lo),
                Bound::op(BoundOp::Mul, &l.hi, &r.hi),
            )),
            // Only where it cannot wrap: the wrapped value needs all 64 bits.
            BinOp::Sub => fact(
                Bound::op(BoundOp::Sub, &l.lo, &r.hi),
                Bound::op(BoundOp::Sub, &l.hi, &r.lo),
            )
            .require(r.hi.clone(), l.lo.clone()),
            // Only by a divisor that is never zero: the hardware's quotient by zero depends on
            // the width.
            BinOp::Div => fact(
                Bound::op(BoundOp::Div, &l.lo, &r.hi),
                Bound::op(BoundOp::Div, &l.hi, &r.lo),
            )
            .require(Bound::Num(1), r.lo.clone()),
            BinOp::Rem => fact(
                Bound::Num(0),
                Bound::op(
                    BoundOp::Min,
                    &l.hi,
                    &Bound::op(BoundOp::Sub, &r.hi, &Bound::Num(1)),
                ),
            )
            .require(Bound::Num(1), r.lo.clone()),
            BinOp::BitAnd => Some(fact(Bound::Num(0), Bound::op(BoundOp::Min, &l.hi, &r.hi))),
            // `a | b` and `a ^ b` are at most `a + b`.
            BinOp::BitOr | BinOp::BitXor => {
                Some(fact(Bound::Num(0), Bound::op(BoundOp::Add, &l.hi, &r.hi)))
            }
            BinOp::Shl | BinOp::Shr => None,
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::And
            | BinOp::Or => None,
        }
    }
}

impl Walk<'_> {
    /// The range of a shift amount known to be below 32 (so the 32-bit shift masks it as the
    /// 64-bit one does): an unsigned value's, or a literal's of any type.
    fn shift_amount(&mut self, rhs: ExprId) -> Option<(u32, u32)> {
        if let ExprKind::Lit(Lit::Int { value, .. }) = &self.function.expr(rhs).kind {
            return (*value < 32).then_some((*value as u32, *value as u32));
        }
        let fact = self.fact(rhs)?;
        match (&fact.lo, fact.hi_num()) {
            (Bound::Num(lo), Some(hi)) if hi < 32 && fact.cond.is_empty() => {
                Some((*lo as u32, hi as u32))
            }
            _ => None,
        }
    }
}

/// `l + r` or `l - r` of signed values, each `x - shift` (see [`Fact::shift`]). A sum adds
/// the `x`s and the shifts; a difference whose `r` may exceed `l` (`row as i64 - radius`)
/// is `(x_l + (hi_r - r)) - (shift_l + hi_r)`, so its `x` lies in `[lo_l, hi_l + hi_r -
/// lo_r]` and its shift is `shift_l + hi_r`. A shift is kept within `i32::MAX` by the
/// condition, so the value is an `int`'s wherever the condition holds; a difference that
/// provably is not negative is the unsigned one.
fn signed_sum(op: BinOp, l: Fact, r: Fact) -> Option<Fact> {
    let mut cond = l.cond.clone();
    cond.extend(r.cond.iter().cloned());
    let varies = l.varies || r.varies;
    let (lo, hi, shift) = if op == BinOp::Add {
        (
            Bound::op(BoundOp::Add, &l.lo, &r.lo),
            Bound::op(BoundOp::Add, &l.hi, &r.hi),
            Bound::op(BoundOp::Add, &l.shift, &r.shift),
        )
    } else if r.is_shifted() {
        return None;
    } else if !l.is_shifted() && r.hi.upper().is_some_and(|hi| hi <= l.lo.lower()) {
        (
            Bound::op(BoundOp::Sub, &l.lo, &r.hi),
            Bound::op(BoundOp::Sub, &l.hi, &r.lo),
            Bound::Num(0),
        )
    } else {
        (
            l.lo.clone(),
            Bound::op(BoundOp::Add, &l.hi, &Bound::op(BoundOp::Sub, &r.hi, &r.lo)),
            Bound::op(BoundOp::Add, &l.shift, &r.hi),
        )
    };
    let fact = Fact {
        lo,
        hi,
        cond,
        varies,
        shift: shift.clone(),
    };
    if shift == Bound::Num(0) {
        Some(fact)
    } else {
        fact.require(shift, Bound::Num(I32_MAX))
    }
}

/// `l << amount` or `l >> amount`, the amount in `lo_amount..=hi_amount`.
fn shift(op: BinOp, l: Fact, (lo_amount, hi_amount): (u32, u32)) -> Option<Fact> {
    let (lo, hi) = if op == BinOp::Shl {
        (
            Bound::op(BoundOp::Mul, &l.lo, &Bound::Num(1u128 << lo_amount)),
            Bound::op(BoundOp::Mul, &l.hi, &Bound::Num(1u128 << hi_amount)),
        )
    } else {
        (
            Bound::op(BoundOp::Div, &l.lo, &Bound::Num(1u128 << hi_amount)),
            Bound::op(BoundOp::Div, &l.hi, &Bound::Num(1u128 << lo_amount)),
        )
    };
    Some(Fact { lo, hi, ..l })
}

/// The range of component `axis` of an index builtin: CUDA's limits on blocks (1024 threads,
/// 64 along z) and grids (2^31 - 1 blocks along x, 65535 along y and z).
fn builtin_range(builtin: Builtin, axis: &str) -> Option<Fact> {
    let (threads, blocks): (u128, u128) = match axis {
        "x" => (1024, (1 << 31) - 1),
        "y" => (1024, 65535),
        "z" => (64, 65535),
        _ => return None,
    };
    Some(match builtin {
        Builtin::ThreadIdx => Fact::varying(0, threads - 1),
        Builtin::BlockDim => Fact::varying(1, threads),
        Builtin::BlockIdx => Fact::varying(0, blocks - 1),
        Builtin::GridDim => Fact::varying(1, blocks),
        Builtin::GlobalIdx => Fact::varying(0, (blocks - 1) * threads + threads - 1),
        Builtin::GridSize => Fact::varying(1, blocks * threads),
    })
}
