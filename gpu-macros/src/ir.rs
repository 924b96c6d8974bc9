//! The kernel IR: what `parse` produces and every later stage reads.
//!
//! syn types stop at `parse`; the IR keeps only `Span`s for messages. Expressions live in an
//! arena (`Function::exprs`) and are referred to by `ExprId`, so the type checker can record one
//! type per expression that both emitters read without re-inferring.

use crate::format::Template;
use crate::intrinsics::{Builtin, Op};
use crate::types::{
    ClosureBound, EnumRef, Generic, GenericArg, Len, OuterConst, Scalar, StructRef, Ty,
};
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
    /// `const N: usize` or `const B: bool` (the type: `Scalar::Usize` or `Scalar::Bool`).
    Const(&'static str, Scalar),
    /// `F: Fn(A, B) -> R`, only on device functions.
    Closure(&'static ClosureBound),
}

/// Handle to an expression in `Function::exprs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// Handle to a variable (parameter or `let`) in `Function::locals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// Whether a function is a kernel (an entry point) or a `#[device]` function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    Kernel,
    Device,
}

/// A kernel together with every `#[device]` function, method and type it reaches.
pub struct Program {
    /// The kernel (or the device function being checked on its own) comes first; methods of
    /// `#[device]` types follow the functions.
    pub functions: Vec<Function>,
    /// The `#[device]` structs, each after the structs its fields contain.
    pub structs: Vec<StructRef>,
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
    pub ret: Option<Ty>,
    /// Type and const parameters, in declaration order.
    pub generics: Vec<GenericParam>,
    pub body: Block,
    pub exprs: Vec<Expr>,
    pub locals: Vec<Local>,
    /// The file the function was written in, for `#line` directives.
    pub file: String,
    /// The `#[device]` type whose `impl` defines this function (its name is then
    /// `Type__method`), and how it takes `self`, if it does.
    pub owner: Option<Owner>,
    /// `#[kernel(launch_bounds(..))]`, emitted as `__launch_bounds__`.
    pub launch_bounds: Option<LaunchBounds>,
    /// The constants from outside the function its code names, indexed by `OuterConst::index`.
    pub outer: Vec<OuterUse>,
    /// Conversions written `u32::from(x)`: the converted value, the type, and where; a cast
    /// that the checker allows only where Rust has the lossless `From`.
    pub conversions: Vec<(ExprId, Scalar, Loc)>,
}

/// A constant defined outside the function, as its code names it.
pub struct OuterUse {
    /// The path as written, with the user's spans, resolved from the function's module.
    pub path: TokenStream,
    /// Where it is first named.
    pub span: Loc,
    /// The type it must have where the code fixes it: `usize` in a length.
    pub fixed: Option<Scalar>,
    /// `PATH as T`: the constant converted by Rust's `as` (its own type may stay unknown).
    pub cast: Option<Scalar>,
    /// An array of numbers (`const TAPS: [f32; 5]`) that the code indexes or takes the length
    /// of: the CUDA source holds it as a table of its values.
    pub table: bool,
}

/// The type a method belongs to.
#[derive(Clone, Debug)]
pub struct Owner {
    pub ty: Ty,
    /// The method's own name (`dist2`), as calls write it.
    pub method: String,
    /// How the method takes `self`; `None` for an associated function or constant.
    pub receiver: Option<PassBy>,
    /// An associated constant, read without a call: `Body::G`.
    pub constant: bool,
}

/// How a parameter is passed: by value, `&T` or `&mut T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassBy {
    Value,
    Ref,
    RefMut,
}

/// The mangled name of method `method` of the type named `owner`: a valid identifier in C++
/// and Rust alike.
pub fn method_name(owner: &str, method: &str) -> String {
    format!("{owner}__{method}")
}

/// What a kernel promises about its launches, so the CUDA compiler can budget registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The most threads per block any launch uses.
    pub max_threads: LaunchValue,
    /// Blocks that should fit on one multiprocessor at once (caps registers per thread).
    pub min_blocks: Option<LaunchValue>,
}

/// A launch bound: a number, or a constant from outside the kernel (`launch_bounds(BLOCK)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchValue {
    Known(u32),
    /// As written in the attribute, before the kernel is parsed.
    Named(&'static syn::Path),
    /// Once the kernel has recorded it among its outer constants.
    Outer(OuterConst),
}

impl LaunchValue {
    /// The bound as C++: the number, or the placeholder of the constant's value.
    pub fn cuda(self) -> String {
        match self {
            LaunchValue::Known(n) => n.to_string(),
            LaunchValue::Named(path) => unreachable!(
                "launch bound `{}` is resolved when the kernel is parsed",
                quote::ToTokens::to_token_stream(path)
            ),
            LaunchValue::Outer(constant) => constant.cuda(),
        }
    }
}

