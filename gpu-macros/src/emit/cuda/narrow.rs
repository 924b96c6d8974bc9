//! 32-bit index arithmetic: a `usize`/`u64` expression that [`super::ranges`] proves fits in
//! 32 bits (it and every intermediate result) is computed in `unsigned int`, as CUDA C code
//! computes indices in `int`, and widened to `unsigned long long` only where a 64-bit value is
//! needed: a global-memory index, an operand of an unknown 64-bit value, an argument. A shared
//! memory or local array index stays 32-bit, and so do variables and loop counters whose whole
//! range fits. The result is the 64-bit result bit for bit (no intermediate wraps in either
//! width), so Rust's semantics are kept. An `i64`/`isize` sum or difference that may be
//! negative but stays within `int` (a neighbour offset `x as i64 - radius`) computes in `int`
//! and widens by sign extension.
//!
//! A fit that depends on a constant only the C++ compiler sees (a module `const`, a const
//! generic) is decided there: the code computes in a type alias, declared at the top of the
//! function, that is `unsigned int` when the bound fits and `unsigned long long` (the 64-bit
//! computation, unchanged) when it does not.
//!
//! A fit that depends on a kernel's parameters (`y * width + x` behind `x < width`, which fits
//! when the image has fewer than 2^32 pixels) is decided at launch: the body becomes a
//! template over `bool rs_fits`, which the aliases' conditions include, and the kernel calls
//! the instantiation its launch chose, so every thread takes the same one. The launcher
//! computes the condition on the host and passes it as a hidden last parameter: computed in
//! the kernel, by every thread, it cost the Sobel port 15% of its time (H100: 0.55 against
//! 0.93 x its CUDA C twin with the condition free). A constant in the condition (a module
//! `const`, a const generic) is read there from its typed copy.
//!
//! A kernel is split only where that narrows something worth a second body (a variable, a
//! product of two values, a division: [`super::ranges::Ranges::gains_at_launch`]). A kernel
//! with static shared memory has an entry per body, since each instantiation has its own
//! arrays; a generic one, whose instantiations keep one entry, is not split. A
//! `#[constant]` table reaches the body by reference to the kernel's `__grid_constant__`
//! parameter, so both instantiations read it in place.

use super::ranges::{cond_cuda, for_int, is_wide, Atom, Bound, Fact, Params, I32_MAX};
use super::{fresh, Emitter};
use crate::check::Types;
use crate::intrinsics::Builtin;
use crate::ir::*;
use crate::types::{Scalar, Ty};
use std::collections::BTreeSet;

/// The 32-bit type of a narrowed value within `[0, i32::MAX]`: signed, as CUDA C's indices
/// are. The compiler's licence to assume that `int` arithmetic never overflows is then never
/// wrong, and it lets it turn a loop's `row * n + k` into a pointer stepped by one; unsigned
/// arithmetic may wrap, so it may not (the naive matrix product ran at 0.81 x its CUDA C twin
/// on an H100 that way). Conditional fits (a constant, the launch) are checked against
/// `i32::MAX` for the same reason.
const NARROW: &str = "int";
/// The 32-bit type of a narrowed value above `i32::MAX` (a `u32` read from memory, widened).
const NARROW_UNSIGNED: &str = "unsigned int";

