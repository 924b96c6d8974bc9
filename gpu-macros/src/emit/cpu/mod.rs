//! Stage 3c: typed IR → the CPU twin, Rust that runs one thread of the kernel on the CPU
//! backend with the semantics it has on the GPU.
//!
//! The twin reads its arguments from `CpuArgs` and its position from `ThreadCtx`, touches memory
//! through `CpuSlice` (bounds-checked, recording a panic instead of unwinding), and wraps integer
//! arithmetic as release Rust and the CUDA code do. Rust has labels, `match` and ranges, so control
//! flow maps one to one. Intrinsics are spelled by their entries in `crate::intrinsics`
//! (through [`CpuWriter`]); one that synchronizes makes the kernel need coroutines.

mod expressions;
mod ownership;
mod statements;
mod user_types;

pub use ownership::{ownership, Ownership, View};

use crate::check::Types;
use crate::intrinsics::CpuWriter;
use crate::ir::*;
use crate::types::{ClosureTy, Scalar, Ty};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// The twin of `program`'s kernel and twins of its device functions, as Rust source, plus
/// whether the kernel needs barriers (and so coroutines) on the CPU.
pub struct CpuTwin {
    pub source: String,
    pub needs_sync: bool,
    /// Whether the source also has `__cpu_block`, which runs a whole block of a barrier-free
    /// kernel in one call.
    pub block: bool,
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
            binding: None,
            block: false,
            ownership: None,
            owned_loop: false,
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
    // A barrier-free kernel also gets a twin of a whole block per instantiation: its
    // arguments read once, and a loop over the block's threads around its inlined body.
    // One whose slices the macro proves owned or read-only also gets an owned loop, which
    // runs one-dimensional launches without the race checker with plain accesses.
    let block = !needs_sync;
    if block {
        let ownership = ownership(program.root(), &types[0]);
        let ownership = ownership.any().then_some(&ownership);
        for substitution in &instantiations {
            for owned_loop in std::iter::once(false).chain(ownership.map(|_| true)) {
                let mut writer = Twin {
                    rt,
                    program,
                    function: program.root(),
                    types: &types[0],
                    index: 0,
                    slots: &slots,
                    subst: substitution,
                    out: String::new(),
                    needs_sync: false,
                    wanted: Vec::new(),
                    binding: None,
                    block: true,
                    ownership,
                    owned_loop,
                };
                writer.function();
                source.push_str(&writer.out);
            }
        }
    }
    // With type parameters, `__cpu_twin` (and `__cpu_block`) picks the body; with const
    // parameters alone, the one body is `__cpu_twin` itself.
    if instantiations.iter().any(|s| !s.is_empty()) {
        source.push_str(&dispatcher(program.root(), &instantiations, rt, false));
        if block {
            source.push_str(&dispatcher(program.root(), &instantiations, rt, true));
        }
    }
    let _ = writeln!(
        source,
        "#[inline(always)]\nfn __gpu_idx<V: {rt}::cpu::ThreadView + ?Sized>(i: usize, len: usize, t: &V, line: u32) -> usize {{\n\
         if i < len {{ i }} else {{ {rt}::cpu::ThreadView::ctx(t).fail(1, line, i as u64, len as u64); 0 }}\n}}"
    );
    CpuTwin {
        source,
        needs_sync,
        block,
    }
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
        let choices: Vec<Scalar> = Scalar::ALL
            .into_iter()
            .filter(|s| g.bound.admits(*s))
            .collect();
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
fn dispatcher(
    kernel: &Function,
    instantiations: &[Vec<(u8, Scalar)>],
    rt: &str,
    block: bool,
) -> String {
    let (name, signature, call) = if block {
        (
            "__cpu_block",
            format!("__gpu_args: &{rt}::cpu::CpuArgs<'_>, __gpu_block: &mut {rt}::cpu::ThreadCtx, __gpu_first: u32"),
            "__gpu_args, __gpu_block, __gpu_first",
        )
    } else {
        (
            "__cpu_twin",
            format!("__gpu_args: &{rt}::cpu::CpuArgs<'_>, __t: &{rt}::cpu::ThreadCtx"),
            "__gpu_args, __t",
        )
    };
    let params: Vec<u8> = kernel
        .generics
        .iter()
        .filter_map(|g| match g {
            GenericParam::Type(g) => Some(g.index),
            GenericParam::Const(..) | GenericParam::Closure(_) => None,
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
            "({},) => {name}{}({call}),",
            pattern.join(", "),
            suffix(substitution)
        );
    }
    format!(
        "{ALLOWS}\nfn {name}({signature}) {{\n\
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
    /// The name a `let` binds the expression being written to, for shared arrays' names.
    binding: Option<String>,
    /// Whether this is the kernel's block twin (`__cpu_block`).
    block: bool,
    /// In a block twin, the parameters' views in the owned loop, when it has one.
    ownership: Option<&'a Ownership>,
    /// Whether this is the block twin's owned loop (`__cpu_block_owned`).
    owned_loop: bool,
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

    fn memory(&mut self, i: usize) -> String {
        let arg = self.args[i];
        let is_row = matches!(self.twin.function.expr(arg).kind, ExprKind::Index { .. })
            && matches!(self.twin.types.expr(arg), Ty::Array { .. });
        match is_row.then(|| self.twin.memory_place(arg)).flatten() {
            // A row of a shared array held flat is a slice already (see `memory_place`).
            Some(place) if self.twin.is_shared_row(arg) => place,
            Some(place) => format!("{place}.row()"),
            None => self.twin.expr(arg),
        }
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
            Ty::Array { elem, len } => format!("[{}; {}]", self.rust_ty(*elem), len.rust()),
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
            Ty::TensorMap(elem) => {
                format!(
                    "&{}::cpu::CpuTensorMap<'_, {}>",
                    self.rt,
                    self.rust_type(elem)
                )
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
                let suffix = suffix(self.subst);
                let block_args = format!("__gpu_args: &{rt}::cpu::CpuArgs<'_>, __gpu_block: &mut {rt}::cpu::ThreadCtx, __gpu_first: u32");
                let _ = if self.owned_loop {
                    writeln!(self.out, "fn __cpu_block_owned{suffix}({block_args}) {{")
                } else if self.block {
                    // The loop is written once, generic over whether the race checker is on,
                    // and instantiated for both, so each access knows the answer at compile
                    // time (`ThreadCtx::__each_thread`); the owned loop, where there is one,
                    // runs the launches it is sound for (`ThreadCtx::__owned_launch`).
                    let owned = if self.ownership.is_some() {
                        format!("else if __gpu_block.__owned_launch() {{ __cpu_block_owned{suffix}(__gpu_args, __gpu_block, __gpu_first) }} ")
                    } else {
                        String::new()
                    };
                    writeln!(
                        self.out,
                        "fn __cpu_block{suffix}({block_args}) {{\n\
                         if __gpu_block.__race_checked() {{ __cpu_block_in{suffix}::<true>(__gpu_args, __gpu_block, __gpu_first) }} \
                         {owned}else {{ __cpu_block_in{suffix}::<false>(__gpu_args, __gpu_block, __gpu_first) }}\n}}\n\
                         {ALLOWS}\n\
                         fn __cpu_block_in{suffix}<const __GPU_RACECHECK: bool>({block_args}) {{"
                    )
                } else {
                    // The thread as a view, as a block twin's loop hands it, so device
                    // functions (generic over the view) take one type or the other.
                    writeln!(
                        self.out,
                        "fn __cpu_twin{suffix}(__gpu_args: &{rt}::cpu::CpuArgs<'_>, __t: &{rt}::cpu::ThreadCtx) {{\n\
                         let __t = &__t.__twin_thread();"
                    )
                };
                for (index, generic) in f.generics.iter().enumerate() {
                    match generic {
                        GenericParam::Const(name, Scalar::Bool) => {
                            let _ = writeln!(
                                self.out,
                                "let {name}: bool = __gpu_args.template_const({index}) != 0;"
                            );
                        }
                        GenericParam::Const(name, _) => {
                            let _ = writeln!(
                                self.out,
                                "let {name}: usize = __gpu_args.template_const({index}) as usize;"
                            );
                        }
                        GenericParam::Type(_) | GenericParam::Closure(_) => {}
                    }
                }
                // The block twin reads the parameters in `block_loop`.
                for (i, param) in f.params.iter().enumerate().filter(|_| !self.block) {
                    let (line, _) = self.read_param(i, param, "mut ");
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
                        GenericParam::Const(name, ty) => {
                            Some(format!("{name}: {}, ", ty.rust_name()))
                        }
                        GenericParam::Type(_) | GenericParam::Closure(_) => None,
                    })
                    .collect();
                let _ = writeln!(
                    self.out,
                    "fn __gpu_dev_{}{}<__V: {rt}::cpu::ThreadView + ::core::ops::Deref<Target = {rt}::cpu::ThreadCtx>>(__t: &__V, {}{}){ret} {{",
                    f.name,
                    suffix(self.subst),
                    consts.concat(),
                    params.join(", ")
                );
            }
        }
        if self.block {
            self.block_loop();
        } else {
            self.block_body(&f.body);
        }
        let _ = writeln!(self.out, "}}");
    }