impl Function {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    /// The type of the const parameter `name` (`usize` or `bool`), if the function has one.
    pub fn const_param(&self, name: &str) -> Option<Scalar> {
        self.generics.iter().find_map(|g| match g {
            GenericParam::Const(n, ty) if *n == name => Some(*ty),
            GenericParam::Type(_) | GenericParam::Const(..) | GenericParam::Closure(_) => None,
        })
    }

    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }

    /// Whether the function declares static shared memory (`shared_array`).
    pub fn has_shared_arrays(&self) -> bool {
        self.exprs
            .iter()
            .any(|expr| matches!(expr.kind, ExprKind::SharedArray { .. }))
    }

    /// The name as Rust code calls it, for messages: `f`, `Body::new`.
    pub fn display_name(&self) -> String {
        match &self.owner {
            Some(owner) => format!("{}::{}", owner.ty.describe(), owner.method),
            None => self.name.clone(),
        }
    }

    /// How parameter `local` is passed, if it is one.
    pub fn param_pass(&self, local: LocalId) -> Option<PassBy> {
        self.params
            .iter()
            .find(|p| p.local == local)
            .map(|p| p.pass)
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
    /// `&T` / `&mut T` parameters of device functions (slices are `Value`: a slice is a
    /// reference already).
    pub pass: PassBy,
    /// A `#[constant]` table (`ty` is then an array), passed by value in the constant bank.
    pub constant: bool,
}

