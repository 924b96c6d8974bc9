//! Stage 2: type check. Infers every `let` and literal the way rustc would and records one
//! type per expression and per variable, which both emitters read.
//!
//! Unsuffixed literals start as inference variables (`{integer}`, `{float}`) that unify with
//! whatever they meet; the ones still open at the end default to `i32` and `f64`, as in Rust.
//!
//! One `Checker` walks a function; its methods are spread over files by what they check:
//! [`inference`] (variables and unification), [`statements`], [`expressions`], [`calls`]
//! (methods, device functions, recursion), [`intrinsics`] (the signatures of `intrinsics/`),
//! [`format`] (assertions and printing) and [`constants`] (associated constants, literal
//! ranges).

mod calls;
mod closures;
mod constants;
mod expressions;
mod format;
mod inference;
mod instantiate;
mod intrinsics;
mod outer;
mod statements;
mod user_types;

pub use user_types::operator_function;

pub use constants::FLOAT_CONSTANTS;

use crate::ctxt::Ctxt;
use crate::intrinsics::Placement;
use crate::ir::*;
use crate::types::{ClosureTy, GenericArg};
use crate::types::{Len, Scalar, Ty};
use calls::check_recursion;
use closures::ClosureSig;
use constants::int_max;
use instantiate::Instance;
use std::collections::HashMap;
use std::collections::HashSet;

/// The result of type checking: the type of every expression and every variable.
pub struct Types {
    pub exprs: Vec<Ty>,
    pub locals: Vec<Ty>,
    /// The type of each constant from outside the function, by `OuterConst::index`.
    pub outer: Vec<Scalar>,
    /// Which of `outer` took `i32` because no use typed them: the host code asserts the type.
    pub assumed: Vec<bool>,
    /// The generic arguments of each call of a generic device function.
    pub calls: HashMap<ExprId, Vec<GenericArg>>,
    /// The result type of each closure expression (`()` for none).
    pub closure_rets: HashMap<ExprId, Ty>,
}

impl Types {
    pub fn expr(&self, id: ExprId) -> Ty {
        self.exprs[id.0 as usize]
    }

    pub fn local(&self, id: LocalId) -> Ty {
        self.locals[id.0 as usize]
    }

    /// The scalar type of an expression the checker proved to be scalar.
    pub fn scalar(&self, id: ExprId) -> Scalar {
        match self.expr(id) {
            Ty::Scalar(scalar) => scalar,
            other => unreachable!("checked as scalar, found {other:?}"),
        }
    }
}

/// Type checks every function of `program`; `None` when there were errors (they are in `cx`).
pub fn check_program(cx: &Ctxt, program: &Program) -> Option<Vec<Types>> {
    check_recursion(cx, program);
    let mut all = Vec::new();
    for function in &program.functions {
        let mut checker = Checker {
            cx,
            program,
            kernel: function,
            exprs: vec![None; function.exprs.len()],
            locals: vec![None; function.locals.len()],
            vars: Vec::new(),
            outer: Vec::new(),
            loops: Vec::new(),
            negated_literals: Vec::new(),
            negations: Vec::new(),
            deferred_values: Vec::new(),
            outer_methods: Vec::new(),
            instances: Vec::new(),
            closures: Vec::new(),
            returns: Vec::new(),
            declared: HashSet::new(),
            table_bases: function
                .exprs
                .iter()
                .filter_map(|e| match e.kind {
                    ExprKind::Index { base, .. } | ExprKind::Len(base) => Some(base),
                    _ => None,
                })
                .filter(|base| matches!(function.expr(*base).kind, ExprKind::Outer(_)))
                .collect(),
            let_inits: function
                .exprs
                .iter()
                .enumerate()
                .filter(|(_, e)| is_constructor(&e.kind))
                .map(|(i, _)| ExprId(i as u32))
                .filter(|id| is_let_init(&function.body, *id))
                .collect(),
            statements: function
                .exprs
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    matches!(&e.kind, ExprKind::Intrinsic { op, .. }
                        if matches!(op.signature().placement, Placement::Statement { .. }))
                })
                .map(|(i, _)| ExprId(i as u32))
                .filter(|id| is_statement(&function.body, *id))
                .collect(),
            call_args: function
                .exprs
                .iter()
                .flat_map(|e| match &e.kind {
                    ExprKind::Call { args, .. }
                    | ExprKind::AssocCall { args, .. }
                    | ExprKind::Method { args, .. } => args.clone(),
                    _ => Vec::new(),
                })
                .collect(),
        };
        for param in &function.params {
            let t = match param.ty {
                Ty::Closure(ClosureTy::Bound(index)) => checker.bound_closure(index),
                ty => checker.fresh_of(ty, param.span),
            };
            checker.locals[param.local.0 as usize] = Some(t);
        }
        checker.outer = checker.outer_types();
        checker.block(&function.body);
        checker.force_all_closures();
        if let Some(ret) = function.ret {
            if !block_returns(&function.body) {
                cx.error(
                    function.name_span,
                    format!(
                        "device function `{}` must return a `{}` on every path: end it with the value or `return value;`",
                        function.name,
                        ret.describe()
                    ),
                );
            }
        }
        all.push(checker.finish());
    }
    if cx.has_errors() {
        return None;
    }
    all.into_iter().collect()
}

