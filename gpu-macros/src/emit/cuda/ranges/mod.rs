//! Value ranges of integer expressions, so index arithmetic that provably fits in 32
//! bits is computed in `unsigned int` (see [`super::narrow`]), as CUDA C code computes it in
//! `int`.
//!
//! **The invariant**: an expression of type `usize`/`u64` that gets a [`Fact`] is one whose
//! value, and the value of every intermediate result computed on the way to it, lies in
//! `[0, u32::MAX]` whenever the fact's condition holds (an `i64`/`isize` one in
//! `[-i32::MAX, u32::MAX]`, below 0 only by its shift). Computed in 32 bits, such an expression
//! gives exactly the 64-bit result (no intermediate wraps in either width), so widening it
//! where a 64-bit value is needed is bit-identical to what Rust computes. The emitter computes
//! in `int` what stays within `int`'s range (see [`super::narrow`]). Where the condition
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
//! the variables of range `for` loops whose bounds are bounded, conditions ([`guards`]:
//! `if x < width`, `if i >= n { return; }`, a `while` condition), mutable variables whose
//! every write stays within a bound ([`mutable`]), the parameters of closures called in place
//! ([`closures`]), and, in a kernel, its 64-bit parameters and slice lengths, whose bounds
//! only the launch knows, so the fit is decided there ([`super::narrow`]). Anything read
//! from memory (shared memory included: an index into it proves nothing, as it may be out of
//! bounds) is unknown. Subtraction is narrowed only where it provably does not wrap, and
//! division only by a provably non-zero divisor, so the hardware's results agree too.
//!
//! A signed value may be negative: a sum or difference of signed values (`x as i64 - radius`,
//! then `+ j as i64`) has a fact shifted below 0 by at most `i32::MAX` ([`Fact::shift`]), so
//! an `i64` or `isize` neighbour offset computes in `int` as CUDA C's does. Every other use
//! (a product, a cast to an unsigned type, a comparison's bound) sees such a value as unknown,
//! until a condition holds it between 0 and a bound (`if r >= 0 && r < height as i64`); see
//! [`signed_max`].
//!
//! A variable whose writes keep creeping up after its widenings may stop at another
//! variable's bound, where the next round checks it stays (a binary search's `lo = mid`, with
//! `mid = (lo + hi) / 2`, creeps towards `hi`'s first bound); see `mutable::settle`.
//!
//! A variable doubled once an iteration of a loop whose trips are bounded (the work-efficient
//! scan's `offset`, doubled while `d` halves to 0) is bounded by counting the trips
//! ([`trips`]); where a later statement of its block halves it, the statements before that
//! one see the bound of the writes before them, which is at least its first value
//! ([`trips::Phase`]). A variable written only by statements of its own block
//! ([`mutable::Writes::straight`]) is, at each read, the value of the write before it.
//!
//! The index builtins are bounded by the launch's grid and block as well as by CUDA's limits
//! (the hardware's 2^31 - 1 blocks put an image's column `block_idx().x * block_dim().x +
//! thread_idx().x` past 32 bits, where CUDA C computes it in `int`; the launcher knows the
//! grid), in every kernel that is not generic ([`Params::bounds_grid`]). At first this was
//! kept to grid-stride loops, whose stepped index has no other bound (the Sobol port 0.81 ->
//! 1.00 x its CUDA C twin): bounding every kernel had made the 3-D stencil, RGBA to gray
//! and the 1024^2 Jacobi sweep slower, which came from their 64-bit entries holding the
//! 64-bit body alone; with both bodies kept there, H100, the old and new binaries in one
//! call, twice: softmax 0.239 -> 0.219 ms, the 2-D convolutions 0.530 -> 0.515 ms, the box
//! filter 0.944 -> 0.953 x its twin, the stencil and RGBA rows unchanged, and the 1024^2
//! Jacobi sweep 8.1 -> 8.9 us (its 4096^2 one 1-2% slower, 8192^2 unchanged).

use crate::check::Types;
use crate::ir::*;
use crate::types::{Scalar, Ty};
use std::collections::{BTreeMap, BTreeSet};

mod calls;
mod closures;
mod facts;
mod gains;
mod guards;
mod mutable;
mod operators;
#[cfg(test)]
mod tests;
mod trips;