    /// The `let` that reads kernel parameter `i` from the launch's arguments, binding by-value
    /// ones with `binding` (`"mut "` where the body may change them); and whether the
    /// parameter is by value (slices and `#[constant]` tables are views).
    fn read_param(&self, i: usize, param: &Param, binding: &str) -> (String, bool) {
        let name = self.local_name(param.local);
        match param.ty {
            Ty::Scalar(s) => (
                format!(
                    "let {binding}{name}: {0} = __gpu_args.scalar::<{0}>({i});",
                    self.rust_type(s)
                ),
                true,
            ),
            // The launcher passes an enum as its `repr` integer.
            Ty::Enum(def) => (
                format!(
                    "let {binding}{name}: {0} = __gpu_args.scalar::<{0}>({i});",
                    self.rust_type(def.0.repr)
                ),
                true,
            ),
            Ty::Slice { elem, mutable } => {
                let view = match self.ownership {
                    Some(ownership) if self.owned_loop => ownership.views[i],
                    _ => View::Shared,
                };
                let read = match (view, mutable) {
                    (View::Owned, _) => "slice_owned",
                    (View::Read, _) => "slice_read",
                    (View::Shared, true) => "slice_mut",
                    (View::Shared, false) => "slice",
                };
                (
                    format!(
                        "let {name} = __gpu_args.{read}::<{}>({i});",
                        self.rust_ty(*elem)
                    ),
                    false,
                )
            }
            Ty::TensorMap(elem) => (
                format!(
                    "let {name} = &__gpu_args.tensor_map::<{}>({i});",
                    self.rust_type(elem)
                ),
                false,
            ),
            // A table of rows (`&[[i32; 3]; N]`) arrives as its numbers, row after row.
            Ty::Array {
                elem:
                    Ty::Array {
                        elem: row_elem,
                        len: row,
                    },
                len,
            } if param.constant => (
                format!(
                    "let {name}: [[{ty}; {row}]; {len}] = __gpu_args.constant_rows::<{ty}, {{ {row} }}, {{ {len} }}>({i});",
                    ty = self.rust_ty(**row_elem),
                    row = row.rust(),
                    len = len.rust()
                ),
                false,
            ),
            Ty::Array { elem, len } if param.constant => (
                format!(
                    "let {name}: [{ty}; {len}] = __gpu_args.constant::<{ty}, {{ {len} }}>({i});",
                    ty = self.rust_ty(*elem),
                    len = len.rust()
                ),
                false,
            ),
            ty => (
                format!(
                    "let {binding}{name}: {0} = __gpu_args.value::<{0}>({i});",
                    self.rust_ty(ty)
                ),
                true,
            ),
        }
    }