/// Expressions that create storage and so may only initialise a `let`.
fn is_constructor(kind: &ExprKind) -> bool {
    match kind {
        ExprKind::SharedArray { .. }
        | ExprKind::DynamicShared { .. }
        | ExprKind::ArrayRepeat { .. }
        | ExprKind::ArrayList { .. }
        | ExprKind::Match { .. } => true,
        ExprKind::Intrinsic { op, .. } => op.signature().placement == Placement::LetInit,
        _ => false,
    }
}

/// Whether Rust's `From` converts `from` into `to`: the value always fits.
fn lossless(from: Scalar, to: Scalar) -> bool {
    use Scalar::*;
    from == to
        || match from {
            Bool => to.is_int(),
            U8 => !matches!(to, I8 | Bool),
            U16 => matches!(to, U32 | U64 | Usize | I32 | I64 | F32 | F64),
            U32 => matches!(to, U64 | I64 | F64),
            I8 => matches!(to, I16 | I32 | I64 | Isize | F32 | F64),
            I16 => matches!(to, I32 | I64 | Isize | F32 | F64),
            I32 => matches!(to, I64 | F64),
            F32 => to == F64,
            F16 | Bf16 => matches!(to, F32 | F64),
            _ => false,
        }
}

/// Whether `id` is the initializer of a `let` somewhere in `block`.
fn is_let_init(block: &Block, id: ExprId) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Let { init, .. } | StmtKind::Return(Some(init)) => *init == id,
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, body)| is_let_init(body, id)),
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => is_let_init(then_block, id) || else_block.as_ref().is_some_and(|b| is_let_init(b, id)),
        StmtKind::While { body, .. } | StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
            is_let_init(body, id)
        }
        StmtKind::Block(inner) => is_let_init(inner, id),
        _ => false,
    })
}

/// Whether `id` is built from integer literals and const generic parameters alone, so C++
/// sees a compile-time constant.
fn is_const_expr(function: &Function, id: ExprId) -> bool {
    match &function.expr(id).kind {
        ExprKind::GenericConst(_) | ExprKind::Lit(Lit::Int { .. }) | ExprKind::Outer(_) => true,
        ExprKind::Binary { lhs, rhs, .. } => {
            is_const_expr(function, *lhs) && is_const_expr(function, *rhs)
        }
        ExprKind::Unary { operand, .. } => is_const_expr(function, *operand),
        ExprKind::Cast { expr, .. } => is_const_expr(function, *expr),
        _ => false,
    }
}

/// Whether `id` stands as an expression statement somewhere in `block`.
fn is_statement(block: &Block, id: ExprId) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Expr(expr) => *expr == id,
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, body)| is_statement(body, id)),
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => {
            is_statement(then_block, id) || else_block.as_ref().is_some_and(|b| is_statement(b, id))
        }
        StmtKind::While { body, .. } | StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
            is_statement(body, id)
        }
        StmtKind::Block(inner) => is_statement(inner, id),
        _ => false,
    })
}