impl<'a> Emitter<'a> {
    /// The C++ type a narrowed expression or variable with this fact computes in: `unsigned
    /// int`, or the alias that the C++ compiler resolves from the fact's condition; `None` for
    /// a value of constants alone, which is written as it is.
    /// `int` is chosen only where every intermediate of the computation stays within
    /// `i32::MAX` (`int`): by its numeric bound, or by the condition, which holds every bound
    /// that is not a number.
    /// A value that may be negative (see [`Fact::shift`]) is narrowed only to `int`.
    fn index_type(&mut self, fact: Option<Fact>, int: bool) -> Option<String> {
        let fact = fact?;
        if !fact.varies {
            return None;
        }
        if fact.cond.is_empty() {
            let int = int && fact.hi.upper().is_some_and(|hi| hi <= I32_MAX);
            if fact.is_shifted() && !int {
                return None;
            }
            return Some(if int { NARROW } else { NARROW_UNSIGNED }.to_string());
        }
        // The alias is `int` where the condition holds, which then bounds every value but
        // those whose bound is a number: past `i32::MAX`, one of them would wrap.
        if !int {
            return None;
        }
        let (at_launch, fixed): (BTreeSet<Atom>, BTreeSet<Atom>) = for_int(&fact.cond)
            .into_iter()
            .partition(|(a, b)| a.at_run_time() || b.at_run_time());
        let cond = match (fixed.is_empty(), at_launch.is_empty()) {
            (true, true) => unreachable!("the condition is not empty"),
            (false, true) => cond_cuda(&fixed),
            (true, false) => LAUNCH_FITS_BODY.to_string(),
            (false, false) => format!("{} && {LAUNCH_FITS_BODY}", cond_cuda(&fixed)),
        };
        self.fits_at_launch.extend(at_launch);
        if let Some((_, alias)) = self.index_types.iter().find(|(c, _)| *c == cond) {
            return Some(alias.clone());
        }
        self.use_helper("rs_narrow");
        let alias = fresh(&mut self.taken, "index_t");
        self.index_types.push((cond, alias.clone()));
        Some(alias)
    }

    /// Whether `ty` is an index type alias that is `int` only where the launch fits, so code
    /// of its type runs in the body that the launch's condition picks.
    pub(super) fn fits_with_launch(&self, ty: &str) -> bool {
        self.index_types
            .iter()
            .any(|(cond, alias)| alias == ty && cond.contains(LAUNCH_FITS_BODY))
    }

    /// The C++ type expression `id` is computed in, if it is narrowed.
    fn expr_index_type(&mut self, id: ExprId) -> Option<String> {
        let fact = self.ranges.expr(id).cloned();
        let int = self.ranges.expr_fits_int(id);
        self.index_type(fact, int)
    }

    /// The declarations of the aliases the function's code used, for the top of its body.
    pub(super) fn index_type_declarations(&self) -> Vec<String> {
        self.index_types
            .iter()
            .map(|(cond, alias)| format!("typedef typename rs_index_type<({cond})>::type {alias};"))
            .collect()
    }

    /// The C++ type of a `let` or loop variable whose every value fits in 32 bits.
    pub(super) fn narrow_local(&mut self, local: LocalId) -> Option<String> {
        if !narrowable(self.types.local(local)) {
            return None;
        }
        let fact = self.ranges.local(local).cloned();
        let int = self.ranges.local_fits_int(local);
        self.index_type(fact, int)
    }

    /// `id`'s narrowed code widened to `unsigned long long`, where it is a computation worth
    /// narrowing; `None` to spell it as usual (a literal or a constant is the same either way).
    pub(super) fn widened(&mut self, id: ExprId) -> Option<String> {
        let signed = is_wide_signed(self.types.expr(id));
        if !is_wide(self.types.expr(id)) && !signed {
            return None;
        }
        let kernel = self.kernel;
        match &kernel.expr(id).kind {
            // A signed value is sign-extended: it may be negative. In the 64-bit alternative
            // of an alias it is the value's bits already.
            ExprKind::Local(local) if signed => {
                self.narrow_local(*local)?;
                Some(format!("((long long){})", self.name(*local)))
            }
            ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Select { .. }
            | ExprKind::Method { .. }
                if signed =>
            {
                let ty = self.expr_index_type(id)?;
                let code = self.narrow_code(id, &ty);
                Some(format!("((long long){code})"))
            }
            ExprKind::Local(local) => {
                let ty = self.narrow_local(*local)?;
                let name = self.name(*local);
                // A variable widens through its unsigned counterpart: zero-extended, which
                // costs nothing, where a sign extension of an `int` costs an instruction. (A
                // computation widens as it is, so an address keeps the signed multiply-add
                // that folds its extension.) Sign-extended, `x[i]` and `x[i - 1]` could share
                // an address, but a widened value also feeds conversions and unsigned
                // products: H100, the 2-D convolution port went from 0.55 to 0.60 x its
                // CUDA C twin, Mandelbrot from 1.035 to 0.994 and the general matrix product
                // from 0.990 to 0.96-0.97, so zero extension stays.
                Some(if ty == NARROW {
                    format!("((unsigned long long)(unsigned int){name})")
                } else if ty == NARROW_UNSIGNED {
                    format!("((unsigned long long){name})")
                } else {
                    format!("((unsigned long long)(typename rs_unsigned_of<{ty}>::type){name})")
                })
            }
            ExprKind::Binary { .. }
            | ExprKind::Field { .. }
            | ExprKind::Method { .. }
            | ExprKind::Select { .. } => {
                let ty = self.expr_index_type(id)?;
                let code = self.narrow_code(id, &ty);
                Some(format!("((unsigned long long){code})"))
            }
            _ => None,
        }
    }

