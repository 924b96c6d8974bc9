//! Stage 3a: typed IR → CUDA C++ source.
//!
//! The output compiles with NVRTC alone (no CUDA headers) and keeps Rust's semantics where C++
//! differs: signed overflow wraps, shift amounts are masked, float→int casts saturate. A
//! `#line` directive before each statement makes NVRTC errors and profilers point at the
//! user's Rust source.
//!
//! One `Emitter` writes a function; its methods are spread over files by what they write:
//! [`statements`], [`expressions`], [`indexing`] (checked indices), [`constants`],
//! [`intrinsics`] (answering what the spellings in `crate::intrinsics` ask), [`format`]
//! (assertions and `printf`) and [`narrow`] (32-bit index arithmetic, where [`ranges`] proves
//! it exact).

mod closures;
mod constants;
mod expressions;
mod format;
mod indexing;
mod intrinsics;
mod loops;
mod narrow;
pub(crate) mod ranges;
mod statements;
mod user_types;

use super::helpers::{self, Helper};
use super::writer::Writer;
use crate::check::Types;
use crate::ir::*;
use crate::types::{Bound, Scalar, Ty};
use std::collections::{BTreeSet, HashSet};

/// The C++ spelling of a scalar type.
pub fn cuda_type(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::Bool => "bool",
        Scalar::I8 => "signed char",
        Scalar::U8 => "unsigned char",
        Scalar::I16 => "short",
        Scalar::U16 => "unsigned short",
        Scalar::I32 => "int",
        Scalar::U32 => "unsigned int",
        Scalar::I64 | Scalar::Isize => "long long",
        Scalar::U64 | Scalar::Usize => "unsigned long long",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        Scalar::F16 => "rs_f16",
        Scalar::Bf16 => "rs_bf16",
        Scalar::Generic(generic) => generic.name,
    }
}

/// The C++ declaration of `name` with type `ty`: `float x`, `float tile[32][33]`.
pub fn cuda_decl(ty: Ty, name: &str) -> String {
    match ty {
        Ty::Array { elem, len } => cuda_decl(*elem, &format!("{name}[{}]", len.cuda())),
        other => format!("{} {name}", cuda_ty(other)),
    }
}

/// The C++ spelling of a value type: an array as a value is an `rs_arr`.
pub fn cuda_ty(ty: Ty) -> String {
    match ty {
        Ty::Scalar(scalar) => cuda_type(scalar).to_string(),
        Ty::Array { elem, len } => format!("rs_arr<{}, {}>", cuda_ty(*elem), len.cuda()),
        Ty::Struct(def) => def.0.name.clone(),
        Ty::Enum(def) => cuda_type(def.0.repr).to_string(),
        Ty::Tuple(elems) => {
            let elems: Vec<String> = elems.iter().map(|e| cuda_ty(*e)).collect();
            format!("rs_tuple{}<{}>", elems.len(), elems.join(", "))
        }
        Ty::Unit => "void".to_string(),
        Ty::Slice { .. }
        | Ty::Shared { .. }
        | Ty::Dim3
        | Ty::Index3
        | Ty::Closure(_)
        | Ty::TensorMap(_) => {
            unreachable!("checked: no C++ value of type {ty:?}")
        }
    }
}

/// The CUDA source of a kernel, and what its launcher computes for it.
pub struct Emitted {
    pub source: String,
    /// The conditions on the launch's parameters under which the kernel's 32-bit body runs;
    /// when not empty, the kernel takes their conjunction as a hidden last `u32` parameter.
    pub launch_fit: Vec<ranges::Atom>,
    /// The entry of the 32-bit body alone, which launches that fit run, where there is one.
    pub fits_entry: Option<String>,
}

/// What the 32-bit body's own entry adds to the kernel's name.
const FITS_ENTRY_SUFFIX: &str = "_rs_fits";

