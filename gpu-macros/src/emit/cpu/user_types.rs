//! `#[device]` types in the twin: the user's own structs (fields, literals, `==`), methods and
//! operators as twin functions, enums as their `repr` integers, and places: a part of an
//! element of memory is read and written through a `CpuPlace`, word by word, so another
//! thread writing the element's other words at the same time loses nothing.

use super::Twin;
use crate::check::operator_function;
use crate::ir::*;
use crate::types::Ty;

impl Twin<'_> {
    /// The arm of a `match` on an enum that stands for the rest: the twin matches the `repr`
    /// integer, which Rust wants covered; `None` when an arm already is `_`.
    pub(super) fn enum_catch_all<'p>(
        &self,
        scrutinee: ExprId,
        mut arms: impl ExactSizeIterator<Item = &'p Vec<Pattern>>,
    ) -> Option<usize> {
        if !matches!(self.types.expr(scrutinee), Ty::Enum(_)) {
            return None;
        }
        let count = arms.len();
        if arms.any(|patterns| patterns.iter().any(|p| matches!(p, Pattern::Wild))) {
            return None;
        }
        count.checked_sub(1)
    }

    /// `id` as a `CpuPlace` when it is an element of a slice or shared memory, or a part of
    /// one; `None` for anything else (a local is plain Rust).
    pub(super) fn memory_place(&mut self, id: ExprId) -> Option<String> {
        let function = self.function;
        let line = function.expr(id).span.line();
        match &function.expr(id).kind {
            ExprKind::Index { base, index } => match self.types.expr(*base) {
                // A row of a shared array held flat (`Ty::flat_rows`): a slice of it.
                ty @ Ty::Shared { .. } if ty.flat_rows().is_some() => {
                    let base = self.expr(*base);
                    let index = self.expr(*index);
                    let cols = ty.flat_rows()?.rust();
                    Some(format!("{base}.row_of({index}, {cols}, __t, {line})"))
                }
                Ty::Slice { .. } | Ty::Shared { .. } => {
                    let base = self.expr(*base);
                    let index = self.expr(*index);
                    Some(format!("{base}.place({index}, __t, {line})"))
                }
                Ty::Array { .. } if self.is_shared_row(*base) => {
                    let base = self.memory_place(*base)?;
                    let index = self.expr(*index);
                    Some(format!("{base}.place({index}, __t, {line})"))
                }
                Ty::Array { .. } => {
                    let base = self.memory_place(*base)?;
                    let index = self.expr(*index);
                    Some(format!("{base}.index({index}, __t, {line})"))
                }
                _ => None,
            },
            ExprKind::Field { base, name, .. } => {
                let Ty::Struct(def) = self.types.expr(*base) else {
                    return None;
                };
                let base = self.memory_place(*base)?;
                Some(format!("{}::__gpu_place_{name}({base})", def.0.path))
            }
            // A tuple struct's field by position.
            ExprKind::TupleField { base, index } => {
                let Ty::Struct(def) = self.types.expr(*base) else {
                    return None;
                };
                let base = self.memory_place(*base)?;
                Some(format!("{}::__gpu_place_{index}({base})", def.0.path))
            }
            _ => None,
        }
    }

    /// Whether `id` is a row of a shared array held flat (`Ty::flat_rows`), which the twin
    /// reaches as a slice (see `memory_place`).
    pub(super) fn is_shared_row(&self, id: ExprId) -> bool {
        match &self.function.expr(id).kind {
            ExprKind::Index { base, .. } => self.types.expr(*base).flat_rows().is_some(),
            _ => false,
        }
    }

    /// `base.name`: an index component, a part of memory, or a field of a value.
    pub(super) fn field(&mut self, id: ExprId, base: ExprId, name: &str) -> String {
        if let ExprKind::Builtin(builtin) = self.function.expr(base).kind {
            return builtin.cpu(name);
        }
        if let Some(place) = self.memory_place(id) {
            let line = self.function.expr(id).span.line();
            return format!("{place}.read(__t, {line})");
        }
        let base = self.expr(base);
        format!("{base}.{name}")
    }

    /// `Body { .. }`, as the user's own struct.
    pub(super) fn struct_literal(&mut self, ty: Ty, fields: &[(String, ExprId)]) -> String {
        let Ty::Struct(def) = ty else {
            unreachable!("checked: a struct literal's type is a struct")
        };
        let values: Vec<String> = fields
            .iter()
            .map(|(name, value)| format!("{name}: {}", self.expr(*value)))
            .collect();
        format!("{} {{ {} }}", def.0.path, values.join(", "))
    }

    /// A call of the twin of device function `name` with `args` (`receiver` first for a
    /// method), each passed as its parameter takes it.
    pub(super) fn user_call(&mut self, name: &str, args: &[ExprId]) -> String {
        self.call_named(name, name, Vec::new(), args)
    }

    /// A call of device function `name` whose twin is `__gpu_dev_{twin_name}` (an
    /// instantiation's), with `leading` arguments (its const parameters) before `args`.
    pub(super) fn call_named(
        &mut self,
        name: &str,
        twin_name: &str,
        leading: Vec<String>,
        args: &[ExprId],
    ) -> String {
        let program_function = self.program.function(name).map(|(_, f)| f);
        let mut all = vec!["__t".to_string()];
        all.extend(leading);
        for (i, arg) in args.iter().enumerate() {
            let pass = program_function
                .and_then(|f| f.params.get(i))
                .map_or(PassBy::Value, |p| p.pass);
            all.push(self.argument(*arg, pass));
        }
        format!("__gpu_dev_{twin_name}({})", all.join(", "))
    }

    /// An argument for a parameter passed `pass`.
    fn argument(&mut self, arg: ExprId, pass: PassBy) -> String {
        let function = self.function;
        let ref_local = match &function.expr(arg).kind {
            ExprKind::Local(local) => function.param_pass(*local).filter(|p| *p != PassBy::Value),
            _ => None,
        };
        match (pass, &function.expr(arg).kind, ref_local) {
            // `&x` of a slice is the slice, as Rust's deref coercion makes it.
            (_, ExprKind::Ref { expr, .. }, _)
                if matches!(self.types.expr(*expr), Ty::Slice { .. } | Ty::Shared { .. }) =>
            {
                self.expr(*expr)
            }
            (PassBy::Value, _, _) | (_, ExprKind::Ref { .. }, _) => self.expr(arg),
            // A reference passed on.
            (PassBy::Ref, _, Some(PassBy::Ref)) => self.expr(arg),
            (PassBy::Ref, _, Some(_)) => format!("&*{}", self.expr(arg)),
            (PassBy::RefMut, _, Some(_)) => format!("&mut *{}", self.expr(arg)),
            // A receiver: `value.method()` borrows the value.
            (PassBy::Ref, _, None) => format!("&{}", self.expr(arg)),
            (PassBy::RefMut, _, None) => format!("&mut {}", self.expr(arg)),
        }
    }

    /// `lhs op rhs` on a `#[device]` type.
    pub(super) fn user_binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId, ty: Ty) -> String {
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            let l = self.expr(lhs);
            let r = self.expr(rhs);
            return format!("({l} {} {r})", op.symbol());
        }
        let method = op.operator_method().expect("checked: an operator trait");
        let function = operator_function(self.program, ty, method, self.types.expr(rhs))
            .expect("checked: the operator is implemented");
        self.user_call(&function, &[lhs, rhs])
    }

    /// An assignment the plain forms do not cover: into a part of memory, through a
    /// reference, to a field, or a `*Assign` operator of a `#[device]` type.
    /// The statement that stores `value` (Rust code) into `place` where `place` is an element
    /// of a slice or shared memory (or a part of one), which reads give as a copy.
    fn memory_store(&mut self, place: ExprId, value: &str) -> Option<String> {
        let line = self.function.expr(place).span.line();
        if let Some(target) = self.memory_place(place) {
            return Some(format!("{target}.set({value}, __t, {line});"));
        }
        match self.function.expr(place).kind {
            ExprKind::Index { base, index }
                if !matches!(self.types.expr(base), Ty::Array { .. }) =>
            {
                let base = self.expr(base);
                let index = self.expr(index);
                Some(format!("{base}.set({index}, {value}, __t, {line});"))
            }
            _ => None,
        }
    }

    pub(super) fn user_assign(
        &mut self,
        place: ExprId,
        op: Option<BinOp>,
        value: ExprId,
    ) -> Option<String> {
        let function = self.function;
        let line = function.expr(place).span.line();
        if let (Some(op), ty @ Ty::Struct(_)) = (op, self.types.expr(place)) {
            let method = format!(
                "{}_assign",
                op.operator_method().expect("checked: an operator trait")
            );
            let name = operator_function(self.program, ty, &method, self.types.expr(value))
                .expect("checked: the operator is implemented");
            // An element of memory is read as a copy: the operator works on it, and the copy is
            // stored back, as the GPU's reference to the element writes it.
            if let Some(store) = self.memory_store(place, "__gpu_elem") {
                let read = self.expr(place);
                let value = self.expr(value);
                return Some(format!(
                    "{{ let mut __gpu_elem = {read}; __gpu_dev_{name}(__t, &mut __gpu_elem, \
                     {value}); {store} }}"
                ));
            }
            let place = self.expr(place);
            let value = self.expr(value);
            let mutable = match place.strip_prefix("(*") {
                Some(_) => place.clone(),
                None => format!("&mut {place}"),
            };
            return Some(format!("__gpu_dev_{name}(__t, {mutable}, {value});"));
        }
        let is_part = match &function.expr(place).kind {
            ExprKind::Field { .. } | ExprKind::TupleField { .. } => true,
            ExprKind::Index { base, .. } => self.memory_place(*base).is_some(),
            _ => false,
        };
        if is_part {
            if let Some(target) = self.memory_place(place) {
                let value_code = match op {
                    None => self.expr(value),
                    Some(op) => self.binary(op, place, value),
                };
                return Some(format!("{target}.set({value_code}, __t, {line});"));
            }
        }
        match &function.expr(place).kind {
            ExprKind::Field { .. } | ExprKind::TupleField { .. } | ExprKind::Deref(_) => {
                let value_code = match op {
                    None => self.expr(value),
                    Some(op) => self.binary(op, place, value),
                };
                let target = self.expr(place);
                Some(format!("{target} = {value_code};"))
            }
            _ => None,
        }
    }
}
