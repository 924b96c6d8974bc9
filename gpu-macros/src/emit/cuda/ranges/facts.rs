//! What the range analysis knows of a value: bounds, spelled as numbers, constants only C++
//! knows or values only the launch knows, and the condition under which they hold.

use crate::ir::LocalId;
use std::collections::BTreeSet;
use std::rc::Rc;

pub(super) const U32_MAX: u128 = u32::MAX as u128;
/// The largest narrowed value: narrowed code computes in `int` (see `narrow`).
pub const I32_MAX: u128 = i32::MAX as u128;
pub(super) const U64_MAX: u128 = u64::MAX as u128;

/// A bound of an unsigned value: a number, or an expression over constants that only the C++
/// compiler knows.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bound {
    Num(u128),
    /// A constant that only the compilers know: as the CUDA source spells it (an outer
    /// constant's placeholder, a const generic's name), then as the launcher's Rust does (the
    /// host module's typed copy, the const generic).
    Sym(String, String),
    /// A kernel parameter's value or a slice parameter's length: known only at run time, so
    /// a fit that depends on it is decided at launch.
    Param(LaunchValue),
    Op(BoundOp, Rc<Bound>, Rc<Bound>),
}

/// The index builtins' components, by axis.
pub const AXES: [&str; 3] = ["x", "y", "z"];

/// A value the launch knows, which the CUDA source names `cuda`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LaunchValue {
    pub of: LaunchOf,
    pub cuda: String,
}

/// Where a launch-time value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaunchOf {
    /// Parameter `local`'s value.
    Param(LocalId),
    /// Slice parameter `local`'s length.
    Len(LocalId),
    /// The launch's blocks along an axis (0: x, 1: y, 2: z).
    Grid(u8),
    /// The launch's threads per block along an axis.
    Block(u8),
}

/// Arithmetic on bounds; saturating, so an overflow never makes a bound look small.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BoundOp {
    Add,
    /// Saturates at 0.
    Sub,
    Mul,
    /// Dividing by 0 leaves the dividend.
    Div,
    Min,
    Max,
}

impl Bound {
    pub(in crate::emit::cuda) fn op(op: BoundOp, a: &Bound, b: &Bound) -> Bound {
        match (a, b) {
            (Bound::Num(x), Bound::Num(y)) => Bound::Num(match op {
                BoundOp::Add => x.saturating_add(*y),
                BoundOp::Sub => x.saturating_sub(*y),
                BoundOp::Mul => x.saturating_mul(*y),
                BoundOp::Div => x.checked_div(*y).unwrap_or(*x),
                BoundOp::Min => *x.min(y),
                BoundOp::Max => *x.max(y),
            }),
            // Identities, so a condition reads as written: `N`, not `0 + N`.
            _ if op == BoundOp::Sub && a == b => Bound::Num(0),
            (Bound::Num(0), _) if op == BoundOp::Add => b.clone(),
            (Bound::Num(1), _) if op == BoundOp::Mul => b.clone(),
            (_, Bound::Num(0)) if matches!(op, BoundOp::Add | BoundOp::Sub) => a.clone(),
            (_, Bound::Num(1)) if matches!(op, BoundOp::Mul | BoundOp::Div) => a.clone(),
            // The one that is always the larger (or smaller), so joins stay short.
            _ if matches!(op, BoundOp::Max | BoundOp::Min) && (a == b || a.dominates(b)) => {
                if op == BoundOp::Max { a } else { b }.clone()
            }
            _ if matches!(op, BoundOp::Max | BoundOp::Min) && b.dominates(a) => {
                if op == BoundOp::Max { b } else { a }.clone()
            }
            (_, Bound::Num(0)) if op == BoundOp::Max => a.clone(),
            (Bound::Num(0), _) if op == BoundOp::Max => b.clone(),
            _ => Bound::Op(op, Rc::new(a.clone()), Rc::new(b.clone())),
        }
    }

    /// A number the bound never exceeds, where the numbers in it give one.
    pub fn upper(&self) -> Option<u128> {
        match self {
            Bound::Num(n) => Some(*n),
            Bound::Sym(..) | Bound::Param(_) => None,
            Bound::Op(op, a, b) => match op {
                BoundOp::Add => Some(a.upper()?.saturating_add(b.upper()?)),
                BoundOp::Mul => Some(a.upper()?.saturating_mul(b.upper()?)),
                BoundOp::Sub | BoundOp::Div => a.upper(),
                BoundOp::Min => match (a.upper(), b.upper()) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
                BoundOp::Max => Some(a.upper()?.max(b.upper()?)),
            },
        }
    }

