//! Stage 3c: typed IR → the CPU twin, Rust that runs one thread of the kernel on the CPU
//! backend with the semantics it has on the GPU.
//!
//! The twin reads its arguments from `CpuArgs` and its position from `ThreadCtx`, touches memory
//! through `CpuSlice` (bounds-checked, recording a panic instead of unwinding), and wraps integer
//! arithmetic as release Rust and the CUDA code do. Rust has labels, `match` and ranges, so control
//! flow maps one to one. Intrinsics are spelled by their entries in `crate::intrinsics`
//! (through [`CpuWriter`]); one that synchronizes makes the kernel need coroutines.

mod user_types;

use crate::check::{Types, FLOAT_CONSTANTS};
use crate::emit::assertions::{message_expr, recorded_values};
use crate::intrinsics::CpuWriter;
use crate::ir::*;
use crate::types::{Bound, ClosureTy, GenericArg, Len, Scalar, Ty};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// The twin of `program`'s kernel and twins of its device functions, as Rust source, plus
/// whether the kernel needs barriers (and so coroutines) on the CPU.
pub struct CpuTwin {
    pub source: String,
    pub needs_sync: bool,
}

/// Emits the CPU twin; `rt` is the runtime crate's path as Rust source.
pub fn emit_twin(program: &Program, types: &[Types], rt: &str) -> CpuTwin {
    let mut slots = Slots::default();
    for (f, function) in program.functions.iter().enumerate() {
        if f != 0 && !function.generics.is_empty() {
            // Numbered per instantiation as the bodies are written.
            continue;
        }
        for (e, expr) in function.exprs.iter().enumerate() {
            if matches!(expr.kind, ExprKind::SharedArray { .. }) {
                slots.slot(f, e, Vec::new());
            }
        }
    }
    let slots = RefCell::new(slots);
    let mut source = String::new();
    let mut needs_sync = false;
    let instantiations = instantiations(program.root());
    // A generic kernel gets one body per instantiation, a generic device function one per
    // instantiation its callers reach (found as the bodies are written).
    let mut work: Vec<(usize, Vec<(u8, Scalar)>)> = Vec::new();
    for (f, function) in program.functions.iter().enumerate() {
        if f == 0 {
            work.extend(instantiations.iter().map(|s| (0, s.clone())));
        } else if function.generics.is_empty() {
            work.push((f, Vec::new()));
        }
    }
    let mut done: HashSet<(usize, Vec<(u8, Scalar)>)> = HashSet::new();
    let mut next = 0;
    while next < work.len() {
        let (f, substitution) = work[next].clone();
        next += 1;
        if !done.insert((f, substitution.clone())) {
            continue;
        }
        let mut writer = Twin {
            rt,
            program,
            function: &program.functions[f],
            types: &types[f],
            index: f,
            slots: &slots,
            subst: &substitution,
            out: String::new(),
            needs_sync: false,
            wanted: Vec::new(),
        };
        writer.function();
        needs_sync |= writer.needs_sync;
        source.push_str(&writer.out);
        for (name, callee_substitution) in writer.wanted {
            if let Some((callee, function)) = program.function(&name) {
                if !function.generics.is_empty() {
                    work.push((callee, callee_substitution));
                }
            }
        }
    }
    // With type parameters, `__cpu_twin` picks the body; with const parameters alone, the
    // one body is `__cpu_twin` itself.
    if instantiations.iter().any(|s| !s.is_empty()) {
        source.push_str(&dispatcher(program.root(), &instantiations, rt));
    }
    let _ = writeln!(
        source,
        "#[inline(always)]\nfn __gpu_idx(i: usize, len: usize, t: &{rt}::cpu::ThreadCtx, line: u32) -> usize {{\n\
         if i < len {{ i }} else {{ t.fail(1, line, i as u64, len as u64); 0 }}\n}}"
    );
    CpuTwin { source, needs_sync }
}

/// The runtime's number of each static shared array: per declaration (function, expression)
/// and, in a generic device function, per instantiation.
#[derive(Default)]
struct Slots(HashMap<(usize, usize, Substitution), u32>);

/// The concrete type of each type parameter of a body, by the parameter's index.
type Substitution = Vec<(u8, Scalar)>;

impl Slots {
    fn slot(&mut self, function: usize, expr: usize, instance: Substitution) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry((function, expr, instance)).or_insert(next)
    }
}

/// The most instantiations a generic kernel's twin is built for.
const MAX_INSTANTIATIONS: usize = 16;