    /// `expr as u32` or `expr as f32` (`f64`) of a narrowed `expr`: its 32-bit code, which
    /// the cast does not change. Converted from 32 bits, a float costs one instruction, where
    /// from 64 bits it took a slower one (`I2F.U64`): the bilinear resize port converted each
    /// pixel's coordinates that way.
    pub(super) fn narrow_cast(&mut self, expr: ExprId, to: Scalar) -> Option<String> {
        let from = self.types.expr(expr);
        if !narrowable(from) || !matches!(to, Scalar::U32 | Scalar::F32 | Scalar::F64) {
            return None;
        }
        let ty = self.expr_index_type(expr)?;
        let code = self.narrow_code(expr, &ty);
        if to == Scalar::U32 {
            return Some(format!("((unsigned int){code})"));
        }
        let float = if to == Scalar::F32 { "float" } else { "double" };
        // The alias's 64-bit alternative holds a signed value's bits.
        let through = match (is_wide_signed(from), ty.as_str()) {
            (_, NARROW | NARROW_UNSIGNED) => String::new(),
            (true, _) => format!("(typename rs_signed_of<{ty}>::type)"),
            (false, _) => format!("(typename rs_unsigned_of<{ty}>::type)"),
        };
        Some(format!("(({float}){through}{code})"))
    }

    /// `lhs op rhs` of two `i64`/`isize` values with facts, compared in 32 bits where both
    /// fit (`r < height as i64` behind the guard of a convolution's tap): widened, the
    /// comparison stays 64-bit, and the 2-D convolution port's 25 taps of bounds checks took
    /// more predicates than the hardware has, so its loads, no longer hoisted, ran one after
    /// another (H100: 0.53 x its CUDA C twin, against 0.97 with `i32` offsets).
    pub(super) fn narrow_comparison(
        &mut self,
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    ) -> Option<String> {
        if !op.is_comparison() || !narrowable(self.types.expr(lhs)) {
            return None;
        }
        // An unsigned comparison narrows where a variable of 32 bits meets another narrowed
        // value. In a `while` loop's test it compares as `int`, as C's `while (i < n)` does:
        // the compiler then counts the trips of `while i < n { ..; i += 32; }` and unrolls the
        // loop (an `i8` matrix-vector product: 0.48 -> 0.97 x its CUDA C twin on an H100).
        // Elsewhere it compares as `unsigned int`, which keeps what the compiler knows of
        // values that cannot be negative: as `int`, the one-pass threadfence sum's `tid <
        // stride` in an unrolled loop kept more predicates live (38 registers against 32, 0.60
        // x its twin against 0.99), where a 64-bit guard had cost the box filter 2%.
        let signed = is_wide_signed(self.types.expr(lhs));
        if !signed && ![lhs, rhs].iter().any(|&side| self.narrowed_variable(side)) {
            return None;
        }
        let a = self.ranges.expr(lhs).cloned()?;
        let b = self.ranges.expr(rhs).cloned()?;
        let int = self.ranges.expr_fits_int(lhs) && self.ranges.expr_fits_int(rhs);
        let ty = self.index_type(Some(a.covering(&b)), int)?;
        let (l, r) = (self.narrow_code(lhs, &ty), self.narrow_code(rhs, &ty));
        // The 64-bit alternative of an alias is unsigned: a signed value compares as signed.
        let (l, r) = if !signed && !self.in_loop_test {
            let unsigned = if ty == NARROW || ty == NARROW_UNSIGNED {
                NARROW_UNSIGNED.to_string()
            } else {
                format!("typename rs_unsigned_of<{ty}>::type")
            };
            (format!("(({unsigned}){l})"), format!("(({unsigned}){r})"))
        } else if ty == NARROW || ty == NARROW_UNSIGNED || !signed {
            (l, r)
        } else {
            let signed = format!("typename rs_signed_of<{ty}>::type");
            (format!("(({signed}){l})"), format!("(({signed}){r})"))
        };
        Some(format!("({l} {} {r})", op.symbol()))
    }