    /// A number the bound is never below (0 where nothing better is known).
    pub(super) fn lower(&self) -> u128 {
        match self {
            Bound::Num(n) => *n,
            Bound::Sym(..) | Bound::Param(_) => 0,
            Bound::Op(op, a, b) => match op {
                BoundOp::Add => a.lower().saturating_add(b.lower()),
                BoundOp::Mul => a.lower().saturating_mul(b.lower()),
                BoundOp::Min => a.lower().min(b.lower()),
                BoundOp::Max => a.lower().max(b.lower()),
                BoundOp::Sub | BoundOp::Div => 0,
            },
        }
    }

    /// Whether `self >= other` always, seen from the bound's shape: a sum includes each of its
    /// terms, a product by a non-zero factor each of its factors, and a difference or quotient
    /// is at most its first operand.
    pub(super) fn dominates(&self, other: &Bound) -> bool {
        if self == other {
            return true;
        }
        // `a - b` and `a / b` never exceed `a`.
        if let Bound::Op(BoundOp::Sub | BoundOp::Div, a, _) = other {
            if self.dominates(a) {
                return true;
            }
        }
        match other {
            // A midpoint, `(a + b) / n` for `n >= 2`, never exceeds the larger of `a` and `b`.
            Bound::Op(BoundOp::Div, sum, n) if n.lower() >= 2 => {
                if let Bound::Op(BoundOp::Add, a, b) = &**sum {
                    if self.dominates(a) && self.dominates(b) {
                        return true;
                    }
                }
            }
            // The larger of two is one of them, the smaller at most either.
            Bound::Op(BoundOp::Max, a, b) if self.dominates(a) && self.dominates(b) => {
                return true;
            }
            Bound::Op(BoundOp::Min, a, b) if self.dominates(a) || self.dominates(b) => {
                return true;
            }
            _ => {}
        }
        // The same monotone operation on operands that each dominate.
        if let (Bound::Op(op, a, b), Bound::Op(other_op, c, d)) = (self, other) {
            if op == other_op
                && matches!(
                    op,
                    BoundOp::Add | BoundOp::Mul | BoundOp::Min | BoundOp::Max
                )
                && a.dominates(c)
                && b.dominates(d)
            {
                return true;
            }
        }
        match self {
            Bound::Op(BoundOp::Add | BoundOp::Max, a, b) => {
                a.dominates(other) || b.dominates(other)
            }
            Bound::Op(BoundOp::Mul, a, b) => {
                (b.lower() >= 1 && a.dominates(other)) || (a.lower() >= 1 && b.dominates(other))
            }
            Bound::Num(_) | Bound::Sym(..) | Bound::Param(_) | Bound::Op(..) => false,
        }
    }

    /// The bound as a C++ constant expression of type `unsigned long long`, saturating as
    /// the numbers here do (`rs_bound_*` in the `rs_narrow` helper).
    pub fn cuda(&self) -> String {
        match self {
            Bound::Num(n) => format!("{}ull", (*n).min(U64_MAX)),
            Bound::Sym(code, _) => format!("(unsigned long long)({code})"),
            Bound::Param(value) => format!("(unsigned long long)({})", value.cuda),
            Bound::Op(op, a, b) => {
                let name = match op {
                    BoundOp::Add => "add",
                    BoundOp::Sub => "sub",
                    BoundOp::Mul => "mul",
                    BoundOp::Div => "div",
                    BoundOp::Min => "min",
                    BoundOp::Max => "max",
                };
                format!("rs_bound_{name}({}, {})", a.cuda(), b.cuda())
            }
        }
    }

    /// Whether the bound names a parameter, so only the launch knows it.
    pub fn at_run_time(&self) -> bool {
        match self {
            Bound::Param(_) => true,
            Bound::Num(_) | Bound::Sym(..) => false,
            Bound::Op(_, a, b) => a.at_run_time() || b.at_run_time(),
        }
    }
}

/// `lhs <= rhs`: part of the condition under which a fact holds.
pub type Atom = (Bound, Bound);

/// What is known of an integer value: it is `x - shift` for an `x` in `[lo, hi]`, and (for
/// 64-bit values) it and every intermediate result fit in 32 bits, provided each atom of
/// `cond` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub lo: Bound,
    pub hi: Bound,
    pub cond: BTreeSet<Atom>,
    /// Whether the value depends on the thread or on data: a computation of constants alone
    /// gains nothing from narrowing (the compiler folds it), so it is left as written.
    pub varies: bool,
    /// How far below `[lo, hi]` the value is: 0, except for a signed value that may be
    /// negative (`x as i64 - radius`), whose condition then also holds the shift within
    /// `i32::MAX`, so the value is an `int`'s where the condition holds. Only sums and
    /// differences of signed values carry one; every other use of such a fact sees none (see
    /// `Walk::fact` and `Walk::signed_fact`).
    pub shift: Bound,
}