pub use facts::{
    cond_cuda, for_int, minimal, Atom, Bound, BoundOp, Fact, LaunchOf, LaunchValue, AXES, I32_MAX,
};
use facts::{U32_MAX, U64_MAX};
use guards::diverges;

/// The facts of one function's expressions and variables.
pub struct Ranges {
    exprs: Vec<Option<Option<Fact>>>,
    locals: Vec<Option<Fact>>,
    /// About how many times each expression runs per thread: 8 a loop level, a closure's
    /// body once a call.
    weights: Vec<u32>,
    /// Whether each expression's value and every intermediate on the way to it stay within
    /// `i32::MAX` unconditionally, so it may compute in `int`.
    ints: Vec<bool>,
    /// The same of each variable: its every value, and its initializer's intermediates.
    local_ints: Vec<bool>,
    /// Whether each float variable is bound once to a value that cannot be NaN.
    not_nan: Vec<bool>,
}

/// What a loop level multiplies an expression's weight by.
const LOOP_WEIGHT: u32 = 8;

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

/// The signed integer types and their maxima; `None` for every other type. A fact of a
/// signed value also says it is not negative: only what provably is (a cast of a bounded
/// unsigned value, a variable a condition holds between `0` and a bound, sums and products
/// of those) gets one, so `r as usize` behind `if r >= 0 && r < height as i64` is bounded.
fn signed_max(ty: Ty) -> Option<u128> {
    match ty {
        Ty::Scalar(Scalar::I8) => Some(i8::MAX as u128),
        Ty::Scalar(Scalar::I16) => Some(i16::MAX as u128),
        Ty::Scalar(Scalar::I32) => Some(i32::MAX as u128),
        Ty::Scalar(Scalar::I64 | Scalar::Isize) => Some(i64::MAX as u128),
        _ => None,
    }
}

/// Whether values of `ty` may have facts: the integer types.
fn has_facts(ty: Ty) -> bool {
    unsigned_max(ty).is_some() || signed_max(ty).is_some()
}

/// Whether `ty` is a 64-bit unsigned type: the ones the emitter may narrow.
pub fn is_wide(ty: Ty) -> bool {
    matches!(ty, Ty::Scalar(Scalar::U64 | Scalar::Usize))
}

/// What only the launch knows: the C++ names of a kernel's 64-bit parameters and of
/// its slice parameters' lengths. A fit that depends on them is decided once per launch (see
/// [`super::narrow`]).
pub struct Params {
    pub values: Vec<(LocalId, String)>,
    pub lens: Vec<(LocalId, String)>,
    /// Whether the launch's extents bound the index builtins (see [`Params::bounds_grid`]):
    /// an image's column `block_idx().x * block_dim().x + thread_idx().x` then fits in 32 bits
    /// where the launch's threads do, and so does a grid-stride loop's stepped index.
    pub grid: bool,
}

impl Params {
    /// Whether the launch's extents bound `kernel`'s index builtins: where it is not
    /// generic. A generic kernel's one entry holds both bodies, and the library's generic
    /// reductions gained and lost by turns with the bounds (H100, `f16` sums: 0.91 x at 2^24
    /// elements, 1.04 x at 2^26).
    pub fn bounds_grid(kernel: &Function) -> bool {
        kernel.generics.is_empty()
    }
}

impl Ranges {
    /// Analyses `function`: every variable in statement order, then every expression.
    ///
    /// A mutable variable gets a fact only when every value written to it (its first, and
    /// each assignment's, computed with the fact assumed for the variable) lies within that
    /// fact: it then holds at every point by induction over the writes. The assumed fact starts
    /// as the first value's and is widened to take in the writes a few rounds over; a variable
    /// whose writes keep growing it is given up (a running sum). One that grows by a constant
    /// factor once an iteration of a loop whose trips are bounded
    /// (`offset *= 2` in `while d > 0 { ..; d >>= 1; }`) is then bounded by counting the
    /// trips ([`trips`]), and the analysis runs again with that bound.
    #[cfg(test)]
    pub fn of(function: &Function, types: &Types, params: Option<&Params>) -> Ranges {
        let seeded = BTreeMap::new();
        let scope = Scope {
            params,
            callees: None,
            seeded: &seeded,
            for_call: false,
        };
        Ranges::in_scope(function, types, &scope)
    }