    /// The block twin's body: the parameters read once, then every thread of the block from
    /// `__gpu_first` on, each with its own copies of the by-value parameters (which the body
    /// may change).
    fn block_loop(&mut self) {
        let f = self.function;
        let mut decode = String::new();
        let mut copies = String::new();
        for (i, param) in f.params.iter().enumerate() {
            let (line, by_value) = self.read_param(i, param, "");
            let _ = writeln!(decode, "{line}");
            if by_value {
                let name = self.local_name(param.local);
                let _ = write!(copies, "let mut {name} = {name}; ");
            }
        }
        self.out.push_str(&decode);
        match self.ownership {
            Some(ownership) if self.owned_loop => {
                // The least length of the slices indexed at the thread's own index: threads
                // below it pass those checks, which the loop lets the compiler know.
                let lengths: Vec<String> = ownership
                    .bounded
                    .iter()
                    .map(|&i| format!("{}.len()", self.local_name(f.params[i].local)))
                    .collect();
                let bound = match lengths.split_first() {
                    Some((first, rest)) => rest
                        .iter()
                        .fold(first.clone(), |all, len| format!("{all}.min({len})")),
                    None => "usize::MAX".to_string(),
                };
                let _ = writeln!(
                    self.out,
                    "__gpu_block.__each_owned_thread(__gpu_first, {bound}, |__t| {{ {copies}"
                );
            }
            _ => {
                let _ = writeln!(
                    self.out,
                    "__gpu_block.__each_thread::<__GPU_RACECHECK>(__gpu_first, |__t| {{ {copies}"
                );
            }
        }
        self.block_body(&f.body);
        let _ = writeln!(self.out, "}});");
    }
}