    /// Whether `id` is a variable that lives in 32 bits.
    fn narrowed_variable(&mut self, id: ExprId) -> bool {
        match self.kernel.expr(id).kind {
            ExprKind::Local(local) => self.narrow_local(local).is_some(),
            _ => false,
        }
    }

    /// The code of a shared-memory or local array index: 32-bit where it fits.
    pub(super) fn narrow_index(&mut self, index: ExprId) -> Option<String> {
        if !is_wide(self.types.expr(index)) {
            return None;
        }
        if matches!(self.kernel.expr(index).kind, ExprKind::Lit(_)) {
            return None;
        }
        let ty = self.expr_index_type(index)?;
        Some(self.narrow_code(index, &ty))
    }

    /// The code of `id` (which has a fact) computed in `ty` at every step.
    pub(super) fn narrow_code(&mut self, id: ExprId, ty: &str) -> String {
        let kernel = self.kernel;
        let convert = |code: &str| format!("(({ty}){code})");
        match &kernel.expr(id).kind {
            ExprKind::Lit(Lit::Int { value, .. }) if ty == NARROW => value.to_string(),
            ExprKind::Lit(Lit::Int { value, .. }) if ty == NARROW_UNSIGNED => format!("{value}u"),
            ExprKind::Lit(Lit::Int { value, .. }) => format!("(({ty}){value}ull)"),
            ExprKind::Local(local) => {
                let name = self.name(*local).to_string();
                match self.narrow_local(*local) {
                    Some(own) if own == ty => name,
                    _ => format!("(({ty}){name})"),
                }
            }
            ExprKind::Outer(constant) => format!("(({ty}){})", constant.cuda()),
            // A `#[device]` function's value (see `ranges::calls`), computed by its 64-bit code.
            ExprKind::Call { .. } => convert(&self.expr(id)),
            ExprKind::Len(base) => format!("(({ty}){})", self.length_of(*base)),
            ExprKind::GenericConst(name) => format!("(({ty}){name})"),
            ExprKind::Field { base, name, .. } => {
                let ExprKind::Builtin(builtin) = &kernel.expr(*base).kind else {
                    unreachable!("ranges: only builtins' fields have facts")
                };
                // `global_idx()` and `grid_size()` (along y and z: x does not fit), with the
                // first operand in `ty` so the whole computes in it.
                let a = name;
                let first = |code: String| format!("(({ty}){code})");
                match builtin {
                    Builtin::GlobalIdx => format!(
                        "({} * blockDim.{a} + threadIdx.{a})",
                        first(format!("blockIdx.{a}"))
                    ),
                    Builtin::GridSize => {
                        format!("({} * blockDim.{a})", first(format!("gridDim.{a}")))
                    }
                    Builtin::ThreadIdx
                    | Builtin::BlockIdx
                    | Builtin::BlockDim
                    | Builtin::GridDim => {
                        unreachable!("checked: the u32 builtins are not usize")
                    }
                }
            }
            ExprKind::Cast { expr, .. } => {
                if narrowable(self.types.expr(*expr)) {
                    return self.narrow_code(*expr, ty);
                }
                let inner = self.expr(*expr);
                match self.types.expr(*expr) {
                    Ty::Scalar(Scalar::U32) => convert(&inner),
                    // `unsigned char`/`short` would promote to `int`.
                    _ => format!("(({ty}){inner})"),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.narrow_code(*lhs, ty);
                match op {
                    BinOp::Div | BinOp::Rem => {
                        let r = self.narrow_code(*rhs, ty);
                        self.use_helper("rs_div");
                        let helper = if *op == BinOp::Div {
                            "rs_div"
                        } else {
                            "rs_rem"
                        };
                        let line = kernel.expr(*rhs).span.line();
                        let (l, r) = (super::strip_outer_parens(&l), super::strip_outer_parens(&r));
                        // Both are non-negative: the unsigned division, cheaper than a signed
                        // one (which also checks for `MIN / -1`; the game-of-life port's `%`
                        // ran at 0.75 x its CUDA C twin that way).
                        let unsigned = if ty == NARROW {
                            NARROW_UNSIGNED.to_string()
                        } else if ty == NARROW_UNSIGNED {
                            return format!("{helper}({l}, {r}, {line})");
                        } else {
                            format!("typename rs_unsigned_of<{ty}>::type")
                        };
                        format!("(({ty}){helper}(({unsigned})({l}), ({unsigned})({r}), {line}))")
                    }
                    // The amount is below 32 (ranges), so masking with 31 is Rust's masking.
                    BinOp::Shl | BinOp::Shr => {
                        let r = self.expr(*rhs);
                        format!("({l} {} ((unsigned int)({r}) & 31u))", op.symbol())
                    }
                    _ => {
                        let r = self.narrow_code(*rhs, ty);
                        format!("({l} {} {r})", op.symbol())
                    }
                }
            }
            // Only a signed value's, within `int` (or wrapping in the 64-bit alternative).
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => format!("(-{})", self.narrow_code(*operand, ty)),
            // Both operands within `int`, the divisor at least 1: C++'s `%` and a fix-up.
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "rem_euclid" => {
                let a = self.narrow_code(*receiver, ty);
                let b = self.narrow_code(args[0], ty);
                let line = kernel.expr(args[0]).span.line();
                // A receiver at least `-b` (`i - 1` for a ring's left neighbour): the unsigned
                // `(a + b) % b`, as CUDA C writes it, which shares its reciprocal with the
                // kernel's other divisions by `b` (the heat-ring port computed a signed and an
                // unsigned reciprocal of one length).
                let shift = self.ranges.expr(*receiver).map(|fact| fact.shift.clone());
                let divisor_lo = self.ranges.expr(args[0]).map(|fact| fact.lo.clone());
                let above = match (shift, divisor_lo) {
                    (Some(Bound::Num(s)), _) if s <= 1 => true,
                    (Some(Bound::Num(s)), Some(Bound::Num(lo))) => s <= lo,
                    _ => false,
                };
                // Only where the fit holds: an alias's 64-bit alternative has no shift bound,
                // so the choice is the compiler's, by the alias's width.
                let unsigned_form = above.then(|| {
                    self.use_helper("rs_div");
                    let (a, b) = (super::strip_outer_parens(&a), super::strip_outer_parens(&b));
                    format!(
                        "(({ty})rs_rem(({NARROW_UNSIGNED})(({NARROW_UNSIGNED})({a}) + ({NARROW_UNSIGNED})({b})), ({NARROW_UNSIGNED})({b}), {line}))"
                    )
                });
                if let (Some(form), true) = (&unsigned_form, ty == NARROW) {
                    return form.clone();
                }
                self.use_helper("rs_int_bits");
                // A signed receiver, which may be negative, divides as signed in the 64-bit
                // alternative of an alias too.
                let operand = if is_wide_signed(self.types.expr(*receiver)) && ty != NARROW {
                    format!("typename rs_signed_of<{ty}>::type")
                } else {
                    ty.to_string()
                };
                let signed_form = format!(
                    "(({ty})rs_rem_euclid(({operand})({}), ({operand})({}), {line}))",
                    super::strip_outer_parens(&a),
                    super::strip_outer_parens(&b)
                );
                match unsigned_form {
                    Some(form) => format!("(sizeof({ty}) == 4 ? {form} : {signed_form})"),
                    None => signed_form,
                }
            }
            // Both within `[0, 2^31)`, or both the 64-bit values: the same either way.
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "saturating_sub" => {
                let a = self.narrow_code(*receiver, ty);
                let b = self.narrow_code(args[0], ty);
                format!("({a} > {b} ? {a} - {b} : ({ty})0)")
            }
            // A `min` with an operand without a fact compares in 64 bits; its result, within
            // the other operand's fact, converts exactly.
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } if method == "min"
                && (self.ranges.expr(*receiver).is_none()
                    || self.ranges.expr(args[0]).is_none()) =>
            {
                let (unknown, known) = if self.ranges.expr(*receiver).is_none() {
                    (*receiver, args[0])
                } else {
                    (args[0], *receiver)
                };
                let helper = self.use_helper("rs_min");
                let wide = {
                    let (a, b) = (self.expr(unknown), self.expr(known));
                    let (a, b) = (super::strip_outer_parens(&a), super::strip_outer_parens(&b));
                    format!("(({ty}){helper}({a}, {b}))")
                };
                // A float converted to an index and clamped below 2^31 (`(sx as usize).min(w -
                // 1)`): the 32-bit conversion saturates at `u32::MAX`, past the clamp, so the
                // minimum is the same, without the 64-bit conversion and comparison.
                let ExprKind::Cast { expr: float, .. } = kernel.expr(unknown).kind else {
                    return wide;
                };
                if !self.types.scalar(float).is_float() {
                    return wide;
                }
                let from = self.types.scalar(float);
                let convert = match self.without_nan_test(float, from, Scalar::U32) {
                    Some(intrinsic) => intrinsic,
                    None => self.use_helper("rs_as_u32"),
                };
                let float = self.expr(float);
                let other = self.narrow_code(known, ty);
                let narrow = format!(
                    "(({ty}){helper}({convert}({}), ({NARROW_UNSIGNED})({})))",
                    super::strip_outer_parens(&float),
                    super::strip_outer_parens(&other)
                );
                if ty == NARROW || ty == NARROW_UNSIGNED {
                    narrow
                } else {
                    format!("(sizeof({ty}) == 4 ? {narrow} : {wide})")
                }
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } => {
                let a = self.narrow_code(*receiver, ty);
                let b = self.narrow_code(args[0], ty);
                let helper = self.use_helper(if method == "min" { "rs_min" } else { "rs_max" });
                format!(
                    "{helper}({}, {})",
                    super::strip_outer_parens(&a),
                    super::strip_outer_parens(&b)
                )
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let cond = self.expr(*cond);
                let a = self.narrow_code(*then_value, ty);
                let b = self.narrow_code(*else_value, ty);
                format!("({cond} ? {a} : {b})")
            }
            _ => unreachable!("ranges: no fact for this expression"),
        }
    }
}