/// A variable: a parameter or a `let` binding.
pub struct Local {
    pub name: String,
    pub mutable: bool,
    /// The written type, for parameters and annotated `let`s.
    pub annotation: Option<Ty>,
    /// An element of a slice or array a `for` loop iterates over (`for v in x.iter()`): a
    /// copy of it, which `*v` reads as Rust's reference would.
    pub element: bool,
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
    /// `let x;`, assigned later on every path that reads it; also the variable that a block,
    /// `if`, `match` or `loop` computing a value with statements assigns (see `parse/values.rs`).
    Declare {
        local: LocalId,
    },
    /// `let (a, b) = init;` (`None` for a `_`).
    LetTuple {
        locals: Vec<Option<LocalId>>,
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
    /// `for var in start..end` or `for var in (start..end).step_by(step)` (also `..=`).
    For {
        var: LocalId,
        start: ExprId,
        end: ExprId,
        step: Option<ExprId>,
        body: Block,
        label: Option<String>,
        /// `#[unroll]` / `#[unroll(N)]`: `#pragma unroll` / `#pragma unroll N`.
        unroll: Unroll,
        /// `a..=b`: the loop runs through `end` too.
        inclusive: bool,
        /// `(a..b).rev()`: from the last value down to `start`.
        reverse: bool,
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
    /// `assert!`, `assert_eq!`, `assert_ne!`, `panic!` and the `debug_assert*!` forms.
    Assert(Assertion),
    /// `print!`, or `println!` (`newline`).
    Print {
        format: FormatArgs,
        newline: bool,
    },
}

impl StmtKind {
    /// The blocks a statement holds directly, in source order.
    pub fn blocks(&self) -> Vec<&Block> {
        match self {
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => std::iter::once(then_block).chain(else_block).collect(),
            StmtKind::While { body, .. }
            | StmtKind::Loop { body, .. }
            | StmtKind::For { body, .. } => {
                vec![body]
            }
            StmtKind::Match { arms, .. } => arms.iter().map(|(_, block)| block).collect(),
            StmtKind::Block(block) => vec![block],
            StmtKind::Let { .. }
            | StmtKind::Declare { .. }
            | StmtKind::LetTuple { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Break(_)
            | StmtKind::Continue(_)
            | StmtKind::Return(_)
            | StmtKind::Expr(_)
            | StmtKind::Assert(_)
            | StmtKind::Print { .. } => Vec::new(),
        }
    }
}

/// A format string and its arguments, as `assert!`, `panic!` and `println!` take them.
pub struct FormatArgs {
    pub template: Template,
    /// The arguments given, then the variables the string names inline (`{x}`).
    pub args: Vec<ExprId>,
}

/// An assertion or a `panic!`.
pub struct Assertion {
    pub kind: AssertKind,
    /// `debug_assert*!`: compiled into checked builds only.
    pub debug: bool,
    /// The message given after the operands.
    pub message: Option<FormatArgs>,
    /// Its number among its function's assertions; with the function's position in the
    /// program, its entry in the kernel's message table.
    pub number: u32,
}

/// What an assertion checks.
pub enum AssertKind {
    /// `assert!(cond)`, with the condition as written for the default message.
    Holds { cond: ExprId, text: String },
    /// `assert_eq!(left, right)`.
    Eq { left: ExprId, right: ExprId },
    /// `assert_ne!(left, right)`.
    Ne { left: ExprId, right: ExprId },
    /// `panic!`, or with the words Rust gives them `unreachable!`, `todo!` and
    /// `unimplemented!`: fails whenever reached.
    Panic { words: Option<&'static str> },
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
    /// `base.name`: a field of a `#[device]` struct, or `.x`, `.y`, `.z` of a `Dim3`/`Index3`.
    Field {
        base: ExprId,
        name: String,
        name_span: Loc,
    },
    /// `Body { pos, mass: 1.0 }`, fields as written.
    StructLit {
        ty: StructRef,
        fields: Vec<(String, ExprId)>,
    },
    /// `Type::name(args)`: an associated function of a `#[device]` type (`Body::new(..)`), or
    /// `Type::NAME` (no call) for an associated constant.
    AssocCall {
        ty: Ty,
        name: String,
        name_span: Loc,
        args: Vec<ExprId>,
        constant: bool,
    },
    /// `Op::Add`: a variant of a `#[device]` enum.
    Variant {
        ty: EnumRef,
        name: String,
    },
    /// `&x` / `&mut x` passed to a device function's reference parameter.
    Ref {
        expr: ExprId,
        mutable: bool,
    },
    /// `*r`: the value behind a reference parameter.
    Deref(ExprId),
    /// `&x[a..b]`, `&mut x[a..]`, `&x[..b]`: a part of a slice or of shared memory.
    SubSlice {
        base: ExprId,
        start: Option<ExprId>,
        end: Option<ExprId>,
        /// `a..=b`.
        inclusive: bool,
        mutable: bool,
    },
    /// `(a, b)`.
    Tuple {
        elems: Vec<ExprId>,
    },
    /// `t.0`.
    TupleField {
        base: ExprId,
        index: usize,
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
        elem: Ty,
        len: Len,
    },
    /// A kernel's const parameter used as a value.
    GenericConst(&'static str),
    /// A constant defined outside the function (`TILE`, `consts::TILE`).
    Outer(OuterConst),
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
        elem: Ty,
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

/// What a `for` loop asks of the CUDA compiler's unrolling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unroll {
    /// No attribute: the compiler decides.
    Default,
    /// `#[unroll]`: fully.
    Full,
    /// `#[unroll(N)]`: by a factor of `N`.
    Times(u32),
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
    /// `a..=b` (`inclusive`) or `a..b`; `a..` and `..=b` leave an end open.
    Range {
        start: Option<ExprId>,
        end: Option<ExprId>,
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

    /// The method of the `core::ops` trait a `#[device]` type implements this operator with.
    pub fn operator_method(self) -> Option<&'static str> {
        Some(match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::Shl
            | BinOp::Shr
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::And
            | BinOp::Or => return None,
        })
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

impl ExprKind {
    /// The expressions this one is made of directly (a closure's body is statements, not
    /// parts).
    pub fn children(&self) -> Vec<ExprId> {
        children(self)
    }
}

/// What [`ExprKind::children`] returns.
fn children(kind: &ExprKind) -> Vec<ExprId> {
    match kind {
        ExprKind::Lit(_)
        | ExprKind::Local(_)
        | ExprKind::Builtin(_)
        | ExprKind::Variant { .. }
        | ExprKind::Const { .. }
        | ExprKind::SharedArray { .. }
        | ExprKind::GenericConst(_)
        | ExprKind::Outer(_)
        | ExprKind::DynamicShared { .. }
        | ExprKind::Closure { .. } => Vec::new(),
        ExprKind::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        ExprKind::Unary { operand: e, .. }
        | ExprKind::Cast { expr: e, .. }
        | ExprKind::Len(e)
        | ExprKind::Field { base: e, .. }
        | ExprKind::Ref { expr: e, .. }
        | ExprKind::Deref(e)
        | ExprKind::TupleField { base: e, .. }
        | ExprKind::FromBits { bits: e, .. }
        | ExprKind::Convert { expr: e, .. }
        | ExprKind::ArrayRepeat { value: e, .. } => vec![*e],
        ExprKind::Index { base, index } => vec![*base, *index],
        ExprKind::Method { receiver, args, .. } => std::iter::once(*receiver)
            .chain(args.iter().copied())
            .collect(),
        ExprKind::Call { args, .. }
        | ExprKind::AssocCall { args, .. }
        | ExprKind::Intrinsic { args, .. }
        | ExprKind::Tuple { elems: args }
        | ExprKind::ArrayList { elems: args } => args.clone(),
        ExprKind::StructLit { fields, .. } => fields.iter().map(|(_, e)| *e).collect(),
        ExprKind::SubSlice {
            base, start, end, ..
        } => std::iter::once(*base).chain(*start).chain(*end).collect(),
        ExprKind::Match { scrutinee, arms } => std::iter::once(*scrutinee)
            .chain(arms.iter().flat_map(|(patterns, value)| {
                patterns
                    .iter()
                    .flat_map(pattern_exprs)
                    .chain(std::iter::once(*value))
            }))
            .collect(),
        ExprKind::CallClosure { callee, args } => std::iter::once(*callee)
            .chain(args.iter().copied())
            .collect(),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => vec![*cond, *then_value, *else_value],
    }
}

/// The expressions of a `match` arm's pattern.
fn pattern_exprs(pattern: &Pattern) -> Vec<ExprId> {
    match pattern {
        Pattern::Value(e) => vec![*e],
        Pattern::Range { start, end, .. } => start.iter().chain(end).copied().collect(),
        Pattern::Wild => Vec::new(),
    }
}
