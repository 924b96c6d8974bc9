//! Calls of generic device functions: each call gets fresh inference variables for the
//! callee's type parameters, unified with the arguments (and whatever the result meets), then
//! settled at the end of the function and checked against their bounds.

use super::{Checker, VarKind, T};
use crate::ir::*;
use crate::types::{BoolArg, Bound, GenericArg, Len, Scalar, Ty};

/// A generic parameter of one call while its function is checked.
#[derive(Clone, Copy, Debug)]
pub(super) enum Slot {
    /// A type parameter: an inference type until the end of the function.
    Type(T),
    /// A const parameter's value, from the turbofish.
    Const(Len),
    /// A `const B: bool` parameter's value, from the turbofish.
    Bool(BoolArg),
    /// A closure parameter: its type is the closure's own.
    Closure,
}

/// A call of a generic device function, settled in [`Checker::settle_instances`].
pub(super) struct Instance {
    pub call: ExprId,
    pub callee: String,
    pub params: Vec<GenericParam>,
    pub slots: Vec<Slot>,
}

impl Checker<'_> {
    /// The slots of a call of `callee`: the turbofish's arguments where written, fresh
    /// variables for the types left to inference. `None` (reported) when they cannot be.
    pub(super) fn instance_slots(
        &mut self,
        callee: &Function,
        turbofish: &[Option<GenericArg>],
        loc: Loc,
    ) -> Option<Vec<Slot>> {
        let name = &callee.name;
        if !turbofish.is_empty() && turbofish.len() != callee.generics.len() {
            self.cx.error(
                loc,
                format!(
                    "`{name}` takes {} generic argument{} ({}), found {}",
                    callee.generics.len(),
                    if callee.generics.len() == 1 { "" } else { "s" },
                    generic_list(&callee.generics),
                    turbofish.len()
                ),
            );
            return None;
        }
        let mut slots = Vec::new();
        for (i, param) in callee.generics.iter().enumerate() {
            let written = turbofish.get(i).copied().flatten();
            let slot = match (param, written) {
                (GenericParam::Type(_), None) => Slot::Type(self.new_var(VarKind::Any)),
                (GenericParam::Type(_), Some(GenericArg::Type(scalar))) => {
                    Slot::Type(T::Ty(Ty::Scalar(scalar)))
                }
                (GenericParam::Const(_, Scalar::Bool), Some(GenericArg::Bool(value))) => {
                    Slot::Bool(value)
                }
                (GenericParam::Const(_, _), Some(GenericArg::Const(len))) if !is_bool(param) => {
                    Slot::Const(len)
                }
                (GenericParam::Const(constant, ty), Some(GenericArg::Const(len))) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{name}`'s parameter `{constant}` is a `const {constant}: {}`: give \
                             `true`, `false` or a `const` parameter of that type, not `{}`",
                            ty.rust_name(),
                            len.describe()
                        ),
                    );
                    return None;
                }
                (GenericParam::Const(constant, ty), Some(GenericArg::Bool(value))) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{name}`'s parameter `{constant}` is a `const {constant}: {}`: give \
                             a number or a `const` parameter of that type, not `{}`",
                            ty.rust_name(),
                            value.rust()
                        ),
                    );
                    return None;
                }
                (GenericParam::Closure(_), None | Some(GenericArg::Closure)) => Slot::Closure,
                (GenericParam::Closure(bound), Some(_)) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{name}`'s parameter `{}` is a closure type, which has no name: write `_` in its place",
                            bound.name
                        ),
                    );
                    return None;
                }
                (GenericParam::Type(_) | GenericParam::Const(..), Some(GenericArg::Closure)) => {
                    unreachable!("the parser writes no closure arguments")
                }
                (GenericParam::Type(generic), Some(GenericArg::Const(len))) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{}` is `{name}`'s type parameter `{}`: give a type such as `f32`, not the constant `{}`",
                            len.describe(),
                            generic.name,
                            len.describe()
                        ),
                    );
                    return None;
                }
                (GenericParam::Type(generic), Some(GenericArg::Bool(value))) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{}` is `{name}`'s type parameter `{}`: give a type such as `f32`",
                            value.rust(),
                            generic.name,
                        ),
                    );
                    return None;
                }
                (GenericParam::Const(constant, ty), Some(GenericArg::Type(scalar))) => {
                    self.cx.error(
                        loc,
                        format!(
                            "`{name}`'s parameter `{constant}` is a `const {constant}: {}`: give a value or a const parameter, not the type `{}`",
                            ty.rust_name(),
                            scalar.rust_name()
                        ),
                    );
                    return None;
                }
                (GenericParam::Const(constant, _), None) => {
                    self.cx.error(
                        loc,
                        format!(
                            "cannot infer the value of `{name}`'s const parameter `{constant}`: write it, \
                             as in `{name}::<{}>(..)`",
                            callee
                                .generics
                                .iter()
                                .map(|g| match g {
                                    GenericParam::Type(_) | GenericParam::Closure(_) => "_".to_string(),
                                    GenericParam::Const(_, Scalar::Bool) => "true".to_string(),
                                    GenericParam::Const(..) => "4".to_string(),
                                })
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                    return None;
                }
            };
            slots.push(slot);
        }
        Some(slots)
    }

    /// `scalar` of the callee's signature with its type parameters replaced by the call's.
    pub(super) fn substitute(scalar: Scalar, slots: &[Slot]) -> T {
        if let Scalar::Generic(generic) = scalar {
            if let Some(Slot::Type(t)) = slots.get(generic.index as usize) {
                return *t;
            }
        }
        T::Ty(Ty::Scalar(scalar))
    }

    /// Settles every generic call of the function: each type parameter must be known and
    /// satisfy its bound. Returns the generic arguments of each call.
    pub(super) fn settle_instances(&mut self) -> Vec<(ExprId, Vec<GenericArg>)> {
        let mut settled = Vec::new();
        for instance in std::mem::take(&mut self.instances) {
            let mut args = Vec::new();
            for (param, slot) in instance.params.iter().zip(&instance.slots) {
                match (param, slot) {
                    (GenericParam::Type(generic), Slot::Type(t)) => {
                        let loc = self.loc(instance.call);
                        let resolved = self.resolve(*t);
                        if let T::Var(var) = resolved {
                            if self.vars[var as usize].kind == VarKind::Any {
                                self.cx.error(
                                    loc,
                                    format!(
                                        "cannot infer the type `{}` of this call of `{}`: write it, as in `{}::<{}>(..)`",
                                        generic.name,
                                        instance.callee,
                                        instance.callee,
                                        match generic.bound {
                                            Bound::Integer => "u32",
                                            Bound::Float | Bound::Number => "f32",
                                        }
                                    ),
                                );
                                continue;
                            }
                        }
                        let Ty::Scalar(scalar) = self.finalize(resolved) else {
                            continue;
                        };
                        if !satisfies(scalar, generic.bound) {
                            let found = match scalar {
                                Scalar::Generic(own) => {
                                    format!(
                                        "the caller's `{}: {}`",
                                        own.name,
                                        own.bound.rust_name()
                                    )
                                }
                                _ => format!("`{}`", scalar.rust_name()),
                            };
                            self.cx.error(
                                loc,
                                format!(
                                    "{found} does not satisfy `{}: {}` of `{}`: {}",
                                    generic.name,
                                    generic.bound.rust_name(),
                                    instance.callee,
                                    bound_types(generic.bound)
                                ),
                            );
                        }
                        args.push(GenericArg::Type(scalar));
                    }
                    (GenericParam::Const(..), Slot::Const(len)) => {
                        args.push(GenericArg::Const(*len))
                    }
                    (GenericParam::Const(..), Slot::Bool(value)) => {
                        args.push(GenericArg::Bool(*value))
                    }
                    (GenericParam::Closure(_), Slot::Closure) => args.push(GenericArg::Closure),
                    (GenericParam::Type(_), Slot::Const(_) | Slot::Bool(_) | Slot::Closure)
                    | (GenericParam::Const(..), Slot::Type(_) | Slot::Closure)
                    | (GenericParam::Closure(_), Slot::Type(_) | Slot::Const(_) | Slot::Bool(_)) => {
                        unreachable!("slots follow the callee's generic parameters")
                    }
                }
            }
            settled.push((instance.call, args));
        }
        settled
    }
}

/// Whether `param` is a `const B: bool`.
fn is_bool(param: &GenericParam) -> bool {
    matches!(param, GenericParam::Const(_, Scalar::Bool))
}

/// Whether `scalar` (concrete, or the caller's own type parameter) satisfies `bound`.
fn satisfies(scalar: Scalar, bound: Bound) -> bool {
    match (scalar, bound) {
        (Scalar::Generic(generic), _) => match (generic.bound, bound) {
            (_, Bound::Number) => true,
            (Bound::Float, Bound::Float) | (Bound::Integer, Bound::Integer) => true,
            (Bound::Number | Bound::Integer, Bound::Float)
            | (Bound::Number | Bound::Float, Bound::Integer) => false,
        },
        (_, bound) => bound.admits(scalar),
    }
}

/// The types a bound admits, for messages.
fn bound_types(bound: Bound) -> &'static str {
    match bound {
        Bound::Float => "it takes f32, f64, f16 or bf16",
        Bound::Integer => "it takes i32, u32, i64, u64 or usize",
        Bound::Number => "it takes a number type (not `bool`)",
    }
}

/// `T: Float, const N: usize`, for messages.
fn generic_list(generics: &[GenericParam]) -> String {
    generics
        .iter()
        .map(|g| match g {
            GenericParam::Type(generic) => {
                format!("{}: {}", generic.name, generic.bound.rust_name())
            }
            GenericParam::Const(name, ty) => format!("const {name}: {}", ty.rust_name()),
            GenericParam::Closure(bound) => format!("{}: Fn(..)", bound.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
