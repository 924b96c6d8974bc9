//! The kernel IR: what `parse` produces and every later stage reads.
//!
//! syn types stop at `parse`; the IR keeps only `Span`s for messages. Expressions live in an
//! arena (`Function::exprs`) and are referred to by `ExprId`, so the type checker can record one
//! type per expression that both emitters read without re-inferring.

use crate::intrinsics::{Builtin, Op};
use crate::types::{ClosureBound, Generic, GenericArg, Len, Scalar, Ty};
use proc_macro2::{Span, TokenStream};

/// Where a piece of the kernel was written: its first and last token, so a message underlines
/// the whole construct as rustc would.
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    pub start: Span,
    pub end: Span,
}

impl Loc {
    /// The location covering all of `node`'s tokens.
    pub fn of(node: &impl quote::ToTokens) -> Loc {
        let mut tokens = node.to_token_stream().into_iter();
        let start = tokens
            .next()
            .map_or_else(Span::call_site, |token| token.span());
        let end = tokens.last().map_or(start, |token| token.span());
        Loc { start, end }
    }

    /// The 1-based source line the construct starts on.
    pub fn line(self) -> usize {
        self.start.start().line
    }
}

/// A generic parameter of a kernel, in declaration order.
#[derive(Clone, Copy, Debug)]
pub enum GenericParam {
    Type(Generic),
    /// `const N: usize`.
    Const(&'static str),
    /// `F: Fn(A, B) -> R`, only on device functions.
    Closure(&'static ClosureBound),
}

/// Handle to an expression in `Function::exprs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExprId(pub u32);

/// Handle to a variable (parameter or `let`) in `Function::locals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalId(pub u32);

/// Whether a function is a kernel (an entry point) or a `#[device]` function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    Kernel,
    Device,
}

/// A kernel together with every `#[device]` function it reaches.
pub struct Program {
    /// The kernel (or the device function being checked on its own) comes first.
    pub functions: Vec<Function>,
}

impl Program {
    pub fn root(&self) -> &Function {
        &self.functions[0]
    }

    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<(usize, &Function)> {
        self.functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == name)
    }
}

/// A parsed function: a kernel or a device function.
pub struct Function {
    pub kind: FnKind,
    pub name: String,
    pub name_span: Loc,
    /// The function's visibility, re-used verbatim for what is generated from it.
    pub vis: TokenStream,
    /// Doc comments, carried to the generated module.
    pub docs: Vec<TokenStream>,
    pub params: Vec<Param>,
    /// The return type of a device function.
    pub ret: Option<Scalar>,
    /// Type and const parameters, in declaration order.
    pub generics: Vec<GenericParam>,
    pub body: Block,
    pub exprs: Vec<Expr>,
    pub locals: Vec<Local>,
    /// The file the function was written in, for `#line` directives.
    pub file: String,
    /// `#[kernel(launch_bounds(..))]`, emitted as `__launch_bounds__`.
    pub launch_bounds: Option<LaunchBounds>,
}

/// What a kernel promises about its launches, so the CUDA compiler can budget registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The most threads per block any launch uses.
    pub max_threads: u32,
    /// Blocks that should fit on one multiprocessor at once (caps registers per thread).
    pub min_blocks: Option<u32>,
}

impl Function {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }

    /// Every function this one calls, by name, with the path of each call as written.
    pub fn callees(&self) -> Vec<(&str, &TokenStream, Loc)> {
        self.exprs
            .iter()
            .filter_map(|expr| match &expr.kind {
                ExprKind::Call { name, path, .. } => Some((name.as_str(), path, expr.span)),
                _ => None,
            })
            .collect()
    }
}

/// A kernel parameter.
pub struct Param {
    pub local: LocalId,
    pub ty: Ty,
    pub span: Loc,
}

/// A variable: a parameter or a `let` binding.
pub struct Local {
    pub name: String,
    pub mutable: bool,
    /// The written type, for parameters and annotated `let`s.
    pub annotation: Option<Ty>,
}

/// A `{ ... }` block of statements.
pub struct Block {
    pub stmts: Vec<Stmt>,
}

/// A statement, with the span of the whole statement.
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Loc,
}

pub enum StmtKind {
    Let {
        local: LocalId,
        init: ExprId,
    },
    /// `place = value` or `place op= value`.
    Assign {
        place: ExprId,
        op: Option<BinOp>,
        value: ExprId,
    },
    If {
        cond: ExprId,
        then_block: Block,
        else_block: Option<Block>,
    },
    While {
        cond: ExprId,
        body: Block,
        label: Option<String>,
    },
    Loop {
        body: Block,
        label: Option<String>,
    },
    /// `for var in start..end` or `for var in (start..end).step_by(step)`.
    For {
        var: LocalId,
        start: ExprId,
        end: ExprId,
        step: Option<ExprId>,
        body: Block,
        label: Option<String>,
        /// `#[unroll]`: ask the CUDA compiler to unroll the loop fully (`#pragma unroll`).
        unroll: bool,
    },
    /// `break` or `break 'label`.
    Break(Option<String>),
    /// `continue` or `continue 'label`.
    Continue(Option<String>),
    /// `match` on an integer or `bool` in statement position.
    Match {
        scrutinee: ExprId,
        arms: Vec<(Vec<Pattern>, Block)>,
    },
    Return(Option<ExprId>),
    Block(Block),
    /// An expression evaluated for its effect.
    Expr(ExprId),
}

