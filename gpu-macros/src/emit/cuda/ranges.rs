//! Value ranges of unsigned integer expressions, so index arithmetic that provably fits in 32
//! bits is computed in `unsigned int` (see [`super::narrow`]), as CUDA C code computes it in
//! `int`.
//!
//! **The invariant**: an expression of type `usize`/`u64` that gets a [`Fact`] is one whose
//! value, and the value of every intermediate result computed on the way to it, lies in
//! `[0, u32::MAX]` whenever the fact's condition holds. Computed in 32 bits, such an expression
//! gives exactly the 64-bit result (no intermediate wraps in either width), so widening it
//! where a 64-bit value is needed is bit-identical to what Rust computes. Where the condition
//! does not hold, the emitter computes the expression in 64 bits, as before.
//!
//! It lives in the CUDA emitter, not the checker: nothing but the CUDA code's integer widths
//! depends on it (the CPU twin is Rust and computes as Rust does), and its bounds are spelled
//! in C++ where they name a constant whose value only the C++ compiler sees.
//!
//! Sources of facts: the index builtins (`thread_idx().x < 1024`, `block_idx().x < 2^31 - 1`,
//! ...), `lane_id()` and `warp_size()`, integer literals, constants (a module `const` or a
//! const generic, whose value only reaches the CUDA source, so its bound is symbolic and the
//! fit is decided by the C++ compiler), casts of narrower unsigned values, immutable `let`s,
//! and the variables of range `for` loops whose bounds are bounded. Mutable variables,
//! parameters, slice lengths, anything read from memory (shared memory included: an index
//! into it proves nothing, as it may be out of bounds) and signed values are unknown.
//! Subtraction is narrowed only where it provably does not wrap, and division only by a
//! provably non-zero divisor, so the hardware's results agree too.

use crate::check::Types;
use crate::intrinsics::{Builtin, Op, WarpOp};
use crate::ir::*;
use crate::types::{Scalar, Ty};
use std::collections::BTreeSet;
use std::rc::Rc;

const U32_MAX: u128 = u32::MAX as u128;
const U64_MAX: u128 = u64::MAX as u128;