/// Emits the complete CUDA source of `program` (helpers, device functions, then the kernel)
/// with what its launcher computes.
pub fn emit(program: &Program, types: &[Types]) -> Emitted {
    let all_types = types;
    let mut helpers = BTreeSet::new();
    let function_names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
    let mut declarations = String::new();
    let mut definitions = String::new();
    // Device functions first (callees before the kernel), each declared before any definition
    // so their order does not matter.
    for (function, types) in program.functions.iter().zip(types).skip(1) {
        let mut emitter = Emitter::new(program, (function, types), all_types, &function_names);
        declarations.push_str(&emitter.signature());
        declarations.push_str(";\n");
        emitter.function();
        helpers.extend(emitter.helpers.iter().copied());
        definitions.push_str(&emitter.out.finish());
        definitions.push('\n');
    }
    let mut emitter = Emitter::new(program, (program.root(), &types[0]), types, &function_names);
    emitter.grid_word = intrinsics::calls_grid_sync(program);
    emitter.function();
    helpers.extend(emitter.helpers.iter().copied());
    // A type parameter that may be `f16` or `bf16` needs their C++ types at instantiation.
    let may_be_half = program
        .root()
        .generics
        .iter()
        .any(|g| matches!(g, GenericParam::Type(generic) if generic.bound != Bound::Integer));
    if may_be_half {
        helpers.insert("rs_half");
    }
    let root = emitter.out.finish();
    let launch_fit = std::mem::take(&mut emitter.launch_fit);
    let fits_entry = emitter.fits_entry.take();

    let root_fn = program.root();
    let mut source = format!(
        "// CUDA C++ generated by #[kernel] from `{}` ({}).\n",
        root_fn.name, root_fn.file
    );
    let structs = user_types::struct_definitions(program);
    // Arrays used as values (fields, arguments, results) are `rs_arr`s.
    if [&structs, &declarations, &definitions, &root]
        .iter()
        .any(|code| code.contains("rs_arr"))
    {
        helpers.insert("rs_arr");
    }
    if [&declarations, &definitions, &root]
        .iter()
        .any(|code| code.contains("rs_tuple"))
    {
        helpers.insert("rs_tuple");
    }
    let mut with_deps = helpers.clone();
    for name in &helpers {
        if let Some(helper) = helpers::all().find(|h| h.name == *name) {
            with_deps.extend(helper.needs.iter().copied());
        }
    }
    // Swizzled wgmma tiles and tensor copies in dynamic shared memory need it 1024-byte
    // aligned.
    if (with_deps.contains("rs_wgmma") || with_deps.contains("rs_tma"))
        && with_deps.remove("rs_dynamic_smem")
    {
        with_deps.insert("rs_dynamic_smem_1024");
    }
    for helper in helpers::all() {
        if with_deps.contains(helper.name) {
            source.push_str(helper.code);
        }
    }
    if !with_deps.is_empty() {
        source.push('\n');
    }
    // Outer constants' tables, at file scope: their values are spliced in by the host (see
    // `emit/outer.rs`), and a constant index folds to the value.
    for (function, types) in program.functions.iter().zip(types) {
        for (index, outer) in function.outer.iter().enumerate() {
            if !outer.table {
                continue;
            }
            let constant = crate::types::OuterConst {
                function: Box::leak(function.name.clone().into_boxed_str()),
                index: index as u32,
                name: "",
            };
            // Floats are held as their bits (see `Table::element`).
            let elem = match types.outer[index] {
                Scalar::F32 => "unsigned int",
                Scalar::F64 => "unsigned long long",
                other => cuda_type(other),
            };
            source.push_str(&format!(
                "__device__ const {elem} {}[] = {{ {} }};\n",
                constant.cuda_table(),
                constant.cuda()
            ));
        }
    }
    source.push_str(&structs);
    if !declarations.is_empty() {
        source.push_str(&declarations);
        source.push('\n');
        source.push_str(&definitions);
    }
    source.push_str(&root);
    Emitted {
        source,
        launch_fit,
        fits_entry,
    }
}