/// Whether every path through `block` ends in `return`.
pub(super) fn block_returns(block: &Block) -> bool {
    block.stmts.last().is_some_and(|stmt| match &stmt.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(inner) => block_returns(inner),
        StmtKind::If {
            then_block,
            else_block: Some(else_block),
            ..
        } => block_returns(then_block) && block_returns(else_block),
        StmtKind::Match { arms, .. } => arms.iter().all(|(_, body)| block_returns(body)),
        // A `loop` that nothing breaks out of leaves only by `return` (PMPP's co-rank search).
        StmtKind::Loop { body, label } => !breaks_out(body, label.as_deref(), 0),
        // `panic!` and its kin never come back, like a `return`.
        StmtKind::Assert(Assertion {
            kind: AssertKind::Panic { .. },
            debug: false,
            ..
        }) => true,
        _ => false,
    })
}

/// Whether a `break` in `block` leaves the loop whose body it is (labelled `label`), `depth`
/// loops inside it: an unlabelled one outside any inner loop, or one naming its label.
fn breaks_out(block: &Block, label: Option<&str>, depth: usize) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Break(None) => depth == 0,
        StmtKind::Break(Some(target)) => Some(target.as_str()) == label,
        StmtKind::While { body, .. } | StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
            breaks_out(body, label, depth + 1)
        }
        kind => kind
            .blocks()
            .into_iter()
            .any(|inner| breaks_out(inner, label, depth)),
    })
}

/// A type during inference.
#[derive(Clone, Copy, Debug)]
enum T {
    Ty(Ty),
    Var(u32),
    /// The type of an expression already reported as wrong: it unifies with anything, so one
    /// mistake gives one message.
    Error,
    /// A local array; its element type is an inference variable.
    Array {
        elem: u32,
        len: Len,
    },
    /// A tuple; each element's type is an inference variable.
    Tuple(&'static [u32]),
    /// A closure: its signature in `Checker::closures`.
    Closure(u32),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum VarKind {
    Int,
    Float,
    /// An array element: any scalar.
    Any,
}

/// A literal's inference variable: union-find parent, kind, and the type once known.
struct Var {
    parent: u32,
    kind: VarKind,
    bound: Option<T>,
}

/// An intrinsic argument whose type was still open when met, checked once it is known.
struct DeferredValue {
    arg: ExprId,
    /// Which types it may take.
    accepts: fn(Scalar) -> bool,
    /// The message (with `{found}`) if it took another.
    message: String,
}

struct Checker<'a> {
    cx: &'a Ctxt,
    program: &'a Program,
    /// The function being checked.
    kernel: &'a Function,
    exprs: Vec<Option<T>>,
    locals: Vec<Option<T>>,
    vars: Vec<Var>,
    /// The type of each constant from outside the function.
    outer: Vec<T>,
    /// The enclosing loops' labels, innermost last.
    loops: Vec<Option<String>>,
    /// Integer literals directly under a unary minus: they may reach `MIN`.
    negated_literals: Vec<ExprId>,
    /// Negations whose operand type was still open when met.
    negations: Vec<(ExprId, Loc)>,
    /// Intrinsic arguments whose type was still open when met.
    deferred_values: Vec<DeferredValue>,
    /// Methods called on constants from outside whose type was still open (see
    /// `Checker::outer_method`): the receiver, the method and where it is named.
    outer_methods: Vec<(ExprId, String, Loc)>,
    /// Calls of generic device functions, settled at the end.
    instances: Vec<Instance>,
    /// The closures' signatures, indexed by `T::Closure`.
    closures: Vec<ClosureSig>,
    /// The result types of the closures whose bodies are being checked, innermost last.
    returns: Vec<T>,
    /// Variables declared without a value (`let x;`), which their first assignment initialises.
    declared: HashSet<LocalId>,
    /// Outer constants indexed or asked their length: where a table may stand.
    table_bases: HashSet<ExprId>,
    /// Constructors that initialise a `let`, where they are allowed.
    let_inits: HashSet<ExprId>,
    /// Statement-only intrinsics (`wgmma_m64n*k16_*`, `wgmma_wait`) that stand as statements.
    statements: HashSet<ExprId>,
    /// The direct arguments of calls, where `&x` / `&mut x` may stand.
    call_args: HashSet<ExprId>,
}

impl Checker<'_> {
    fn loc(&self, id: ExprId) -> Loc {
        self.kernel.expr(id).span
    }