    /// [`Ranges::of`], where calls of the program's `#[device]` functions have facts too
    /// (see [`calls`]).
    pub fn of_program(
        function: &Function,
        types: &Types,
        params: Option<&Params>,
        program: (&Program, &[Types]),
    ) -> Ranges {
        let seeded = BTreeMap::new();
        let callees = calls::Callees {
            program: program.0,
            types: program.1,
        };
        let scope = Scope {
            params,
            callees: Some(&callees),
            seeded: &seeded,
            for_call: false,
        };
        Ranges::in_scope(function, types, &scope)
    }

    fn in_scope(function: &Function, types: &Types, scope: &Scope) -> Ranges {
        let none = BTreeMap::new();
        let (ranges, given_up) = Ranges::settled(function, types, scope, (&none, &[]));
        let grown = trips::bounded_growth(function, types, &ranges, &given_up);
        if grown.is_empty() {
            return ranges;
        }
        let ranges = Ranges::settled(function, types, scope, (&grown, &[])).0;
        // A grown variable written by two statements of its block is known better between
        // them (see [`trips::Phase`]).
        let phases = trips::phases(function, types, &ranges, &grown);
        if phases.is_empty() {
            return ranges;
        }
        Ranges::settled(function, types, scope, (&grown, &phases)).0
    }

    /// The analysis with the mutable variables of `fixed` known by those facts; also returns
    /// the mutable variables it gave up.
    fn settled(
        function: &Function,
        types: &Types,
        scope: &Scope,
        (fixed, phases): (&BTreeMap<LocalId, Fact>, &[trips::Phase]),
    ) -> (Ranges, BTreeSet<LocalId>) {
        let mut writes = mutable::Writes::of(function, types);
        writes.tracked.retain(|local| !fixed.contains_key(local));
        let closures = closures::Closures::of(function);
        let mut assumed: BTreeMap<LocalId, Fact> = BTreeMap::new();
        let mut given_up = writes.unbounded.clone();
        let mut widenings = BTreeMap::new();
        // Each round settles, widens a variable (at most `MAX_WIDENINGS` times, then
        // `EXTRA_WIDENINGS` times to a threshold or by conditions) or gives one up.
        let rounds =
            writes.tracked.len() * (mutable::MAX_WIDENINGS + mutable::EXTRA_WIDENINGS + 3) + 1;
        for _ in 0..rounds {
            let (ranges, written) = Ranges::round(
                function,
                types,
                scope,
                (&writes, &closures, fixed, phases),
                &assumed,
                &given_up,
            );
            if mutable::settle(&mut assumed, &mut given_up, &mut widenings, written) {
                let dropped = writes.tracked.intersection(&given_up).copied().collect();
                return (ranges, dropped);
            }
        }
        // Still moving: no mutable variable keeps a fact.
        given_up.extend(writes.tracked.iter().copied());
        let (ranges, _) = Ranges::round(
            function,
            types,
            scope,
            (&writes, &closures, fixed, phases),
            &BTreeMap::new(),
            &given_up,
        );
        (ranges, writes.tracked.clone())
    }

    /// One walk over the function with the mutable variables' facts `assumed`; also returns
    /// every value written to them.
    fn round(
        function: &Function,
        types: &Types,
        scope: &Scope,
        (writes, closures, fixed, phases): (
            &mutable::Writes,
            &closures::Closures,
            &BTreeMap<LocalId, Fact>,
            &[trips::Phase],
        ),
        assumed: &BTreeMap<LocalId, Fact>,
        given_up: &BTreeSet<LocalId>,
    ) -> (Ranges, mutable::Written) {
        let mut ranges = Ranges {
            exprs: vec![None; function.exprs.len()],
            locals: vec![None; function.locals.len()],
            weights: vec![1; function.exprs.len()],
            ints: vec![true; function.exprs.len()],
            local_ints: vec![true; function.locals.len()],
            not_nan: vec![false; function.locals.len()],
        };
        let mut walk = Walk {
            function,
            types,
            ranges: &mut ranges,
            params: scope.params,
            callees: scope.callees,
            for_call: scope.for_call,
            writes,
            assumed,
            given_up,
            fixed,
            phases,
            in_phase: Vec::new(),
            now: BTreeMap::new(),
            refined: Vec::new(),
            written: BTreeMap::new(),
            closures,
            calls: BTreeMap::new(),
            closure_params: scope.seeded.clone(),
            weight: 1,
            launch_lets: BTreeMap::new(),
        };
        walk.block(&function.body);
        // Code the walk did not reach in order (a closure's) sees a variable's whole range.
        walk.now.clear();
        walk.deferred_closures();
        for index in 0..function.exprs.len() {
            walk.fact(ExprId(index as u32));
        }
        let written = std::mem::take(&mut walk.written);
        (ranges, written)
    }