struct Emitter<'a> {
    program: &'a Program,
    /// The function being emitted.
    kernel: &'a Function,
    types: &'a Types,
    out: Writer,
    /// The C++ name of each local, unique across the whole function.
    names: Vec<String>,
    /// The C++ name of each slice parameter's length.
    len_names: Vec<(LocalId, String)>,
    /// Every C++ name in use, so generated names (loop bounds) never collide.
    taken: HashSet<String>,
    helpers: BTreeSet<&'static str>,
    /// The source line of the last `#line` directive, to emit one only when it changes.
    last_line: usize,
    /// The enclosing loops, innermost last.
    loops: Vec<LoopLabels>,
    /// The function's position in the program, for its assertions' ids.
    function_index: usize,
    /// What is known of the function's unsigned values, for 32-bit index arithmetic.
    ranges: ranges::Ranges,
    /// The index type aliases used (their C++ condition, their name), declared at the top of
    /// the function's body.
    index_types: Vec<(String, String)>,
    /// The conditions on parameters that the 32-bit code needs, checked at launch (see
    /// [`narrow`]).
    fits_at_launch: BTreeSet<ranges::Atom>,
    /// Those of them the launcher computes (the kernel's hidden last parameter).
    launch_fit: Vec<ranges::Atom>,
    /// The entry of the 32-bit body alone (see [`Emitted::fits_entry`]).
    fits_entry: Option<String>,
    /// Whether this is a kernel that reaches `grid_sync`: it takes its grid barrier's word as
    /// a hidden last parameter.
    grid_word: bool,
    /// Whether a `while` loop's condition is being written (see `narrow_comparison`).
    in_loop_test: bool,
}

/// A loop as `break`/`continue` see it: its Rust label, and the C++ labels that a labelled
/// `break` or `continue` from an inner loop jumps to (written only if used).
struct LoopLabels {
    label: Option<String>,
    break_target: String,
    continue_target: String,
    break_used: bool,
    continue_used: bool,
}

/// C++ keywords and CUDA names a Rust identifier could collide with.
const RESERVED: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "dim3",
    "uint3",
    "min",
    "max",
    "abs",
    "asm",
    "alignas",
    "alignof",
    "decltype",
    "static_assert",
    "char16_t",
    "char32_t",
    "thread_local",
    "and",
    "or",
    "not",
    "xor",
    "bitand",
    "bitor",
    "compl",
    "and_eq",
    "or_eq",
    "xor_eq",
    "not_eq",
    "errno",
    "assert",
];

/// `base`, or `base_1`, `base_2`, ... if taken; then marks it taken.
fn fresh(taken: &mut HashSet<String>, base: &str) -> String {
    let base = base.trim_start_matches('_');
    // `rs_` is the helpers' prefix; a user name that starts with it moves aside.
    let base = if base.is_empty() || base.starts_with("rs_") {
        format!("v_{base}")
    } else {
        base.to_string()
    };
    let mut name = base.clone();
    let mut n = 0;
    while RESERVED.contains(&name.as_str()) || taken.contains(&name) {
        n += 1;
        name = format!("{base}_{n}");
    }
    taken.insert(name.clone());
    name
}