/// An expression, with its span.
pub struct Expr {
    pub kind: ExprKind,
    pub span: Loc,
}

pub enum ExprKind {
    Lit(Lit),
    Local(LocalId),
    Binary {
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Unary {
        op: UnOp,
        operand: ExprId,
    },
    Cast {
        expr: ExprId,
        to: Scalar,
    },
    Index {
        base: ExprId,
        index: ExprId,
    },
    /// `slice.len()`.
    Len(ExprId),
    /// A method on a number: `x.sqrt()`, `a.max(b)`.
    Method {
        receiver: ExprId,
        method: String,
        method_span: Loc,
        args: Vec<ExprId>,
        /// The type named in the path form `f32::sqrt(x)`.
        receiver_ty: Option<Scalar>,
    },
    /// `thread_idx()`, `global_idx()`, ...
    Builtin(Builtin),
    /// A call of a `#[device]` function.
    Call {
        name: String,
        /// The path as written, to fetch the function's definition from the same scope.
        path: TokenStream,
        args: Vec<ExprId>,
        /// `f::<f32, 4>(..)`: the generic arguments written, `None` for `_`.
        turbofish: Vec<Option<GenericArg>>,
    },
    /// `.x`, `.y` or `.z` of a `Dim3`/`Index3`.
    Axis {
        base: ExprId,
        axis: Axis,
    },
    /// An associated constant such as `f32::MAX` or `u32::MIN`.
    Const {
        ty: Scalar,
        name: String,
    },
    /// A GPU intrinsic (see `intrinsics/`): a free function, or a method on a slice or shared
    /// memory whose receiver is the first argument.
    Intrinsic {
        op: Op,
        args: Vec<ExprId>,
    },
    /// `shared_array::<T, N>()`: only as a `let` initializer.
    SharedArray {
        elem: Scalar,
        len: Len,
    },
    /// A kernel's const parameter used as a value.
    GenericConst(&'static str),
    /// `f32::from_bits(u)` / `f64::from_bits(u)`.
    FromBits {
        bits: ExprId,
        to: Scalar,
    },
    /// `f16::from_f32(x)` and the like: the explicit conversions of the `half` crate.
    Convert {
        expr: ExprId,
        to: Scalar,
    },
    /// `dynamic_shared::<T>()`: only as a `let` initializer.
    DynamicShared {
        elem: Scalar,
    },
    /// `[value; len]`: only as a `let` initializer.
    ArrayRepeat {
        value: ExprId,
        len: Len,
    },
    /// `[a, b, c]`: only as a `let` initializer.
    ArrayList {
        elems: Vec<ExprId>,
    },
    /// `match` producing a value: only as a `let` initializer.
    Match {
        scrutinee: ExprId,
        arms: Vec<(Vec<Pattern>, ExprId)>,
    },
    /// `|a, b: f32| a * b`: its parameters are locals of the enclosing function, and its body
    /// ends in `return` when it has a value.
    Closure {
        params: Vec<LocalId>,
        /// The written result type, `|x| -> f32 { .. }`.
        ret: Option<Scalar>,
        body: Block,
        /// Whether the body produces a value (a tail expression or a written result type).
        returns_value: bool,
    },
    /// A call of a closure held by a local: `op(a, b)`.
    CallClosure {
        callee: ExprId,
        args: Vec<ExprId>,
    },
    /// `if c { a } else { b }` used as a value.
    Select {
        cond: ExprId,
        then_value: ExprId,
        else_value: ExprId,
    },
}

/// A literal as written; the type checker gives unsuffixed ones their type.
#[derive(Clone, Debug)]
pub enum Lit {
    Bool(bool),
    Int {
        value: u128,
        suffix: Option<Scalar>,
    },
    /// The digits as written (without suffix), so no precision is lost before emission.
    Float {
        digits: String,
        suffix: Option<Scalar>,
    },
}

/// A `match` arm's pattern on an integer or `bool`.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// `3`, `-1`, `true`: an expression, so the checker gives it the scrutinee's type.
    Value(ExprId),
    /// `a..=b` (`inclusive`) or `a..b`.
    Range {
        start: ExprId,
        end: ExprId,
        inclusive: bool,
    },
    /// `_` or a binding name.
    Wild,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as written in both Rust and C++.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}
