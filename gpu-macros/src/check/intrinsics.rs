//! Intrinsic calls: the argument shapes of an intrinsic's signature (see `intrinsics/`)
//! checked in order, and its result type.

use super::{is_const_expr, Checker, DeferredValue, T};
use crate::intrinsics::{Access, Arg, Arity, Op, Placement, Ret};
use crate::ir::*;
use crate::types::{Len, Scalar, Ty};

impl Checker<'_> {
    /// A call of an intrinsic: its signature's argument shapes checked in order.
    pub(super) fn intrinsic(&mut self, op: Op, args: &[ExprId], id: ExprId, loc: Loc) -> T {
        let signature = op.signature();
        let name = op.name();
        let misplaced = matches!(signature.placement, Placement::Statement { .. })
            && !self.statements.contains(&id);
        if let (true, Placement::Statement { message }) = (misplaced, &signature.placement) {
            self.cx.error(loc, *message);
        }
        let arg_ts: Vec<T> = args.iter().map(|arg| self.expr(*arg)).collect();
        // One cause, one error: the misplaced call's result is not checked again where it goes.
        if misplaced {
            return T::Error;
        }
        if let Arity::Counted = signature.arity {
            if !self.arity(&name, signature.args.len(), args.len(), loc) {
                return T::Error;
            }
        }
        // What the result may refer to: the value argument, the element type of the memory.
        let mut value = T::Error;
        let mut element = None;
        for ((shape, &arg), t) in signature.args.iter().zip(args).zip(arg_ts) {
            let arg_loc = self.loc(arg);
            match shape {
                Arg::Scalar(scalar) => {
                    self.unify(T::Ty(Ty::Scalar(*scalar)), t, arg_loc);
                }
                Arg::Value { accepts, message } => {
                    self.value(t, *accepts, arg, &message.replace("{name}", &name));
                    value = t;
                }
                Arg::Index => self.require_index(t, arg_loc),
                Arg::Constant { message } => {
                    if !is_const_expr(self.kernel, arg) || !self.is_int(t) {
                        self.cx.error(arg_loc, message);
                    }
                }
                Arg::Shared { elem, message } => match self.resolve(t) {
                    T::Ty(Ty::Shared {
                        elem: &Ty::Scalar(found),
                        ..
                    }) if elem.accepts(found) => {}
                    T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(arg_loc, message.replace("{found}", &text));
                    }
                },
                Arg::Slice { elem, message } => match self.resolve(t) {
                    T::Ty(Ty::Slice {
                        elem: &Ty::Scalar(found),
                        ..
                    }) if elem.accepts(found) => {}
                    T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(arg_loc, message.replace("{found}", &text));
                    }
                },
                Arg::TensorMap { message } => match self.resolve(t) {
                    T::Ty(Ty::TensorMap(_)) | T::Error => {}
                    other => {
                        let text = self.describe(other);
                        self.cx.error(arg_loc, message.replace("{found}", &text));
                    }
                },
                Arg::Fragment {
                    elem, len, message, ..
                } => self.fragment(arg, t, *elem, *len, message),
                Arg::Memory(access) => match self.memory(&name, arg, t, *access, loc) {
                    Some(elem) => element = Some(elem),
                    None => return T::Error,
                },
                Arg::Element => {
                    if let Some(elem) = element {
                        self.unify(T::Ty(Ty::Scalar(elem)), t, arg_loc);
                    }
                }
                Arg::Elements(n) => {
                    if let Some(elem) = element {
                        let array = self.array_of(elem, Len::Known(u64::from(*n)), loc);
                        self.unify(array, t, arg_loc);
                    }
                }
            }
        }
        match signature.ret {
            Ret::Unit => T::Ty(Ty::Unit),
            Ret::Scalar(scalar) => T::Ty(Ty::Scalar(scalar)),
            Ret::Value => value,
            Ret::Element => element.map_or(T::Error, |elem| T::Ty(Ty::Scalar(elem))),
            Ret::Array { elem, len } => self.array_of(elem, Len::Known(u64::from(len)), loc),
            Ret::Elements(n) => element.map_or(T::Error, |elem| {
                self.array_of(elem, Len::Known(u64::from(n)), loc)
            }),
        }
    }

    /// Checks that an intrinsic's value argument has a type `accepts` allows, reporting
    /// `message` (with `{found}`) if not. A literal whose type is still open is checked once
    /// its type is known.
    fn value(&mut self, t: T, accepts: fn(Scalar) -> bool, arg: ExprId, message: &str) {
        let fits = match (self.known_scalar(t), self.var_kind(t)) {
            (Some(scalar), _) => accepts(scalar),
            (None, Some(_)) => {
                self.deferred_values.push(DeferredValue {
                    arg,
                    accepts,
                    message: message.to_string(),
                });
                true
            }
            (None, None) => self.is_error(t),
        };
        if !fits {
            let text = self.describe(t);
            self.cx
                .error(self.loc(arg), message.replace("{found}", &text));
        }
    }

    /// Checks that `arg` is a local `[elem; len]` array variable (of any length for `None`).
    fn fragment(&mut self, arg: ExprId, t: T, elem: Scalar, len: Option<u32>, message: &str) {
        let is_local = matches!(self.kernel.expr(arg).kind, ExprKind::Local(_));
        let fits = is_local
            && match len {
                Some(len) => {
                    let expected = self.array_of(elem, Len::Known(u64::from(len)), self.loc(arg));
                    self.unify_quiet(expected, t)
                }
                None => match self.resolve(t) {
                    T::Array { elem: found, .. } => {
                        self.unify_quiet(T::Var(found), T::Ty(Ty::Scalar(elem)))
                    }
                    _ => false,
                },
            };
        if !fits {
            self.cx.error(self.loc(arg), message);
        }
    }

    /// The element type of the slice or shared memory a memory method is called on, or
    /// `None` once reported.
    pub(super) fn memory(
        &mut self,
        name: &str,
        base: ExprId,
        t: T,
        access: Access,
        loc: Loc,
    ) -> Option<Scalar> {
        let (writes, bitwise) = match access {
            Access::Vector { store, lanes } => return self.vector_base(base, t, store, lanes),
            Access::Atomic { writes, bitwise } => (writes, bitwise),
        };
        // A row of memory is reached element by element as a slice is.
        let row = match self.row_element(t) {
            Some(elem) if self.is_memory_row(base, writes) => Some(elem),
            _ => None,
        };
        let elem = match row {
            Some(elem) => elem,
            None => match self.resolve(t) {
                T::Ty(
                    Ty::Slice {
                        elem: &Ty::Scalar(elem),
                        mutable: true,
                    }
                    | Ty::Shared {
                        elem: &Ty::Scalar(elem),
                        ..
                    },
                ) => elem,
                T::Error => return None,
                T::Ty(Ty::Slice {
                    elem: &Ty::Scalar(elem),
                    ..
                }) if !writes => elem,
                T::Ty(Ty::Slice { mutable: false, .. }) => {
                    self.cx.error(
                        self.loc(base),
                        format!(
                            "`{name}` writes: it needs a `&mut [T]` slice or shared memory, not \
                             a `&[T]`"
                        ),
                    );
                    return None;
                }
                other => {
                    let text = self.describe(other);
                    // An array here is a value of this thread's, never shared with another.
                    let hint = match self.row_element(other) {
                        Some(_) => "; a local array is this thread's alone: update it with `+=`",
                        None => "",
                    };
                    self.cx.error(
                        self.loc(base),
                        format!(
                            "atomics work on `&mut [T]` slices and shared memory, or a row of \
                             them (`hist[w]` of a `shared_array::<[u32; 256], W>()`), not \
                             {text}{hint}"
                        ),
                    );
                    return None;
                }
            },
        };
        if elem.is_small_int() {
            self.cx.error(
                loc,
                format!(
                    "`{name}` is not available on `{}`: CUDA's atomics work on 32- and 64-bit \
                     values (`i32`, `u32`, `i64`, `u64`, `usize`, `f32`, `f64`); count in a \
                     wider integer, e.g. a `u32` per byte value",
                    elem.rust_name()
                ),
            );
            return None;
        }
        if elem == Scalar::Bool || elem.is_half() || (bitwise && elem.is_float()) {
            self.cx.error(
                loc,
                format!("`{name}` is not available on `{}`", elem.rust_name()),
            );
            return None;
        }
        Some(elem)
    }

    /// The element type of `t` when it is an array of scalars.
    fn row_element(&mut self, t: T) -> Option<Scalar> {
        match self.resolve(t) {
            T::Array { elem, .. } => match self.resolve(T::Var(elem)) {
                T::Ty(Ty::Scalar(elem)) => Some(elem),
                _ => None,
            },
            T::Ty(Ty::Array {
                elem: &Ty::Scalar(elem),
                ..
            }) => Some(elem),
            _ => None,
        }
    }

    /// Whether `base` is a row of memory: an array element of shared memory or of a slice
    /// (`hist[w]` of a `shared_array::<[u32; 256], W>()`), which atomics reach element by
    /// element as they reach a slice's. A row of a `&[T]` slice only serves a plain load.
    fn is_memory_row(&mut self, base: ExprId, writes: bool) -> bool {
        let ExprKind::Index {
            base: memory_id, ..
        } = self.kernel.expr(base).kind
        else {
            return false;
        };
        let Some(memory) = self.exprs[memory_id.0 as usize] else {
            return false;
        };
        match self.resolve(memory) {
            T::Ty(Ty::Shared { .. } | Ty::Slice { mutable: true, .. }) => true,
            T::Ty(Ty::Slice { mutable: false, .. }) => !writes,
            // A row of a row: `cube[z][y]` of a 3-D shared array.
            T::Array { .. } | T::Ty(Ty::Array { .. }) => self.is_memory_row(memory_id, writes),
            _ => false,
        }
    }

    /// The element type of the base of `load4`/`store4`: 4-byte numbers or a type parameter, in
    /// global or shared memory (writable for a store).
    fn vector_base(&mut self, base: ExprId, t: T, store: bool, lanes: u32) -> Option<Scalar> {
        let elem = match self.resolve(t) {
            T::Ty(Ty::Slice {
                elem: &Ty::Scalar(elem),
                mutable,
            }) if mutable || !store => elem,
            T::Ty(Ty::Shared {
                elem: &Ty::Scalar(elem),
                ..
            }) => elem,
            T::Error => return None,
            other => {
                let text = self.describe(other);
                let what = if store {
                    "`&mut [T]` slices and shared memory"
                } else {
                    "slices and shared memory"
                };
                self.cx.error(
                    self.loc(base),
                    format!("vector loads and stores work on {what}, not {text}"),
                );
                return None;
            }
        };
        if lanes == 2 {
            // CUDA has a 2-vector of every number type (`float2`, `uchar2`, `double2`, ...);
            // the 16-bit floats and a `T` pair in `rs_vec2`, aligned to the pair's size.
            if elem == Scalar::Bool {
                self.cx.error(
                    self.loc(base),
                    "`load2`/`store2` move two numbers, not `bool`s: move them as `u8`",
                );
                return None;
            }
            return Some(elem);
        }
        // A generic `T` is allowed so generic kernels get 16-byte accesses where `T` is 4 bytes
        // wide; other widths move `4 * size_of::<T>()` bytes at no more than 16-byte alignment,
        // which an index that is a multiple of 4 always gives (see the `rs_vec4` helper). The
        // 16-bit types move 8 bytes, a quarter of the load instructions of scalar accesses,
        // and bytes move 4 (`uchar4`): packed pixels in one access.
        if !matches!(
            elem,
            Scalar::F32
                | Scalar::I32
                | Scalar::U32
                | Scalar::I8
                | Scalar::U8
                | Scalar::I16
                | Scalar::U16
                | Scalar::F16
                | Scalar::Bf16
                | Scalar::Generic(_)
        ) {
            self.cx.error(
                self.loc(base),
                format!(
                    "`load4`/`store4` move four `f32`, `i32`, `u32`, `i16`, `u16`, `i8`, `u8`, \
                     `f16`, `bf16` or generic `T` values, not `{}`",
                    elem.rust_name()
                ),
            );
            return None;
        }
        Some(elem)
    }
}