    fn finish(mut self) -> Option<Types> {
        let (outer, assumed) = self.finish_outer();
        self.check_closure_types();
        let calls = self.settle_instances().into_iter().collect();
        let closure_rets = self.closure_rets().into_iter().collect();
        let mut exprs = Vec::with_capacity(self.exprs.len());
        for t in std::mem::take(&mut self.exprs) {
            let ty = t.map_or(Ty::Unit, |t| self.finalize(t));
            exprs.push(ty);
        }
        let mut locals = Vec::with_capacity(self.locals.len());
        for t in std::mem::take(&mut self.locals) {
            let ty = t.map_or(Ty::Unit, |t| self.finalize(t));
            locals.push(ty);
        }
        for (id, loc) in std::mem::take(&mut self.negations) {
            if let Ty::Scalar(s) = exprs[id.0 as usize] {
                if !s.is_signed_int() && !s.is_float() && !s.is_half() && s.bound().is_none() {
                    self.cx.error(
                        loc,
                        format!(
                            "cannot apply unary operator `-` to type `{}`",
                            s.rust_name()
                        ),
                    );
                }
            }
        }
        for &(value, to, loc) in &self.kernel.conversions {
            if let Ty::Scalar(from) = exprs[value.0 as usize] {
                if from.bound().is_none() && !lossless(from, to) {
                    let (from, to) = (from.rust_name(), to.rust_name());
                    self.cx.error(
                        loc,
                        format!(
                            "Rust has no `From<{from}>` for `{to}`: it may not hold every \
                             `{from}`; write `x as {to}` if its conversion (wrapping, truncating or \
                             rounding) is what you mean"
                        ),
                    );
                }
            }
        }
        for DeferredValue {
            arg: id,
            accepts,
            message,
        } in std::mem::take(&mut self.deferred_values)
        {
            if let Ty::Scalar(scalar) = exprs[id.0 as usize] {
                if !accepts(scalar) {
                    let found = format!("`{}`", scalar.rust_name());
                    self.cx
                        .error(self.loc(id), message.replace("{found}", &found));
                }
            }
        }
        self.check_outer_methods(&exprs);
        for (index, expr) in self.kernel.exprs.iter().enumerate() {
            if let ExprKind::Lit(Lit::Int { value, .. }) = expr.kind {
                if let Ty::Scalar(scalar) = exprs[index] {
                    let negated = self.negated_literals.contains(&ExprId(index as u32));
                    if value > int_max(scalar, negated) {
                        self.cx.error(
                            expr.span,
                            format!(
                                "literal out of range for `{}`: the largest {} is {}",
                                scalar.rust_name(),
                                scalar.rust_name(),
                                int_max(scalar, false)
                            ),
                        );
                    }
                }
            }
        }
        if self.cx.has_errors() {
            return None;
        }
        Some(Types {
            exprs,
            locals,
            outer,
            assumed,
            calls,
            closure_rets,
        })
    }

    fn finalize(&mut self, t: T) -> Ty {
        match self.resolve(t) {
            T::Ty(ty) => ty,
            T::Error => Ty::Unit,
            T::Closure(k) => Ty::Closure(self.closures[k as usize].ty),
            T::Array { elem, len } => Ty::Array {
                elem: self.finalize(T::Var(elem)).interned(),
                len,
            },
            T::Tuple(elems) => Ty::tuple(elems.iter().map(|e| self.finalize(T::Var(*e))).collect()),
            T::Var(id) => Ty::Scalar(match self.vars[id as usize].kind {
                VarKind::Int => Scalar::I32,
                VarKind::Float | VarKind::Any => Scalar::F64,
            }),
        }
    }
}