    /// Whether expression `id` may compute in `int` (see [`Ranges::ints`]).
    pub fn expr_fits_int(&self, id: ExprId) -> bool {
        self.ints.get(id.0 as usize).copied().unwrap_or(false)
    }

    /// Whether variable `local` may be an `int`.
    pub fn local_fits_int(&self, local: LocalId) -> bool {
        self.local_ints
            .get(local.0 as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The fact of expression `id`, if one is proved.
    pub fn expr(&self, id: ExprId) -> Option<&Fact> {
        self.exprs.get(id.0 as usize)?.as_ref()?.as_ref()
    }

    /// The fact of variable `local`, if one is proved.
    pub fn local(&self, local: LocalId) -> Option<&Fact> {
        self.locals.get(local.0 as usize)?.as_ref()
    }

    /// Whether float expression `id` of `function` cannot be NaN: a literal, a `max` or `min`
    /// with an operand that cannot be (Rust's gives the other operand for NaN: the clamp
    /// `(x - 0.5).max(0.0)`), or a variable bound once to one. Its conversion to an integer
    /// then needs no NaN test.
    pub fn never_nan(&self, function: &Function, id: ExprId) -> bool {
        match &function.expr(id).kind {
            ExprKind::Lit(Lit::Float { .. }) => true,
            ExprKind::Local(local) => self.not_nan.get(local.0 as usize) == Some(&true),
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if matches!(method.as_str(), "max" | "min") && args.len() == 1 => {
                self.never_nan(function, *receiver) || self.never_nan(function, args[0])
            }
            _ => false,
        }
    }
}

/// What an analysis knows from outside its function.
struct Scope<'a> {
    params: Option<&'a Params>,
    /// The program's `#[device]` functions, where calls of them have facts.
    callees: Option<&'a calls::Callees<'a>>,
    /// The parameters' facts of a function analysed for a call (see [`calls`]).
    seeded: &'a BTreeMap<LocalId, Fact>,
    /// Whether the function is analysed for a call's value (see [`Walk::for_call`]).
    for_call: bool,
}

/// The analysis of one function, in statement order so a variable's fact is known before its
/// uses.
struct Walk<'a> {
    function: &'a Function,
    types: &'a Types,
    ranges: &'a mut Ranges,
    params: Option<&'a Params>,
    callees: Option<&'a calls::Callees<'a>>,
    /// Whether the function is analysed for the value a call of it returns (see [`calls`]),
    /// not for its own code.
    for_call: bool,
    writes: &'a mutable::Writes,
    /// The facts assumed this round for mutable variables.
    assumed: &'a BTreeMap<LocalId, Fact>,
    given_up: &'a BTreeSet<LocalId>,
    /// Mutable variables bounded by counting a loop's trips: their facts hold throughout.
    fixed: &'a BTreeMap<LocalId, Fact>,
    /// Better facts of some of them over parts of their blocks.
    phases: &'a [trips::Phase],
    /// The facts of the phases the code being walked is in.
    in_phase: Vec<(LocalId, Fact)>,
    /// The fact of the value each variable written in a straight line (see
    /// [`mutable::Writes::straight`]) holds at this point of the walk.
    now: BTreeMap<LocalId, Option<Fact>>,
    /// What the conditions around the code being walked add to variables' facts, innermost
    /// last; `None` where a mutable variable's entry was written over.
    refined: Vec<Option<(LocalId, Fact)>>,
    /// Every value written to each tracked mutable variable, to check the assumed facts
    /// against.
    written: mutable::Written,
    closures: &'a closures::Closures,
    /// The facts of each call's arguments, for each deferred closure.
    calls: BTreeMap<LocalId, Vec<Vec<Option<Fact>>>>,
    /// What every call says of a deferred closure's parameters, and, in a function analysed
    /// for a call, what the arguments say of its parameters.
    closure_params: BTreeMap<LocalId, Fact>,
    /// The weight of the code being walked (see [`Ranges::weights`]).
    weight: u32,
    /// Immutable variables bound to a value only the launch knows (`let m = mean.len();`),
    /// with that value (see [`Walk::launch_value`]).
    launch_lets: BTreeMap<LocalId, Bound>,
}