impl<'a> Emitter<'a> {
    /// Names every local: its Rust name where free, else `name_1`, `name_2`, so shadowed Rust
    /// bindings become distinct C++ variables.
    fn new(
        program: &'a Program,
        (kernel, types): (&'a Function, &'a Types),
        all_types: &[Types],
        function_names: &[&str],
    ) -> Self {
        // Function and template parameter names are taken first, so no local shadows them in C++.
        let mut taken: HashSet<String> = function_names.iter().map(|n| n.to_string()).collect();
        for generic in &kernel.generics {
            taken.insert(match generic {
                GenericParam::Type(g) => g.name.to_string(),
                GenericParam::Const(name, _) => name.to_string(),
                GenericParam::Closure(bound) => bound.name.to_string(),
            });
        }
        let mut names = kernel
            .locals
            .iter()
            .map(|local| {
                let base = if local.name == "_" {
                    "unused"
                } else {
                    &local.name
                };
                fresh(&mut taken, base)
            })
            .collect::<Vec<_>>();
        // A `#[constant]` table is a struct parameter (`rs_table`): the body reads its array.
        for param in kernel.params.iter().filter(|param| param.constant) {
            names[param.local.0 as usize].push_str(".v");
        }
        let len_names: Vec<(LocalId, String)> = kernel
            .params
            .iter()
            .filter(|param| matches!(param.ty, Ty::Slice { .. } | Ty::TensorMap(_)))
            .map(|param| {
                let base = format!("{}_len", names[param.local.0 as usize]);
                (param.local, fresh(&mut taken, &base))
            })
            .collect();
        let runtime_params = narrow::launch_params(program, kernel, types, &names, &len_names);
        let whole = (program, all_types);
        let mut ranges = ranges::Ranges::of_program(kernel, types, runtime_params.as_ref(), whole);
        if runtime_params.is_some() && !ranges.gains_at_launch(kernel) {
            ranges = ranges::Ranges::of_program(kernel, types, None, whole);
        }
        let mentions_half = types
            .exprs
            .iter()
            .chain(&types.locals)
            .filter_map(|ty| match ty {
                Ty::Scalar(s) | Ty::TensorMap(s) => Some(*s),
                other => other.scalar_element(),
            })
            .any(Scalar::is_half);
        let mut helpers = BTreeSet::new();
        if mentions_half {
            helpers.insert("rs_half");
        }
        Emitter {
            program,
            kernel,
            types,
            out: Writer::new(),
            names,
            len_names,
            taken,
            helpers,
            last_line: 0,
            loops: Vec::new(),
            function_index: function_names
                .iter()
                .position(|name| *name == kernel.name)
                .unwrap_or(0),
            ranges,
            index_types: Vec::new(),
            fits_at_launch: BTreeSet::new(),
            launch_fit: Vec::new(),
            fits_entry: None,
            grid_word: false,
            in_loop_test: false,
        }
    }

    fn name(&self, local: LocalId) -> &str {
        &self.names[local.0 as usize]
    }

    fn len_name(&self, local: LocalId) -> &str {
        self.len_names
            .iter()
            .find(|(id, _)| *id == local)
            .map(|(_, name)| name.as_str())
            .expect("every slice parameter has a length name")
    }

    /// The C++ vector type that `load4`/`store4` (`lanes` 4) or `load2`/`store2` (2) move,
    /// noting the helper a generic or 16-bit float one needs.
    fn vector_type(&mut self, elem: Scalar, lanes: u32) -> String {
        if lanes == 2 {
            if matches!(elem, Scalar::Generic(_) | Scalar::F16 | Scalar::Bf16) {
                self.use_helper("rs_vec2");
            }
            return vector2_type(elem);
        }
        if matches!(elem, Scalar::Generic(_) | Scalar::F16 | Scalar::Bf16) {
            self.use_helper("rs_vec4");
        }
        vector_type(elem)
    }