/// The concrete types each type parameter's bound allows, combined: one substitution per twin
/// body. (The half types' float methods go through `f32`, see `Twin::method`.)
fn instantiations(kernel: &Function) -> Vec<Vec<(u8, Scalar)>> {
    let mut all: Vec<Vec<(u8, Scalar)>> = vec![Vec::new()];
    for generic in &kernel.generics {
        let GenericParam::Type(g) = generic else {
            continue;
        };
        let choices: &[Scalar] = match g.bound {
            Bound::Float => &[Scalar::F32, Scalar::F64, Scalar::F16, Scalar::Bf16],
            Bound::Integer => &[
                Scalar::I8,
                Scalar::U8,
                Scalar::I16,
                Scalar::U16,
                Scalar::I32,
                Scalar::U32,
                Scalar::I64,
                Scalar::U64,
                Scalar::Usize,
            ],
            Bound::Number => &[
                Scalar::I8,
                Scalar::U8,
                Scalar::I16,
                Scalar::U16,
                Scalar::I32,
                Scalar::U32,
                Scalar::I64,
                Scalar::U64,
                Scalar::Usize,
                Scalar::F32,
                Scalar::F64,
                Scalar::F16,
                Scalar::Bf16,
            ],
        };
        all = all
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |choice| {
                    let mut next = prefix.clone();
                    next.push((g.index, *choice));
                    next
                })
            })
            .collect();
    }
    all
}

/// The suffix naming one instantiation's body: `__cpu_twin_f32_u64`.
fn suffix(substitution: &[(u8, Scalar)]) -> String {
    substitution
        .iter()
        .map(|(_, s)| format!("_{}", s.rust_name()))
        .collect()
}

/// `__cpu_twin` for a generic kernel: picks the body of the launch's type arguments.
fn dispatcher(kernel: &Function, instantiations: &[Vec<(u8, Scalar)>], rt: &str) -> String {
    let params: Vec<u8> = kernel
        .generics
        .iter()
        .filter_map(|g| match g {
            GenericParam::Type(g) => Some(g.index),
            GenericParam::Const(_) | GenericParam::Closure(_) => None,
        })
        .collect();
    let scrutinee: Vec<String> = params
        .iter()
        .map(|i| format!("__gpu_args.template_type({i})"))
        .collect();
    let mut arms = String::new();
    for substitution in instantiations {
        let pattern: Vec<String> = substitution
            .iter()
            .map(|(_, s)| format!("Some({rt}::ScalarType::{})", s.runtime_variant()))
            .collect();
        let _ = writeln!(
            arms,
            "({},) => __cpu_twin{}(__gpu_args, __t),",
            pattern.join(", "),
            suffix(substitution)
        );
    }
    format!(
        "{ALLOWS}\nfn __cpu_twin(__gpu_args: &{rt}::cpu::CpuArgs<'_>, __t: &{rt}::cpu::ThreadCtx) {{\n\
         match ({},) {{\n{arms}\
         other => panic!(\"generic kernel `{}` has no CPU twin for {{other:?}}: on the CPU it runs for the types its bound allows\"),\n}}\n}}\n",
        scrutinee.join(", "),
        kernel.name
    )
}

/// Whether the CPU twin can be built: a generic kernel needs few enough instantiations.
pub fn supported(program: &Program) -> bool {
    instantiations(program.root()).len() <= MAX_INSTANTIATIONS
}

struct Twin<'a> {
    rt: &'a str,
    program: &'a Program,
    function: &'a Function,
    types: &'a Types,
    /// This function's position in the program, for shared-memory slots.
    index: usize,
    slots: &'a RefCell<Slots>,
    /// The concrete type of each of the kernel's type parameters, in this body.
    subst: &'a [(u8, Scalar)],
    out: String,
    needs_sync: bool,
    /// The generic device functions this body calls, with their concrete type arguments.
    wanted: Vec<(String, Vec<(u8, Scalar)>)>,
}

/// One intrinsic call being spelled: the twin's answers to what the spelling asks.
struct CpuCall<'t, 'a> {
    twin: &'t mut Twin<'a>,
    args: &'t [ExprId],
    line: usize,
}

impl CpuWriter for CpuCall<'_, '_> {
    fn count(&self) -> usize {
        self.args.len()
    }

    fn arg(&mut self, i: usize) -> String {
        self.twin.expr(self.args[i])
    }

    fn rt(&self) -> String {
        self.twin.rt.to_string()
    }

    fn line(&self) -> usize {
        self.line
    }
}

const ALLOWS: &str = "#[allow(unused_parens, unused_mut, unused_variables, unused_assignments, \
                      unused_braces, unreachable_code, unused_labels, non_snake_case, \
                      clippy::all)]";