impl Walk<'_> {
    fn block(&mut self, block: &Block) {
        let mark = self.refined.len();
        for (index, stmt) in block.stmts.iter().enumerate() {
            let phase_mark = self.in_phase.len();
            let phases = self.phases.iter().filter(|phase| {
                std::ptr::eq(phase.block, block) && (phase.from..phase.to).contains(&index)
            });
            self.in_phase
                .extend(phases.map(|phase| (phase.local, phase.fact.clone())));
            self.stmt(stmt);
            self.in_phase.truncate(phase_mark);
            // After `if c { return; }` (or `break`, `continue`), the rest of the block runs
            // only where `c` is false.
            if let StmtKind::If {
                cond,
                then_block,
                else_block: None,
            } = &stmt.kind
            {
                if diverges(then_block) {
                    let guards = self.guards(*cond, false, None);
                    self.refined.extend(guards.into_iter().map(Some));
                }
            }
        }
        self.refined.truncate(mark);
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { local, init } => {
                if !self.function.local(*local).mutable {
                    self.ranges.not_nan[local.0 as usize] =
                        self.ranges.never_nan(self.function, *init);
                    if let Some(value) = self.launch_value(*init) {
                        self.launch_lets.insert(*local, value);
                    }
                }
                let fact = self.fact(*init);
                self.ranges.local_ints[local.0 as usize] = self.ranges.ints[init.0 as usize];
                if !self.function.local(*local).mutable {
                    self.ranges.locals[local.0 as usize] = self.signed_fact(*init);
                } else if let Some(bound) = self.fixed.get(local) {
                    self.ranges.locals[local.0 as usize] = Some(bound.clone());
                } else if self.tracked(*local) {
                    if self.writes.straight.contains(local) {
                        self.now.insert(*local, fact.clone());
                    }
                    self.written.entry(*local).or_default().push(fact.clone());
                    // Without an assumption yet, the first value is this round's.
                    self.ranges.locals[local.0 as usize] =
                        self.assumed.get(local).cloned().or(fact);
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                inclusive,
                reverse,
                ..
            } => {
                let start_fact = self.signed_fact(*start);
                let end_fact = self.fact(*end);
                self.ranges.local_ints[var.0 as usize] =
                    self.ranges.ints[start.0 as usize] && self.ranges.ints[end.0 as usize];
                if let Some(step) = step {
                    self.fact(*step);
                }
                let fact = match (start_fact, end_fact) {
                    (Some(start), Some(end)) if !self.function.local(*var).mutable => {
                        // The variable stays below `end` (or reaches it, inclusive; and the
                        // CUDA counter of `a..=b` steps one past, see the `rs_incl` helper, as
                        // a reversed loop's starts at `end`).
                        let hi = if *inclusive && step.is_none() && !*reverse {
                            Bound::op(BoundOp::Add, &end.hi, &Bound::Num(1))
                        } else if *inclusive || *reverse {
                            end.hi.clone()
                        } else {
                            Bound::op(BoundOp::Sub, &end.hi, &Bound::Num(1))
                        };
                        // A start below 0 (`-R..=R`) shifts the variable as far.
                        let mut cond = start.cond;
                        cond.extend(end.cond);
                        Some(Fact {
                            lo: start.lo,
                            hi: Bound::op(BoundOp::Add, &hi, &start.shift),
                            cond,
                            varies: true,
                            shift: start.shift,
                        })
                    }
                    _ => None,
                };
                self.ranges.locals[var.0 as usize] = fact;
                self.weighted(LOOP_WEIGHT, |walk| walk.block(body));
            }
            // No value yet: the variable's writes are assignments, and it is never tracked.
            StmtKind::Declare { .. } => {}
            StmtKind::LetTuple { init, .. } => {
                self.fact(*init);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.fact(*cond);
                self.guarded(*cond, true, None, |walk| walk.block(then_block));
                if let Some(block) = else_block {
                    self.guarded(*cond, false, None, |walk| walk.block(block));
                }
            }
            StmtKind::While { cond, body, .. } => {
                self.fact(*cond);
                // A mutable variable written only by the body's own statements is below the
                // condition's bound until the first of them.
                let mutable = self.writes.written_at_top_only(self.function, body);
                self.weighted(LOOP_WEIGHT, |walk| {
                    walk.guarded(*cond, true, Some(&mutable), |walk| walk.block(body));
                });
            }
            StmtKind::Loop { body, .. } => self.weighted(LOOP_WEIGHT, |walk| walk.block(body)),
            StmtKind::Block(body) => self.block(body),
            StmtKind::Match { scrutinee, arms } => {
                self.fact(*scrutinee);
                for (_, body) in arms {
                    self.block(body);
                }
            }
            StmtKind::Assign { place, op, value } => {
                self.fact(*place);
                let value_fact = self.fact(*value);
                if let ExprKind::Local(local) = self.function.expr(*place).kind {
                    if self.tracked(local) {
                        let new = match op {
                            None => value_fact,
                            Some(op) => {
                                let raw = self.binary(*op, *place, *value);
                                self.fit(self.types.local(local), raw)
                            }
                        };
                        if self.writes.straight.contains(&local) {
                            self.now.insert(local, new.clone());
                        }
                        self.written.entry(local).or_default().push(new);
                    }
                    // What a condition said of it no longer holds.
                    for entry in &mut self.refined {
                        if entry.as_ref().is_some_and(|(l, _)| *l == local) {
                            *entry = None;
                        }
                    }
                }
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

    /// Whether `local` is a mutable variable whose fact is being established.
    fn tracked(&self, local: LocalId) -> bool {
        self.writes.tracked.contains(&local) && !self.given_up.contains(&local)
    }

    /// The fact of `id` where it cannot be negative: what every use but a signed sum or
    /// difference may rely on.
    fn fact(&mut self, id: ExprId) -> Option<Fact> {
        self.signed_fact(id).filter(|fact| !fact.is_shifted())
    }

    /// The fact of `id`, which for a signed value may be shifted below 0 (see
    /// [`Fact::shift`]), computed once.
    fn signed_fact(&mut self, id: ExprId) -> Option<Fact> {
        if let Some(known) = self.ranges.exprs.get(id.0 as usize)? {
            return known.clone();
        }
        self.ranges.weights[id.0 as usize] = self.weight;
        let fact = self.compute(id);
        self.ranges.exprs[id.0 as usize] = Some(fact.clone());
        // A number decides; a bound only C++ or the launch knows is in the condition, and so
        // is one whose numbers pass 32 bits (`min(2^41, threads of the launch)`), which `fit`
        // held to them.
        let own = fact.as_ref().is_none_or(|fact| {
            fact.hi.upper().map_or(!fact.cond.is_empty(), |hi| {
                hi <= I32_MAX || (hi > U32_MAX && !fact.cond.is_empty())
            })
        });
        let parts = self
            .function
            .expr(id)
            .kind
            .children()
            .into_iter()
            .all(|child| {
                self.ranges
                    .ints
                    .get(child.0 as usize)
                    .copied()
                    .unwrap_or(true)
            });
        self.ranges.ints[id.0 as usize] = own && parts;
        fact
    }

    /// Walks `inside` with the weight multiplied by `factor`.
    fn weighted(&mut self, factor: u32, inside: impl FnOnce(&mut Self)) {
        let outer = self.weight;
        self.weight = outer.saturating_mul(factor);
        inside(self);
        self.weight = outer;
    }

    fn compute(&mut self, id: ExprId) -> Option<Fact> {
        let ty = self.types.expr(id);
        match &self.function.expr(id).kind {
            ExprKind::Closure { body, .. } => {
                // Called who knows how often where it is passed.
                if !self.closures.deferred.contains_key(&id) {
                    self.weighted(LOOP_WEIGHT, |walk| walk.block(body));
                }
                return None;
            }
            // The right operand runs only where the left one decided so.
            ExprKind::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                lhs,
                rhs,
            } => {
                let (lhs, rhs) = (*lhs, *rhs);
                self.fact(lhs);
                self.guarded(lhs, *op == BinOp::And, None, |walk| {
                    walk.fact(rhs);
                });
                return None;
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let (cond, a, b) = (*cond, *then_value, *else_value);
                self.fact(cond);
                // Each value is computed where the condition chose it.
                self.guarded(cond, true, None, |walk| {
                    walk.fact(a);
                });
                self.guarded(cond, false, None, |walk| {
                    walk.fact(b);
                });
            }
            // The parts first, in the conditions around them (an index, an argument).
            kind => {
                for child in kind.children() {
                    self.fact(child);
                }
                if let ExprKind::CallClosure { callee, args } = kind {
                    self.closure_call(*callee, args);
                }
            }
        }
        if !has_facts(ty) {
            return None;
        }
        let fact = self.raw(id);
        self.fit(ty, fact)
    }

    /// A value of type `ty` known as `fact` before the type's limits apply: a 64-bit one is
    /// narrowed only if it (and so, inductively, every intermediate) fits in 32 bits; a
    /// narrower one computes in its own width, so a bound past its maximum, or one only C++
    /// knows, says only that the value is one of the type's.
    fn fit(&self, ty: Ty, fact: Option<Fact>) -> Option<Fact> {
        if let Some(max) = signed_max(ty) {
            // Within the type, and not negative unless shifted, and then only as far as an
            // `int` goes, in a type at least as wide: the value is the same integer as the
            // 32-bit arithmetic's.
            let fact = fact?;
            if fact.is_shifted() && max < I32_MAX {
                return None;
            }
            let hi = fact.hi.clone();
            return fact.require(hi, Bound::Num(max.min(U32_MAX)));
        }
        let max = unsigned_max(ty)?;
        let fact = fact.filter(|fact| !fact.is_shifted());
        if is_wide(ty) {
            let fact = fact?;
            let hi = fact.hi.clone();
            return fact.require(hi, Bound::Num(U32_MAX));
        }
        // A bound the launch knows may stay where its numbers keep it within the type (an
        // index builtin below the launch's extent: see `Walk::builtin`).
        Some(match fact {
            Some(fact) if fact.is_static() && fact.hi_num().is_some_and(|hi| hi <= max) => fact,
            Some(fact)
                if fact.cond.is_empty()
                    && matches!(fact.lo, Bound::Num(_))
                    && fact.hi.upper().is_some_and(|hi| hi <= max) =>
            {
                fact
            }
            _ => Fact::varying(0, max),
        })
    }

    /// What is known of variable `local` here where it cannot be negative (see
    /// [`Walk::fact`]).
    fn current(&self, local: LocalId) -> Option<Fact> {
        self.signed_current(local).filter(|fact| !fact.is_shifted())
    }

    /// What is known of variable `local` here: what a condition around says, else its own
    /// fact, else a parameter's range.
    fn signed_current(&self, local: LocalId) -> Option<Fact> {
        let refined = self.refined.iter().rev().flatten();
        if let Some((_, fact)) = refined.into_iter().find(|(l, _)| *l == local) {
            return Some(fact.clone());
        }
        if let Some((_, fact)) = self.in_phase.iter().rev().find(|(l, _)| *l == local) {
            return Some(fact.clone());
        }
        if let Some(fact) = self.now.get(&local) {
            return fact.clone();
        }
        if let Some(fact) = self.ranges.locals.get(local.0 as usize)? {
            return Some(fact.clone());
        }
        if let Some(fact) = self.closure_params.get(&local) {
            return Some(fact.clone());
        }
        let value = self.launch_bound(local, false)?;
        match signed_max(self.types.local(local)) {
            // A signed parameter may be negative, which its bound cannot say: its fact holds
            // where it is not (as an unsigned number a negative value is past the maximum).
            Some(max) => at_most(value.clone()).require(value, Bound::Num(max)),
            None => Some(at_most(value)),
        }
    }
}

/// A value between 0 and `hi`, which varies.
fn at_most(hi: Bound) -> Fact {
    Fact {
        lo: Bound::Num(0),
        hi,
        cond: BTreeSet::new(),
        varies: true,
        shift: Bound::Num(0),
    }
}