    fn use_helper(&mut self, name: &'static str) -> &'static str {
        let helper: &Helper = helpers::all()
            .find(|h| h.name == name)
            .expect("helper is defined");
        for dep in helper.needs {
            self.helpers.insert(dep);
        }
        self.helpers.insert(helper.name);
        helper.name
    }

    /// The C++ name of parameter `local` (a `#[constant]` table's, not its array's).
    fn param_name(&self, local: LocalId) -> &str {
        let name = self.name(local);
        name.strip_suffix(".v").unwrap_or(name)
    }

    /// The C++ parameters, in order: the kernel's, or (`body`) those of a split kernel's body
    /// function, which takes each `#[constant]` table by reference to the kernel's
    /// `__grid_constant__` parameter, so it is still read in place.
    fn parameters(&mut self, body: bool) -> Vec<String> {
        if self.kernel.params.iter().any(|param| param.constant) {
            self.use_helper("rs_table");
        }
        let mut params = Vec::new();
        for param in &self.kernel.params {
            let name = self.name(param.local).to_string();
            match param.ty {
                Ty::Slice { elem, mutable } => {
                    // `&mut` is unique and `&` is read-only for the whole launch, so no two
                    // pointers alias a written element: `__restrict__` holds.
                    let constness = if mutable { "" } else { "const " };
                    params.push(format!(
                        "{constness}{}* __restrict__ {name}",
                        cuda_ty(*elem)
                    ));
                    params.push(format!("unsigned long long {}", self.len_name(param.local)));
                }
                // By value and `__grid_constant__`: the table stays in the constant bank, read
                // in place (also at a run-time index) through the constant cache.
                Ty::Array { elem, len } if param.constant => {
                    let name = self.param_name(param.local);
                    let (elem, len) = (cuda_ty(*elem), len.cuda());
                    params.push(if body {
                        format!("const rs_table<{elem}, {len}>& {name}")
                    } else {
                        format!("const __grid_constant__ rs_table<{elem}, {len}> {name}")
                    });
                }
                // By value and `__grid_constant__`, so a copy names it by its generic address;
                // the buffer's pointer and length follow, unused, so the launch orders the
                // buffer's accesses as a slice's.
                Ty::TensorMap(elem) => {
                    self.use_helper("rs_tensor_map");
                    let src = fresh(&mut self.taken, &format!("{name}_src"));
                    params.push(format!("const __grid_constant__ rs_tensor_map {name}"));
                    params.push(format!("const {}* __restrict__ {src}", cuda_type(elem)));
                    params.push(format!("unsigned long long {}", self.len_name(param.local)));
                }
                Ty::Closure(_) => params.push(format!("{} {name}", self.value_type(param.ty))),
                ty => {
                    let qualified = match param.pass {
                        PassBy::Value => cuda_ty(ty),
                        PassBy::Ref => format!("const {}&", cuda_ty(ty)),
                        PassBy::RefMut => format!("{}&", cuda_ty(ty)),
                    };
                    params.push(format!("{qualified} {name}"));
                }
            }
        }
        if self.grid_word {
            params.push(intrinsics::GRID_WORD_PARAM.to_string());
        }
        params
    }

    /// The C++ signature: `extern "C" __global__ void k(...)` or `__device__ float f(...)`.
    fn signature(&mut self) -> String {
        let params = self.parameters(false);
        self.signature_of(&params)
    }

    /// The C++ signature with these parameters.
    fn signature_of(&mut self, params: &[String]) -> String {
        let name = self.kernel.name.clone();
        self.signature_named(params, &name)
    }

    /// [`Emitter::signature_of`] for a function named `name`.
    fn signature_named(&mut self, params: &[String], name: &str) -> String {
        let head = match self.kernel.kind {
            FnKind::Kernel if !self.kernel.generics.is_empty() => {
                format!(
                    "template <{}> __global__ void",
                    template_params(&self.kernel.generics)
                )
            }
            FnKind::Kernel => "extern \"C\" __global__ void".to_string(),
            FnKind::Device if !self.kernel.generics.is_empty() => format!(
                "template <{}> __device__ {}",
                template_params(&self.kernel.generics),
                self.kernel.ret.map_or("void".to_string(), cuda_ty)
            ),
            FnKind::Device => format!(
                "__device__ {}",
                self.kernel.ret.map_or("void".to_string(), cuda_ty)
            ),
        };
        let bounds = match self.kernel.launch_bounds {
            Some(LaunchBounds {
                max_threads,
                min_blocks: Some(blocks),
            }) => format!(
                " __launch_bounds__({}, {})",
                max_threads.cuda(),
                blocks.cuda()
            ),
            Some(LaunchBounds {
                max_threads,
                min_blocks: None,
            }) => format!(" __launch_bounds__({})", max_threads.cuda()),
            None => String::new(),
        };
        format!("{head}{bounds} {name}({})", params.join(", "))
    }

    fn function(&mut self) {
        // The body first, so the index type aliases it uses are known and declared above it.
        let mut body = Writer::new();
        body.indent();
        let head = std::mem::replace(&mut self.out, body);
        self.block_body(&self.kernel.body);
        let body = std::mem::replace(&mut self.out, head).finish();
        if !self.fits_at_launch.is_empty() {
            return self.split_kernel(&body);
        }
        let signature = self.signature();
        self.out.line(&format!("{signature} {{"));
        self.out.indent();
        if self.grid_word {
            self.out.line(intrinsics::GRID_WORD_PROLOGUE);
        }
        self.finish_body(&body);
    }

    /// The index type aliases the body used, the body, and the closing brace.
    fn finish_body(&mut self, body: &str) {
        for declaration in self.index_type_declarations() {
            self.out.line(&declaration);
        }
        if !body.is_empty() {
            self.out.raw_line(body.trim_end_matches('\n'));
        }
        self.out.dedent();
        self.out.line("}");
    }

    /// A kernel whose 32-bit index arithmetic depends on its parameters: the body as a
    /// template over whether they fit (`rs_fits`), and the kernel calling the instantiation
    /// its launch chose (see [`narrow`]): the launcher computes the condition on the host and
    /// passes it as a last, hidden parameter.
    fn split_kernel(&mut self, body: &str) {
        let name = format!("rs_body_{}", self.kernel.name);
        let params = self.parameters(true);
        let mut template = vec![format!("bool {}", narrow::LAUNCH_FITS_BODY)];
        let mut template_args = Vec::new();
        for generic in &self.kernel.generics {
            match generic {
                GenericParam::Type(g) => {
                    template.push(format!("typename {}", g.name));
                    template_args.push(g.name.to_string());
                }
                // A `bool` too: the runtime spells every const argument as an integer.
                GenericParam::Const(n, _) => {
                    template.push(format!("unsigned long long {n}"));
                    template_args.push(n.to_string());
                }
                GenericParam::Closure(_) => unreachable!("parsed: kernels take no closures"),
            }
        }
        let mut args = Vec::new();
        for param in &self.kernel.params {
            args.push(self.param_name(param.local).to_string());
            if matches!(param.ty, Ty::Slice { .. }) {
                args.push(self.len_name(param.local).to_string());
            }
        }
        self.out.line(&format!(
            "template <{}> __device__ __forceinline__ void {name}({}) {{",
            template.join(", "),
            params.join(", ")
        ));
        self.out.indent();
        self.finish_body(body);
        let call = |fits: bool| {
            let mut targs = vec![fits.to_string()];
            targs.extend(template_args.iter().cloned());
            format!("{name}<{}>({})", targs.join(", "), args.join(", "))
        };
        self.launch_fit = ranges::minimal(&self.fits_at_launch).into_iter().collect();
        let cond = narrow::LAUNCH_FITS;
        let mut params = self.parameters(false);
        params.push(format!("unsigned int {}", narrow::LAUNCH_FITS));
        let signature = self.signature_of(&params);
        self.out.line(&format!("{signature} {{"));
        self.out.indent();
        // The 32-bit body has an entry of its own, which the runtime launches when the
        // launch fits: compiled beside the 64-bit body, it had to take that body's registers
        // (H100: the i64 2-D convolution port, 46 registers against 32 alone, 62.5%
        // occupancy). A template's instantiations keep the one entry, which holds both. So
        // does any other kernel's, except where each body's static shared arrays would be
        // allocated side by side: with the 64-bit body alone, the 3-D stencil port (whose
        // launches never fit) ran 7% slower (H100: 0.259 against 0.242 ms).
        if self.kernel.generics.is_empty() && self.kernel.has_shared_arrays() {
            self.out.line(&format!("{};", call(false)));
        } else {
            self.out.line(&format!("if ({cond}) {};", call(true)));
            self.out.line(&format!("else {};", call(false)));
        }
        self.out.dedent();
        self.out.line("}");
        if self.kernel.generics.is_empty() {
            let entry = format!("{}{}", self.kernel.name, FITS_ENTRY_SUFFIX);
            let signature = self.signature_named(&params, &entry);
            self.out.line(&format!("{signature} {{"));
            self.out.indent();
            self.out.line(&format!("{};", call(true)));
            self.out.dedent();
            self.out.line("}");
            self.fits_entry = Some(entry);
        }
    }
}

/// `typename T, unsigned long long N`: a template's parameters (a `const B: bool` is 0 or 1 in
/// an `unsigned long long`, as the runtime spells every const template argument as an integer).
/// Closure types come last: a call names the others explicitly and leaves the lambdas' types to
/// deduction.
fn template_params(generics: &[GenericParam]) -> String {
    let named = generics.iter().filter_map(|g| match g {
        GenericParam::Type(generic) => Some(format!("typename {}", generic.name)),
        GenericParam::Const(name, _) => Some(format!("unsigned long long {name}")),
        GenericParam::Closure(_) => None,
    });
    let closures = generics.iter().filter_map(|g| match g {
        GenericParam::Closure(bound) => Some(format!("typename {}", bound.name)),
        GenericParam::Type(_) | GenericParam::Const(..) => None,
    });
    named.chain(closures).collect::<Vec<_>>().join(", ")
}

/// The CUDA vector type of four `elem`s.
fn vector_type(elem: Scalar) -> String {
    match elem {
        Scalar::F32 => "float4".into(),
        Scalar::I32 => "int4".into(),
        Scalar::I8 => "char4".into(),
        Scalar::U8 => "uchar4".into(),
        Scalar::I16 => "short4".into(),
        Scalar::U16 => "ushort4".into(),
        Scalar::Generic(generic) => format!("rs_vec4<{}>", generic.name),
        Scalar::F16 => "rs_vec4<rs_f16>".into(),
        Scalar::Bf16 => "rs_vec4<rs_bf16>".into(),
        _ => "uint4".into(),
    }
}

/// The CUDA vector type of two `elem`s: CUDA's own `<type>2` for every number type but the
/// 16-bit floats and type parameters, which get `rs_vec2` (as aligned as the pair's size).
fn vector2_type(elem: Scalar) -> String {
    match elem {
        Scalar::I8 => "char2".into(),
        Scalar::U8 => "uchar2".into(),
        Scalar::I16 => "short2".into(),
        Scalar::U16 => "ushort2".into(),
        Scalar::I32 => "int2".into(),
        Scalar::U32 => "uint2".into(),
        Scalar::I64 | Scalar::Isize => "longlong2".into(),
        Scalar::U64 | Scalar::Usize => "ulonglong2".into(),
        Scalar::F32 => "float2".into(),
        Scalar::F64 => "double2".into(),
        Scalar::F16 => "rs_vec2<rs_f16>".into(),
        Scalar::Bf16 => "rs_vec2<rs_bf16>".into(),
        Scalar::Generic(generic) => format!("rs_vec2<{}>", generic.name),
        Scalar::Bool => unreachable!("checked: `load2` moves numbers"),
    }
}

/// Removes one pair of parentheses around the whole expression, where the context already
/// delimits it (an argument, a condition, an index).
fn strip_outer_parens(code: &str) -> &str {
    let Some(inner) = code.strip_prefix('(').and_then(|c| c.strip_suffix(')')) else {
        return code;
    };
    // Only if the first `(` closes at the very end: `(a) + (b)` must keep its parentheses.
    let mut depth = 0;
    for (i, c) in code.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != code.len() - 1 {
                    return code;
                }
            }
            _ => {}
        }
    }
    inner
}