impl Fact {
    pub(super) fn between(lo: u128, hi: u128) -> Fact {
        Fact {
            lo: Bound::Num(lo),
            hi: Bound::Num(hi),
            cond: BTreeSet::new(),
            varies: false,
            shift: Bound::Num(0),
        }
    }

    pub(super) fn exact(value: Bound) -> Fact {
        Fact {
            lo: value.clone(),
            hi: value,
            cond: BTreeSet::new(),
            varies: false,
            shift: Bound::Num(0),
        }
    }

    /// A fact of values that may be either `self`'s or `other`'s, under both conditions: the
    /// type two values are compared in.
    pub fn covering(&self, other: &Fact) -> Fact {
        Fact {
            lo: Bound::op(BoundOp::Min, &self.lo, &other.lo),
            hi: Bound::op(BoundOp::Max, &self.hi, &other.hi),
            cond: self.cond.union(&other.cond).cloned().collect(),
            varies: self.varies || other.varies,
            shift: Bound::op(BoundOp::Max, &self.shift, &other.shift),
        }
    }

    /// Whether the value may lie below `lo` (see [`Fact::shift`]).
    pub fn is_shifted(&self) -> bool {
        self.shift != Bound::Num(0)
    }

    /// A value of the thread's or of data, within `[lo, hi]`.
    pub(super) fn varying(lo: u128, hi: u128) -> Fact {
        Fact {
            varies: true,
            ..Fact::between(lo, hi)
        }
    }

    /// The fact with `lhs <= rhs` added to its condition; `None` when that is known false.
    /// An atom the numbers already prove, or one implied by an atom of the condition, is left
    /// out, so the C++ condition stays short.
    pub(super) fn require(mut self, lhs: Bound, rhs: Bound) -> Option<Fact> {
        if let (Bound::Num(a), Bound::Num(b)) = (&lhs, &rhs) {
            return (a <= b).then_some(self);
        }
        // A value the launch knows held to 0 (`k - rows` where nothing bounds `k` below by
        // `rows`) holds only for empty launches; as a condition of the launch's one flag it
        // would keep every other fact of the kernel from ever holding.
        if rhs == Bound::Num(0) && lhs.at_run_time() && lhs.lower() == 0 {
            return None;
        }
        if lhs.upper().is_some_and(|upper| upper <= rhs.lower()) {
            return Some(self);
        }
        if self
            .cond
            .iter()
            .any(|(other, bound)| *bound == rhs && other.dominates(&lhs))
        {
            return Some(self);
        }
        self.cond
            .retain(|(other, bound)| !(*bound == rhs && lhs.dominates(other)));
        self.cond.insert((lhs, rhs));
        Some(self)
    }

    /// Whether the bounds are numbers and the fact holds unconditionally.
    pub(super) fn is_static(&self) -> bool {
        self.cond.is_empty() && matches!(self.lo, Bound::Num(_)) && matches!(self.hi, Bound::Num(_))
    }

    /// The numeric upper bound, where known.
    pub fn hi_num(&self) -> Option<u128> {
        match self.hi {
            Bound::Num(n) => Some(n),
            Bound::Sym(..) | Bound::Param(_) | Bound::Op(..) => None,
        }
    }
}

/// `atoms` with every bound of `u32::MAX` (a fit in 32 bits) tightened to `i32::MAX`: where
/// they hold, the values fit in `int`.
pub fn for_int(atoms: &BTreeSet<Atom>) -> BTreeSet<Atom> {
    atoms
        .iter()
        .map(|(lhs, rhs)| match rhs {
            Bound::Num(U32_MAX) => (lhs.clone(), Bound::Num(I32_MAX)),
            _ => (lhs.clone(), rhs.clone()),
        })
        .collect()
}

/// `atoms` without the ones that others imply, so a condition is checked once.
pub fn minimal(atoms: &BTreeSet<Atom>) -> BTreeSet<Atom> {
    let mut fact = Fact::between(0, 0);
    // The widest first, so each narrower one is seen to be implied.
    let mut sorted: Vec<&Atom> = atoms.iter().collect();
    sorted.sort_by_key(|(lhs, _)| {
        std::cmp::Reverse(
            atoms
                .iter()
                .filter(|(other, _)| lhs.dominates(other))
                .count(),
        )
    });
    for (lhs, rhs) in sorted {
        fact = match fact.require(lhs.clone(), rhs.clone()) {
            Some(fact) => fact,
            None => return atoms.clone(),
        };
    }
    fact.cond
}

/// The condition as one C++ boolean constant expression (`true` when empty).
pub fn cond_cuda(cond: &BTreeSet<Atom>) -> String {
    if cond.is_empty() {
        return "true".to_string();
    }
    cond.iter()
        .map(|(a, b)| format!("{} <= {}", a.cuda(), b.cuda()))
        .collect::<Vec<_>>()
        .join(" && ")
}