impl Twin<'_> {
    /// `scalar` with the kernel's type parameters replaced by this body's types.
    fn concrete(&self, scalar: Scalar) -> Scalar {
        match scalar {
            Scalar::Generic(g) => self
                .subst
                .iter()
                .find(|(index, _)| *index == g.index)
                .map_or(scalar, |(_, s)| *s),
            other => other,
        }
    }

    /// The concrete scalar type of an expression.
    fn scalar_of(&self, id: ExprId) -> Scalar {
        self.concrete(self.types.scalar(id))
    }

    fn rust_type(&self, scalar: Scalar) -> String {
        match self.concrete(scalar) {
            Scalar::F16 => format!("{}::half::f16", self.rt),
            Scalar::Bf16 => format!("{}::half::bf16", self.rt),
            other => other.rust_name().to_string(),
        }
    }

    /// The twin's Rust spelling of a value type: `#[device]` structs are the user's own, enums
    /// their `repr` integers.
    fn rust_ty(&self, ty: Ty) -> String {
        match ty {
            Ty::Scalar(s) => self.rust_type(s),
            Ty::Array { elem, len } => format!("[{}; {}]", self.rust_ty(*elem), len.describe()),
            Ty::Struct(def) => def.0.path.clone(),
            Ty::Enum(def) => self.rust_type(def.0.repr),
            Ty::Tuple(elems) => {
                let elems: Vec<String> = elems.iter().map(|e| self.rust_ty(*e)).collect();
                format!("({})", elems.join(", "))
            }
            Ty::Closure(ClosureTy::Bound(index)) => {
                let bound = self.function.generics.iter().find_map(|g| match g {
                    GenericParam::Closure(bound) if bound.index == index => Some(*bound),
                    _ => None,
                });
                let Some(bound) = bound else {
                    unreachable!("parsed: a closure parameter's type is a bound of the function")
                };
                let params: Vec<String> = bound.params.iter().map(|s| self.rust_type(*s)).collect();
                let ret = bound
                    .ret
                    .map(|s| format!(" -> {}", self.rust_type(s)))
                    .unwrap_or_default();
                // Closures capture by copy, so they are `Copy`: a body may pass one on and call it.
                format!("impl Fn({}){ret} + Copy", params.join(", "))
            }
            Ty::Slice { .. }
            | Ty::Shared { .. }
            | Ty::Dim3
            | Ty::Index3
            | Ty::Unit
            | Ty::Closure(ClosureTy::Expr(_)) => unreachable!("a value of type {ty:?}"),
        }
    }

    fn param_type(&self, param: &Param) -> String {
        match (param.ty, param.pass) {
            (Ty::Slice { elem, .. }, _) => {
                format!("{}::cpu::CpuSlice<'_, {}>", self.rt, self.rust_ty(*elem))
            }
            (ty, PassBy::Value) => self.rust_ty(ty),
            (ty, PassBy::Ref) => format!("&{}", self.rust_ty(ty)),
            (ty, PassBy::RefMut) => format!("&mut {}", self.rust_ty(ty)),
        }
    }

    /// A local's name in the twin (`self` is a keyword there).
    fn local_name(&self, local: LocalId) -> String {
        match self.function.local(local).name.as_str() {
            "self" => "__self".to_string(),
            name => name.to_string(),
        }
    }

    fn function(&mut self) {
        let f = self.function;
        let rt = self.rt;
        let _ = writeln!(self.out, "{ALLOWS}");
        match f.kind {
            FnKind::Kernel => {
                let name = format!("__cpu_twin{}", suffix(self.subst));
                let _ = writeln!(
                    self.out,
                    "fn {name}(__gpu_args: &{rt}::cpu::CpuArgs<'_>, __t: &{rt}::cpu::ThreadCtx) {{"
                );
                for generic in &f.generics {
                    if let GenericParam::Const(name) = generic {
                        let index = f
                            .generics
                            .iter()
                            .position(|g| matches!(g, GenericParam::Const(n) if n == name))
                            .unwrap_or(0);
                        let _ = writeln!(
                            self.out,
                            "let {name}: usize = __gpu_args.template_const({index}) as usize;"
                        );
                    }
                }
                for (i, param) in f.params.iter().enumerate() {
                    let name = self.local_name(param.local);
                    let line = match param.ty {
                        Ty::Scalar(s) => format!(
                            "let mut {name}: {} = __gpu_args.scalar::<{}>({i});",
                            self.rust_type(s),
                            self.rust_type(s)
                        ),
                        // The launcher passes an enum as its `repr` integer.
                        Ty::Enum(def) => format!(
                            "let mut {name}: {0} = __gpu_args.scalar::<{0}>({i});",
                            self.rust_type(def.0.repr)
                        ),
                        Ty::Slice { elem, .. } => format!(
                            "let {name} = __gpu_args.slice::<{}>({i});",
                            self.rust_ty(*elem)
                        ),
                        Ty::Array {
                            elem,
                            len: Len::Known(len),
                        } if param.constant => format!(
                            "let {name}: [{ty}; {len}] = __gpu_args.constant::<{ty}, {len}>({i});",
                            ty = self.rust_ty(*elem)
                        ),
                        ty => format!(
                            "let mut {name}: {0} = __gpu_args.value::<{0}>({i});",
                            self.rust_ty(ty)
                        ),
                    };
                    let _ = writeln!(self.out, "{line}");
                }
            }
            FnKind::Device => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| {
                        let local = f.local(p.local);
                        let binding = if local.mutable { "mut " } else { "" };
                        format!(
                            "{binding}{}: {}",
                            self.local_name(p.local),
                            self.param_type(p)
                        )
                    })
                    .collect();
                let ret = f
                    .ret
                    .map(|r| format!(" -> {}", self.rust_ty(r)))
                    .unwrap_or_default();
                // A const parameter is a value known at launch on the CPU, passed first.
                let consts: Vec<String> = f
                    .generics
                    .iter()
                    .filter_map(|g| match g {
                        GenericParam::Const(name) => Some(format!("{name}: usize, ")),
                        GenericParam::Type(_) | GenericParam::Closure(_) => None,
                    })
                    .collect();
                let _ = writeln!(
                    self.out,
                    "fn __gpu_dev_{}{}(__t: &{rt}::cpu::ThreadCtx, {}{}){ret} {{",
                    f.name,
                    suffix(self.subst),
                    consts.concat(),
                    params.join(", ")
                );
            }
        }
        self.block_body(&f.body);
        let _ = writeln!(self.out, "}}");
    }

    fn block_body(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn block(&mut self, block: &Block) -> String {
        let saved = std::mem::take(&mut self.out);
        self.block_body(block);
        let body = std::mem::replace(&mut self.out, saved);
        format!("{{\n{body}}}")
    }

    fn label(label: &Option<String>) -> String {
        label
            .as_ref()
            .map(|l| format!("'{l}: "))
            .unwrap_or_default()
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let line = stmt.span.line();
        let code = match &stmt.kind {
            StmtKind::Let { local, init } => {
                let name = self.local_name(*local);
                let value = self.expr(*init);
                match self.types.local(*local) {
                    _ if name == "_" => format!("let _ = {value};"),
                    Ty::Scalar(s) => format!("let mut {name}: {} = {value};", self.rust_type(s)),
                    _ => format!("let mut {name} = {value};"),
                }
            }
            StmtKind::LetTuple { locals, init } => {
                let names: Vec<String> = locals
                    .iter()
                    .map(|local| match local {
                        Some(local) => format!("mut {}", self.local_name(*local)),
                        None => "_".to_string(),
                    })
                    .collect();
                format!("let ({}) = {};", names.join(", "), self.expr(*init))
            }
            StmtKind::Assign { place, op, value } => self.assign(*place, *op, *value),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let cond = self.expr(*cond);
                let then_code = self.block(then_block);
                match else_block {
                    Some(block) => format!("if {cond} {then_code} else {}", self.block(block)),
                    None => format!("if {cond} {then_code}"),
                }
            }
            StmtKind::While { cond, body, label } => {
                let cond = self.expr(*cond);
                format!("{}while {cond} {}", Self::label(label), self.block(body))
            }
            StmtKind::Loop { body, label } => {
                format!("{}loop {}", Self::label(label), self.block(body))
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                label,
                inclusive,
                ..
            } => {
                let name = self.local_name(*var);
                let dots = if *inclusive { "..=" } else { ".." };
                let range = format!("({}{dots}{})", self.expr(*start), self.expr(*end));
                let iter = match step {
                    Some(step) => format!("{range}.step_by({})", self.expr(*step)),
                    None => range,
                };
                format!(
                    "{}for {name} in {iter} {}",
                    Self::label(label),
                    self.block(body)
                )
            }
            StmtKind::Break(label) => match label {
                Some(l) => format!("break '{l};"),
                None => "break;".to_string(),
            },
            StmtKind::Continue(label) => match label {
                Some(l) => format!("continue '{l};"),
                None => "continue;".to_string(),
            },
            StmtKind::Match { scrutinee, arms } => {
                let catch_all = self.enum_catch_all(*scrutinee, arms.iter().map(|(p, _)| p));
                let scrutinee = self.expr(*scrutinee);
                let mut code = format!("match {scrutinee} {{\n");
                for (i, (patterns, body)) in arms.iter().enumerate() {
                    let pattern = if Some(i) == catch_all {
                        "_".to_string()
                    } else {
                        self.patterns(patterns)
                    };
                    let body = self.block(body);
                    let _ = writeln!(code, "{pattern} => {body}");
                }
                code.push('}');
                code
            }
            StmtKind::Return(None) => "return;".to_string(),
            StmtKind::Return(Some(value)) => format!("return {};", self.expr(*value)),
            StmtKind::Block(block) => self.block(block),
            StmtKind::Expr(expr) => format!("{};", self.expr(*expr)),
            StmtKind::Assert(assertion) => self.assertion(assertion, line),
            StmtKind::Print { format, newline } => {
                let mut call = format!("{:?}", format.template.rust_text());
                for arg in &format.args {
                    let _ = write!(call, ", {}", self.expr(*arg));
                }
                let name = if *newline { "println" } else { "print" };
                format!("::std::{name}!({call});")
            }
        };
        let _ = writeln!(self.out, "{code} // line {line}");
    }

    /// An assertion: the twin words the message itself, with the `format!` the host's message
    /// table uses for the GPU, and ends the thread.
    fn assertion(&mut self, assertion: &Assertion, line: usize) -> String {
        let compared = matches!(
            assertion.kind,
            AssertKind::Eq { .. } | AssertKind::Ne { .. }
        );
        let values: Vec<String> = recorded_values(assertion)
            .into_iter()
            .enumerate()
            .map(|(i, value)| match i {
                0 if compared => "__left".to_string(),
                1 if compared => "__right".to_string(),
                _ => self.expr(value),
            })
            .collect();
        let fail = format!(
            "__t.assert_failed({:?}, {line}, {});",
            self.function.file,
            message_expr(assertion, &values)
        );
        let code = match &assertion.kind {
            AssertKind::Holds { cond, .. } => format!("if !({}) {{ {fail} }}", self.expr(*cond)),
            AssertKind::Eq { left, right } | AssertKind::Ne { left, right } => {
                let op = if matches!(assertion.kind, AssertKind::Eq { .. }) {
                    "=="
                } else {
                    "!="
                };
                format!(
                    "{{ let __left = {}; let __right = {}; if !(__left {op} __right) {{ {fail} }} }}",
                    self.expr(*left),
                    self.expr(*right)
                )
            }
            AssertKind::Panic { .. } => fail,
        };
        if assertion.debug {
            format!("if __t.checked() {{ {code} }}")
        } else {
            code
        }
    }

    fn patterns(&mut self, patterns: &[Pattern]) -> String {
        patterns
            .iter()
            .map(|p| match p {
                Pattern::Wild => "_".to_string(),
                Pattern::Value(v) => self.pattern_literal(*v),
                Pattern::Range {
                    start,
                    end,
                    inclusive,
                } => {
                    let dots = if *inclusive { "..=" } else { ".." };
                    format!(
                        "{}{dots}{}",
                        self.pattern_literal(*start),
                        self.pattern_literal(*end)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// A literal as a pattern: no parentheses, and a negative number as `-5i32`.
    fn pattern_literal(&mut self, id: ExprId) -> String {
        match &self.function.expr(id).kind {
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => format!("-{}", self.pattern_literal(*operand)),
            ExprKind::Lit(lit) => self.literal(lit, self.scalar_of(id)),
            _ => self.expr(id),
        }
    }

    fn assign(&mut self, place: ExprId, op: Option<BinOp>, value: ExprId) -> String {
        if let Some(code) = self.user_assign(place, op, value) {
            return code;
        }
        let value_code = match op {
            None => self.expr(value),
            Some(op) => self.binary(op, place, value),
        };
        let loc = self.function.expr(place).span;
        match &self.function.expr(place).kind {
            ExprKind::Local(local) => {
                format!("{} = {value_code};", self.local_name(*local))
            }
            ExprKind::Index { base, index } => match self.types.expr(*base) {
                Ty::Array { len, .. } => {
                    let base_code = self.expr(*base);
                    let index = self.array_index(*index, len, loc);
                    format!("{base_code}[{index}] = {value_code};")
                }
                _ => {
                    let base_code = self.expr(*base);
                    let index = self.expr(*index);
                    format!(
                        "{base_code}.set({index}, {value_code}, __t, {});",
                        loc.line()
                    )
                }
            },
            _ => unreachable!("checked: assignable places"),
        }
    }

    fn array_index(&mut self, index: ExprId, len: Len, loc: Loc) -> String {
        let code = self.expr(index);
        let len = len.rust();
        format!("__gpu_idx({code}, {len}, __t, {})", loc.line())
    }

    fn literal(&self, lit: &Lit, scalar: Scalar) -> String {
        let generic = matches!(scalar, Scalar::Generic(_));
        let scalar = self.concrete(scalar);
        // A literal of a type parameter instantiated with a half type: Rust has no suffix.
        if scalar.is_half() {
            let value = match lit {
                Lit::Int { value, .. } => format!("{value}f64"),
                Lit::Float { digits, .. } => format!("{digits}f64"),
                Lit::Bool(b) => b.to_string(),
            };
            return format!("{}::from_f64({value})", self.rust_type(scalar));
        }
        match lit {
            Lit::Bool(b) => b.to_string(),
            // A type parameter's literal may not fit a small integer it is instantiated with;
            // the CUDA code truncates it (`(T)300`), and so does `as`.
            Lit::Int { value, .. } if generic && scalar.is_small_int() => {
                format!("({value}u64 as {})", scalar.rust_name())
            }
            Lit::Int { value, .. } => format!("{value}{}", scalar.rust_name()),
            Lit::Float { digits, .. } => {
                let mut text = digits.clone();
                if !text.contains(['.', 'e', 'E']) {
                    text.push_str(".0");
                }
                format!("{text}{}", scalar.rust_name())
            }
        }
    }

    fn expr(&mut self, id: ExprId) -> String {
        let function = self.function;
        let loc = function.expr(id).span;
        let line = loc.line();
        match &function.expr(id).kind {
            ExprKind::Lit(lit) => self.literal(lit, self.scalar_of(id)),
            ExprKind::Local(local) => self.local_name(*local),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } if matches!(self.types.expr(*operand), Ty::Struct(_)) => {
                let name = method_name(&self.types.expr(*operand).describe(), "neg");
                self.user_call(&name, &[*operand])
            }
            ExprKind::Unary { op, operand } => {
                let scalar = self.scalar_of(id);
                let inner = self.expr(*operand);
                match op {
                    UnOp::Neg if scalar.is_int() => format!("({inner}).wrapping_neg()"),
                    UnOp::Neg => format!("(-{inner})"),
                    UnOp::Not => format!("(!{inner})"),
                }
            }
            ExprKind::Cast { expr, to } => {
                let inner = self.expr(*expr);
                // Only a type parameter instantiated with `f16`/`bf16` casts a half type here
                // (the checker rejects `as` on them): through `f64`, exact for every `f16`.
                let from = self.scalar_of(*expr);
                let to_scalar = self.concrete(*to);
                let inner = if from.is_half() {
                    format!("({inner}).to_f64()")
                } else {
                    inner
                };
                if to_scalar.is_half() {
                    format!("{}::from_f64(({inner}) as f64)", self.rust_type(to_scalar))
                } else {
                    format!("(({inner}) as {})", self.rust_type(*to))
                }
            }
            ExprKind::FromBits { bits, to } => {
                let ty = self.rust_type(*to);
                let bits = self.expr(*bits);
                if matches!(to, Scalar::Generic(_)) {
                    format!("{}::cpu::from_bits::<{ty}>({bits})", self.rt)
                } else {
                    format!("{ty}::from_bits({bits})")
                }
            }
            ExprKind::Convert { expr, to } => {
                let inner = self.expr(*expr);
                if to.is_half() {
                    let from = self.scalar_of(*expr);
                    format!(
                        "{}::from_{}({inner})",
                        self.rust_type(*to),
                        from.rust_name()
                    )
                } else {
                    inner
                }
            }
            ExprKind::Index { base, .. } if self.memory_place(*base).is_some() => {
                let place = self.memory_place(id).expect("a part of memory");
                format!("{place}.get()")
            }
            ExprKind::Index { base, index } => match self.types.expr(*base) {
                Ty::Array { len, .. } => {
                    let base_code = self.expr(*base);
                    let index = self.array_index(*index, len, loc);
                    format!("{base_code}[{index}]")
                }
                _ => {
                    let base_code = self.expr(*base);
                    let index = self.expr(*index);
                    format!("{base_code}.get({index}, __t, {line})")
                }
            },
            ExprKind::Len(base) => match self.types.expr(*base) {
                Ty::Array {
                    len: Len::Known(n), ..
                } => format!("{n}usize"),
                _ => format!("{}.len()", self.expr(*base)),
            },
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if matches!(self.types.expr(*receiver), Ty::Struct(_) | Ty::Enum(_)) => {
                let name = method_name(&self.types.expr(*receiver).describe(), method);
                let all: Vec<ExprId> = std::iter::once(*receiver)
                    .chain(args.iter().copied())
                    .collect();
                self.user_call(&name, &all)
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } => self.method(*receiver, method, args),
            ExprKind::Builtin(_) => unreachable!("checked: builtins are read through an axis"),
            ExprKind::Field { base, name, .. } => self.field(id, *base, name),
            ExprKind::StructLit { ty, fields } => self.struct_literal(Ty::Struct(*ty), fields),
            ExprKind::AssocCall { ty, name, args, .. } => {
                self.user_call(&method_name(&ty.describe(), name), args)
            }
            ExprKind::Variant { ty, name } => {
                let value = ty.0.variant(name).expect("checked: the variant exists");
                format!("{value}{}", self.rust_type(ty.0.repr))
            }
            ExprKind::Ref { expr, mutable } => {
                let inner = self.expr(*expr);
                if *mutable {
                    format!("&mut {inner}")
                } else {
                    format!("&{inner}")
                }
            }
            ExprKind::Deref(inner) => format!("(*{})", self.expr(*inner)),
            ExprKind::SubSlice {
                base,
                start,
                end,
                inclusive,
                mutable,
            } => {
                let base = self.expr(*base);
                let start = start.map_or("0usize".to_string(), |s| self.expr(s));
                let end = match end {
                    Some(end) if *inclusive => format!("({} + 1)", self.expr(*end)),
                    Some(end) => self.expr(*end),
                    None => format!("{base}.len()"),
                };
                format!("{base}.sub({start}, {end}, {mutable}, __t, {line})")
            }
            ExprKind::Tuple { elems } => {
                let elems: Vec<String> = elems.iter().map(|e| self.expr(*e)).collect();
                format!("({})", elems.join(", "))
            }
            ExprKind::Call { name, args, .. } => {
                let mut all = Vec::new();
                let mut substitution = Vec::new();
                for (i, arg) in self.types.calls.get(&id).into_iter().flatten().enumerate() {
                    match arg {
                        GenericArg::Type(scalar) => {
                            substitution.push((i as u8, self.concrete(*scalar)));
                        }
                        GenericArg::Const(Len::Known(n)) => all.push(format!("{n}usize")),
                        GenericArg::Const(Len::Param(name)) => all.push(name.to_string()),
                        GenericArg::Const(len @ Len::Expr(_)) => all.push(len.rust()),
                        // Rust infers the closure's type from the argument.
                        GenericArg::Closure => {}
                    }
                }
                let twin_name = format!("{name}{}", suffix(&substitution));
                let code = self.call_named(name, &twin_name, all, args);
                self.wanted.push((name.clone(), substitution));
                code
            }
            ExprKind::TupleField { base, index } => format!("{}.{index}", self.expr(*base)),
            ExprKind::Const { ty, name } => self.constant(*ty, name),
            ExprKind::GenericConst(name) => name.to_string(),
            ExprKind::Outer(constant) => constant.twin(),
            ExprKind::Closure { params, body, .. } => {
                // `move` copies the captures, `__t` (a reference) among them, so intrinsics in
                // the body reach the thread's context.
                let params: Vec<String> = params
                    .iter()
                    .map(|p| {
                        let ty = match self.types.local(*p) {
                            Ty::Scalar(s) => self.rust_type(s),
                            other => unreachable!(
                                "checked: closure parameters are scalars, found {other:?}"
                            ),
                        };
                        format!("{}: {ty}", function.local(*p).name)
                    })
                    .collect();
                let ret = match self.types.closure_rets.get(&id) {
                    Some(Ty::Scalar(s)) => format!(" -> {}", self.rust_type(*s)),
                    _ => String::new(),
                };
                let body = self.block(body);
                format!("(move |{}|{ret} {body})", params.join(", "))
            }
            ExprKind::CallClosure { callee, args } => {
                let callee = self.expr(*callee);
                let args: Vec<String> = args.iter().map(|a| self.expr(*a)).collect();
                format!("({callee})({})", args.join(", "))
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.expr(*cond),
                self.expr(*then_value),
                self.expr(*else_value)
            ),
            ExprKind::Intrinsic { op, args } => {
                self.needs_sync |= op.synchronizes();
                let mut call = CpuCall {
                    twin: self,
                    args,
                    line,
                };
                op.cpu(&mut call)
            }
            ExprKind::SharedArray { elem, len } => {
                // Each instantiation of a generic device function has its own array, as each
                // C++ template instance has; the kernel's bodies are alternatives and share.
                let instance = if self.index == 0 {
                    Vec::new()
                } else {
                    self.subst.to_vec()
                };
                let slot = self
                    .slots
                    .borrow_mut()
                    .slot(self.index, id.0 as usize, instance);
                let len = len.rust();
                format!("__t.shared_array::<{}>({slot}, {len})", self.rust_ty(*elem))
            }
            ExprKind::DynamicShared { elem } => {
                format!("__t.dynamic_shared::<{}>()", self.rust_ty(*elem))
            }
            ExprKind::ArrayRepeat { value, len } => match len {
                Len::Known(n) => format!("[{}; {n}]", self.expr(*value)),
                // A length known only at launch: on the heap, indexed the same way.
                Len::Param(name) => format!("vec![{}; {name}]", self.expr(*value)),
                Len::Expr(_) if len.needs_instantiation() => {
                    format!("vec![{}; {}]", self.expr(*value), len.rust())
                }
                Len::Expr(_) => format!("[{}; {}]", self.expr(*value), len.rust()),
            },
            ExprKind::ArrayList { elems } => {
                let items: Vec<String> = elems.iter().map(|e| self.expr(*e)).collect();
                format!("[{}]", items.join(", "))
            }
            ExprKind::Match { scrutinee, arms } => {
                let catch_all = self.enum_catch_all(*scrutinee, arms.iter().map(|(p, _)| p));
                let scrutinee = self.expr(*scrutinee);
                let mut code = format!("match {scrutinee} {{ ");
                for (i, (patterns, value)) in arms.iter().enumerate() {
                    let pattern = if Some(i) == catch_all {
                        "_".to_string()
                    } else {
                        self.patterns(patterns)
                    };
                    let _ = write!(code, "{pattern} => {}, ", self.expr(*value));
                }
                code.push('}');
                code
            }
        }
    }

    fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> String {
        if let user @ (Ty::Struct(_) | Ty::Enum(_)) = self.types.expr(lhs) {
            return self.user_binary(op, lhs, rhs, user);
        }
        let scalar = self.scalar_of(lhs);
        let line = self.function.expr(rhs).span.line();
        let l = self.expr(lhs);
        let r = self.expr(rhs);
        if scalar.is_int() {
            let method = match op {
                BinOp::Add => Some("wrapping_add"),
                BinOp::Sub => Some("wrapping_sub"),
                BinOp::Mul => Some("wrapping_mul"),
                _ => None,
            };
            if let Some(method) = method {
                return format!("({l}).{method}({r})");
            }
            match op {
                BinOp::Div | BinOp::Rem => {
                    let (checked, wrapping) = if op == BinOp::Div {
                        ("checked_div", "wrapping_div")
                    } else {
                        ("checked_rem", "wrapping_rem")
                    };
                    return format!(
                        "{{ let (__a, __b) = ({l}, {r}); if __b == 0 {{ __t.fail(2, {line}, __a as u64, 0); 0 }} \
                         else {{ if __a.{checked}(__b).is_none() {{ __t.fail(3, {line}, __a as u64, __b as u64); }} \
                         __a.{wrapping}(__b) }} }}"
                    );
                }
                BinOp::Shl => return format!("({l}).wrapping_shl(({r}) as u32)"),
                BinOp::Shr => return format!("({l}).wrapping_shr(({r}) as u32)"),
                _ => {}
            }
        }
        format!("({l} {} {r})", op.symbol())
    }

    fn method(&mut self, receiver: ExprId, method: &str, args: &[ExprId]) -> String {
        let written = self.types.scalar(receiver);
        let generic = matches!(written, Scalar::Generic(_));
        let scalar = self.scalar_of(receiver);
        let r = self.expr(receiver);
        let args: Vec<String> = args.iter().map(|a| self.expr(*a)).collect();
        let entry = crate::methods::lookup(method, written);
        if let (true, true, Some(entry)) = (generic && method != "to_bits", scalar.is_half(), entry)
        {
            // The `half` types lack the float methods: a type parameter instantiated with one
            // computes in `f32` and rounds back, as the CUDA code does.
            let r = format!("({r}).to_f32()");
            let args: Vec<String> = args
                .iter()
                .zip(entry.args)
                .map(|(arg, ty)| match ty {
                    crate::methods::ArgTy::Same => format!("({arg}).to_f32()"),
                    crate::methods::ArgTy::I32 | crate::methods::ArgTy::U32 => arg.clone(),
                })
                .collect();
            let code = self.method_code(method, r, &args, Scalar::F32, false);
            return match entry.ret {
                crate::methods::RetTy::Same => {
                    format!("{}::from_f32({code})", self.rust_type(scalar))
                }
                crate::methods::RetTy::Bool
                | crate::methods::RetTy::U32
                | crate::methods::RetTy::F32
                | crate::methods::RetTy::F64
                | crate::methods::RetTy::Bits
                | crate::methods::RetTy::U64 => code,
            };
        }
        self.method_code(method, r, &args, scalar, generic)
    }

    /// A method call on a receiver of the concrete `scalar`, its code `r` and `args` written.
    fn method_code(
        &self,
        method: &str,
        r: String,
        args: &[String],
        scalar: Scalar,
        generic: bool,
    ) -> String {
        let ty = self.rust_type(scalar);
        match method {
            // Not the concrete type's own `to_bits`: a type parameter's are always a `u64`.
            "to_bits" if generic => format!("{}::cpu::to_bits::<{ty}>({r})", self.rt),
            "abs" if scalar.is_int() => format!("({r}).wrapping_abs()"),
            "pow" => format!("({r}).wrapping_pow({})", args[0]),
            "clamp" => format!(
                "{{ let (__v, __lo, __hi) = ({r}, {}, {}); if __v < __lo {{ __lo }} else if __v > __hi {{ __hi }} else {{ __v }} }}",
                args[0], args[1]
            ),
            "rsqrt" => format!("(1.0 as {ty} / ({r}).sqrt())"),
            "fast_div" => format!("({r} / {})", args[0]),
            "fast_exp10" => format!("(10.0f32).powf({r})"),
            name if name.starts_with("fast_") => {
                let std_name = match &name["fast_".len()..] {
                    "exp" => "exp",
                    "ln" => "ln",
                    "log2" => "log2",
                    "log10" => "log10",
                    "sin" => "sin",
                    "cos" => "cos",
                    "tan" => "tan",
                    "tanh" => "tanh",
                    "powf" => "powf",
                    other => unreachable!("checked fast method {other}"),
                };
                format!("({r}).{std_name}({})", args.join(", "))
            }
            _ => format!("({r}).{method}({})", args.join(", ")),
        }
    }

    fn constant(&self, ty: Scalar, name: &str) -> String {
        let ty_name = self.rust_type(ty);
        let is_math_constant = ty.is_float()
            && FLOAT_CONSTANTS.contains(&name)
            && !matches!(
                name,
                "MAX" | "MIN" | "MIN_POSITIVE" | "EPSILON" | "INFINITY" | "NEG_INFINITY" | "NAN"
            );
        if is_math_constant {
            format!("::core::{ty_name}::consts::{name}")
        } else {
            format!("{ty_name}::{name}")
        }
    }
}