/// A bound of an unsigned value: a number, or an expression over constants that only the C++
/// compiler knows.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bound {
    Num(u128),
    /// A constant as the CUDA source spells it: an outer constant's placeholder, or a const
    /// generic's name.
    Sym(String),
    Op(BoundOp, Rc<Bound>, Rc<Bound>),
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
    fn op(op: BoundOp, a: &Bound, b: &Bound) -> Bound {
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
            (Bound::Num(0), _) if op == BoundOp::Add => b.clone(),
            (Bound::Num(1), _) if op == BoundOp::Mul => b.clone(),
            (_, Bound::Num(0)) if matches!(op, BoundOp::Add | BoundOp::Sub) => a.clone(),
            (_, Bound::Num(1)) if matches!(op, BoundOp::Mul | BoundOp::Div) => a.clone(),
            _ => Bound::Op(op, Rc::new(a.clone()), Rc::new(b.clone())),
        }
    }

    /// A number the bound never exceeds, where the numbers in it give one.
    fn upper(&self) -> Option<u128> {
        match self {
            Bound::Num(n) => Some(*n),
            Bound::Sym(_) => None,
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
    fn lower(&self) -> u128 {
        match self {
            Bound::Num(n) => *n,
            Bound::Sym(_) => 0,
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
    fn dominates(&self, other: &Bound) -> bool {
        if self == other {
            return true;
        }
        // `a - b` and `a / b` never exceed `a`.
        if let Bound::Op(BoundOp::Sub | BoundOp::Div, a, _) = other {
            if self.dominates(a) {
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
            Bound::Num(_) | Bound::Sym(_) | Bound::Op(..) => false,
        }
    }

    /// The bound as a C++ constant expression of type `unsigned long long`, saturating as
    /// the numbers here do (`rs_bound_*` in the `rs_narrow` helper).
    pub fn cuda(&self) -> String {
        match self {
            Bound::Num(n) => format!("{}ull", (*n).min(U64_MAX)),
            Bound::Sym(code) => format!("(unsigned long long)({code})"),
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
}

/// `lhs <= rhs`: part of the condition under which a fact holds.
pub type Atom = (Bound, Bound);

/// What is known of an unsigned value: it lies in `[lo, hi]`, and (for `usize`/`u64`) it and
/// every intermediate result fit in 32 bits, provided each atom of `cond` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub lo: Bound,
    pub hi: Bound,
    pub cond: BTreeSet<Atom>,
    /// Whether the value depends on the thread or on data: a computation of constants alone
    /// gains nothing from narrowing (the compiler folds it), so it is left as written.
    pub varies: bool,
}

impl Fact {
    fn between(lo: u128, hi: u128) -> Fact {
        Fact {
            lo: Bound::Num(lo),
            hi: Bound::Num(hi),
            cond: BTreeSet::new(),
            varies: false,
        }
    }

    fn exact(value: Bound) -> Fact {
        Fact {
            lo: value.clone(),
            hi: value,
            cond: BTreeSet::new(),
            varies: false,
        }
    }

    /// A value of the thread's or of data, within `[lo, hi]`.
    fn varying(lo: u128, hi: u128) -> Fact {
        Fact {
            varies: true,
            ..Fact::between(lo, hi)
        }
    }

    /// The fact with `lhs <= rhs` added to its condition; `None` when that is known false.
    /// An atom the numbers already prove, or one implied by an atom of the condition, is left
    /// out, so the C++ condition stays short.
    fn require(mut self, lhs: Bound, rhs: Bound) -> Option<Fact> {
        if let (Bound::Num(a), Bound::Num(b)) = (&lhs, &rhs) {
            return (a <= b).then_some(self);
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
    fn is_static(&self) -> bool {
        self.cond.is_empty() && matches!(self.lo, Bound::Num(_)) && matches!(self.hi, Bound::Num(_))
    }

    /// The numeric upper bound, where known.
    pub fn hi_num(&self) -> Option<u128> {
        match self.hi {
            Bound::Num(n) => Some(n),
            Bound::Sym(_) | Bound::Op(..) => None,
        }
    }
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

/// The facts of one function's expressions and variables.
pub struct Ranges {
    exprs: Vec<Option<Option<Fact>>>,
    locals: Vec<Option<Fact>>,
}

/// The unsigned integer types and their maxima; `None` for every other type.
fn unsigned_max(ty: Ty) -> Option<u128> {
    match ty {
        Ty::Scalar(Scalar::U8) => Some(u8::MAX as u128),
        Ty::Scalar(Scalar::U16) => Some(u16::MAX as u128),
        Ty::Scalar(Scalar::U32) => Some(U32_MAX),
        Ty::Scalar(Scalar::U64 | Scalar::Usize) => Some(U64_MAX),
        _ => None,
    }
}

/// Whether `ty` is a 64-bit unsigned type: the ones the emitter may narrow.
pub fn is_wide(ty: Ty) -> bool {
    matches!(ty, Ty::Scalar(Scalar::U64 | Scalar::Usize))
}

impl Ranges {
    /// Analyses `function`: every variable in statement order, then every expression.
    pub fn of(function: &Function, types: &Types) -> Ranges {
        let mut ranges = Ranges {
            exprs: vec![None; function.exprs.len()],
            locals: vec![None; function.locals.len()],
        };
        let mut walk = Walk {
            function,
            types,
            ranges: &mut ranges,
        };
        walk.block(&function.body);
        for index in 0..function.exprs.len() {
            walk.fact(ExprId(index as u32));
        }
        ranges
    }

    /// The fact of expression `id`, if one is proved.
    pub fn expr(&self, id: ExprId) -> Option<&Fact> {
        self.exprs.get(id.0 as usize)?.as_ref()?.as_ref()
    }

    /// The fact of variable `local`, if one is proved.
    pub fn local(&self, local: LocalId) -> Option<&Fact> {
        self.locals.get(local.0 as usize)?.as_ref()
    }
}

/// The analysis of one function, in statement order so a variable's fact is known before its
/// uses.
struct Walk<'a> {
    function: &'a Function,
    types: &'a Types,
    ranges: &'a mut Ranges,
}

impl Walk<'_> {
    fn block(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { local, init } => {
                let fact = self.fact(*init);
                if !self.function.local(*local).mutable {
                    self.ranges.locals[local.0 as usize] = fact;
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                inclusive,
                ..
            } => {
                let start_fact = self.fact(*start);
                let end_fact = self.fact(*end);
                if let Some(step) = step {
                    self.fact(*step);
                }
                let fact = match (start_fact, end_fact) {
                    (Some(start), Some(end)) if !self.function.local(*var).mutable => {
                        // The variable stays below `end` (or reaches it, inclusive).
                        let hi = if *inclusive {
                            end.hi.clone()
                        } else {
                            Bound::op(BoundOp::Sub, &end.hi, &Bound::Num(1))
                        };
                        let mut cond = start.cond;
                        cond.extend(end.cond);
                        Some(Fact {
                            lo: start.lo,
                            hi,
                            cond,
                            varies: true,
                        })
                    }
                    _ => None,
                };
                self.ranges.locals[var.0 as usize] = fact;
                self.block(body);
            }
            StmtKind::LetTuple { init, .. } => {
                self.fact(*init);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.fact(*cond);
                self.block(then_block);
                if let Some(block) = else_block {
                    self.block(block);
                }
            }
            StmtKind::While { cond, body, .. } => {
                self.fact(*cond);
                self.block(body);
            }
            StmtKind::Loop { body, .. } | StmtKind::Block(body) => self.block(body),
            StmtKind::Match { scrutinee, arms } => {
                self.fact(*scrutinee);
                for (_, body) in arms {
                    self.block(body);
                }
            }
            StmtKind::Assign { place, value, .. } => {
                self.fact(*place);
                self.fact(*value);
            }
            StmtKind::Return(Some(id)) | StmtKind::Expr(id) => {
                self.fact(*id);
            }
            StmtKind::Return(None)
            | StmtKind::Break(_)
            | StmtKind::Continue(_)
            | StmtKind::Assert(_)
            | StmtKind::Print { .. } => {}
        }
    }

    /// The fact of `id`, computed once.
    fn fact(&mut self, id: ExprId) -> Option<Fact> {
        if let Some(known) = self.ranges.exprs.get(id.0 as usize)? {
            return known.clone();
        }
        let fact = self.compute(id);
        self.ranges.exprs[id.0 as usize] = Some(fact.clone());
        fact
    }

    fn compute(&mut self, id: ExprId) -> Option<Fact> {
        let ty = self.types.expr(id);
        if let ExprKind::Closure { body, .. } = &self.function.expr(id).kind {
            self.block(body);
            return None;
        }
        let max = unsigned_max(ty)?;
        let fact = self.raw(id);
        if is_wide(ty) {
            // Narrowed only if it (and so, inductively, every intermediate) fits in 32 bits.
            let fact = fact?;
            let hi = fact.hi.clone();
            return fact.require(hi, Bound::Num(U32_MAX));
        }
        // A narrower type computes in its own width: a bound past its maximum, or one only
        // C++ knows, says only that the value is one of the type's.
        Some(match fact {
            Some(fact) if fact.is_static() && fact.hi_num().is_some_and(|hi| hi <= max) => fact,
            _ => Fact::varying(0, max),
        })
    }

    /// The fact from the expression's own kind, before its type's limits are applied.
    fn raw(&mut self, id: ExprId) -> Option<Fact> {
        let function = self.function;
        match &function.expr(id).kind {
            ExprKind::Lit(Lit::Int { value, .. }) => Some(Fact::between(*value, *value)),
            ExprKind::Local(local) => self.ranges.locals.get(local.0 as usize)?.clone(),
            ExprKind::Outer(constant) => Some(Fact::exact(Bound::Sym(constant.cuda()))),
            ExprKind::GenericConst(name) => Some(Fact::exact(Bound::Sym(name.to_string()))),
            ExprKind::Field { base, name, .. } => match &function.expr(*base).kind {
                ExprKind::Builtin(builtin) => builtin_range(*builtin, name),
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
            // code is its operand's. Signed values and `bool`s have none.
            ExprKind::Cast { expr, .. } => self.fact(*expr),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
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

    /// One of two values (`a.min(b)`, `a.max(b)`, `if c { a } else { b }`): `lo` and `hi`
    /// combine the operands' bounds.
    fn either(&mut self, a: ExprId, b: ExprId, lo: BoundOp, hi: BoundOp) -> Option<Fact> {
        let a = self.fact(a);
        let b = self.fact(b);
        let (a, b) = (a?, b?);
        let mut cond = a.cond;
        cond.extend(b.cond);
        Some(Fact {
            lo: Bound::op(lo, &a.lo, &b.lo),
            hi: Bound::op(hi, &a.hi, &b.hi),
            cond,
            varies: a.varies || b.varies,
        })
    }

    fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> Option<Fact> {
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            // A shift's amount may have any integer type; only its range matters.
            let amount = self.shift_amount(rhs);
            return shift(op, self.fact(lhs)?, amount?);
        }
        let l = self.fact(lhs);
        let r = self.fact(rhs);
        let (l, r) = (l?, r?);
        let mut cond = l.cond.clone();
        cond.extend(r.cond.iter().cloned());
        let varies = l.varies || r.varies;
        let fact = |lo: Bound, hi: Bound| Fact {
            lo,
            hi,
            cond: cond.clone(),
            varies,
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