/// Whether `ty` is `i64` or `isize`: signed, and narrowed as the unsigned 64-bit types are
/// where its fact allows (see [`super::ranges::Fact::shift`] for negative values).
fn is_wide_signed(ty: Ty) -> bool {
    matches!(ty, Ty::Scalar(Scalar::I64 | Scalar::Isize))
}

/// Whether values of `ty` may compute in 32 bits: the 64-bit integer types.
fn narrowable(ty: Ty) -> bool {
    is_wide(ty) || is_wide_signed(ty)
}

/// The hidden last parameter of a kernel split at launch: whether the launch's parameters fit.
pub(super) const LAUNCH_FITS: &str = "rs_launch_fits";
/// The body template's parameter: whether the launch fits, as the launcher decided.
pub(super) const LAUNCH_FITS_BODY: &str = "rs_fits";

/// The parameters a kernel's 32-bit code may depend on, decided at launch; `None` where the
/// kernel is not split into two bodies: a device function, or a kernel with tensor maps,
/// closures or a grid barrier (tensor maps live in the parameter space, which a call would
/// copy; a `#[constant]` table is passed on by reference), or a generic one with static
/// shared memory: its one entry holds both bodies, and each would have its own arrays. A
/// kernel that is not generic has an entry per body (see `split_kernel`).
pub(super) fn launch_params(
    program: &Program,
    kernel: &Function,
    types: &Types,
    names: &[String],
    len_names: &[(LocalId, String)],
) -> Option<Params> {
    if kernel.kind != FnKind::Kernel
        || super::intrinsics::calls_grid_sync(program)
        || (!kernel.generics.is_empty() && kernel.has_shared_arrays())
    {
        return None;
    }
    let mut values = Vec::new();
    for param in &kernel.params {
        match param.ty {
            Ty::Slice { .. } if !param.constant => {}
            // Read in place by the body too, through a reference (see `split_kernel`).
            Ty::Array { .. } if param.constant => {}
            Ty::Scalar(_) | Ty::Struct(_) | Ty::Enum(_) if !param.constant => {
                if narrowable(types.local(param.local)) {
                    values.push((param.local, names[param.local.0 as usize].clone()));
                }
            }
            _ => return None,
        }
    }
    Some(Params {
        values,
        lens: len_names.to_vec(),
        grid: Params::bounds_grid(kernel),
    })
}
