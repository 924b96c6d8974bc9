//! `#[constant]` kernel parameters: read-only tables `&[T; N]` that travel with the launch in
//! the constant bank (a `__grid_constant__` parameter), indexed in the kernel like an array.

use super::Parser;
use crate::ir::{FnKind, Param};
use crate::types::{Len, Scalar, Ty, MAX_CONSTANT_BYTES};
use quote::ToTokens;

impl Parser<'_> {
    /// Reports a kernel whose tables together pass [`MAX_CONSTANT_BYTES`] (each one alone was
    /// checked as it was parsed).
    pub(super) fn check_constant_total(&mut self, params: &[Param]) {
        let mut total = 0u64;
        for param in params.iter().filter(|param| param.constant) {
            if let Ty::Array {
                elem,
                len: Len::Known(len),
            } = param.ty
            {
                total += len * elem.table_element_bytes();
                if total > MAX_CONSTANT_BYTES {
                    self.cx.error(
                        param.span,
                        format!(
                            "the `#[constant]` tables of this kernel come to {total} bytes with \
                             this one, over the {MAX_CONSTANT_BYTES} bytes they may have \
                             together (they travel as kernel parameters, which CUDA limits to \
                             4 KiB): pass the larger ones as slices `&[T]`"
                        ),
                    );
                    return;
                }
            }
        }
    }

    /// Whether `attr` is `#[constant]`.
    pub(super) fn is_constant_attr(attr: &syn::Attribute) -> bool {
        attr.path().is_ident("constant")
    }

    /// The name of a table's element type where it is a path to something other than a number
    /// type or a type parameter (a struct), which the table's own message should name.
    fn non_number_path(&self, ty: &syn::Type) -> Option<String> {
        let syn::Type::Path(path) = ty else {
            return None;
        };
        let name = path.path.segments.last()?.ident.to_string();
        let number = Scalar::from_rust_name(&name).is_some() || self.generic_type(&name).is_some();
        let kept = matches!(name.as_str(), "i128" | "u128" | "char");
        (!number && !kept).then_some(name)
    }

    /// The type of a `#[constant]` parameter, `&[T; N]` with `T` a concrete number type and `N`
    /// a constant; `None` once reported.
    pub(super) fn constant_table(
        &mut self,
        attr: &syn::Attribute,
        ty: &syn::Type,
        mutable: bool,
    ) -> Option<Ty> {
        if self.kind == FnKind::Device {
            self.cx.error_spanned_by(
                attr,
                "`#[constant]` marks kernel parameters: a device function takes the table as \
                 the kernel passes it, or reads it from the kernel's parameter",
            );
            return None;
        }
        if !matches!(attr.meta, syn::Meta::Path(_)) {
            self.cx
                .error_spanned_by(attr, "`#[constant]` takes no arguments");
            return None;
        }
        if mutable {
            self.cx
                .error_spanned_by(ty, "a `#[constant]` table is read-only: remove `mut`");
            return None;
        }
        let expected = |this: &mut Self, found: &dyn ToTokens| {
            this.cx.error_spanned_by(
                found,
                format!(
                    "a `#[constant]` parameter is a read-only table `&[T; N]` (e.g. `#[constant] \
                     taps: &[f32; 9]`), not `{}`; pass larger or run-time-sized data as a slice \
                     `&[T]`",
                    ty.to_token_stream()
                ),
            );
            None
        };
        let array = match ty {
            syn::Type::Reference(reference) if reference.mutability.is_none() => {
                match &*reference.elem {
                    syn::Type::Array(array) => array,
                    _ => return expected(self, ty),
                }
            }
            syn::Type::Group(group) => return self.constant_table(attr, &group.elem, mutable),
            _ => return expected(self, ty),
        };
        if let Some(name) = self.non_number_path(&array.elem) {
            let elem = array.elem.to_token_stream();
            self.cx.error_spanned_by(
                &array.elem,
                format!(
                    "a `#[constant]` table holds numbers, not `{name}`: pass the elements as a \
                     slice `&[{elem}]`, or make a table of each field (`#[constant] xs: &[f32; \
                     N]`)"
                ),
            );
            return None;
        }
        // Rows of numbers, `&[[i32; 3]; N]`, as Parboil's `int3` offsets: a table of arrays.
        let (elem, row) = match &*array.elem {
            syn::Type::Array(row) => {
                if let syn::Type::Array(_) = &*row.elem {
                    self.cx.error_spanned_by(
                        &row.elem,
                        "a `#[constant]` table holds numbers or rows of them (`&[[f32; 4]; N]`), \
                         not rows of arrays: make each row one array of numbers",
                    );
                    return None;
                }
                let Some(Len::Known(row_len)) = self.length(&row.len) else {
                    self.cx.error_spanned_by(
                        &row.len,
                        "the rows of a `#[constant]` table have a length the macro can read: \
                         write the number",
                    );
                    return None;
                };
                (self.table_number(&row.elem)?, Some(row_len))
            }
            elem => (self.table_number(elem)?, None),
        };
        let elem_ty = match row {
            Some(row_len) => Ty::Array {
                elem: Ty::Scalar(elem).interned(),
                len: Len::Known(row_len),
            },
            None => Ty::Scalar(elem),
        };
        let len = match self.length(&array.len)? {
            Len::Known(len) => len,
            Len::Param(name) => {
                self.cx.error_spanned_by(
                    &array.len,
                    format!(
                        "a `#[constant]` table has a fixed length, not the const parameter \
                         `{name}`: size it for the largest case"
                    ),
                );
                return None;
            }
            // A constant from outside the kernel (`KERNEL_LENGTH`), or arithmetic over them:
            // rustc knows its value; the launcher asserts the size limit at compile time.
            len @ Len::Expr(_) => {
                return Some(Ty::Array {
                    elem: elem_ty.interned(),
                    len,
                })
            }
        };
        let bytes = len.saturating_mul(elem_ty.table_element_bytes());
        if bytes > MAX_CONSTANT_BYTES {
            self.cx.error_spanned_by(
                ty,
                format!(
                    "this `#[constant]` table is {bytes} bytes, over the {MAX_CONSTANT_BYTES} \
                     bytes a kernel's constant tables may have (they travel as kernel \
                     parameters, which CUDA limits to 4 KiB): pass it as a slice `&[{}]` \
                     instead",
                    elem.rust_name()
                ),
            );
            return None;
        }
        Some(Ty::Array {
            elem: elem_ty.interned(),
            len: Len::Known(len),
        })
    }

    /// The number type of a table's element (or of its rows' elements): a concrete one, not
    /// `bool`; `None` once reported.
    fn table_number(&mut self, ty: &syn::Type) -> Option<Scalar> {
        let elem = self.scalar_type(ty)?;
        if elem == Scalar::Bool || elem.size_bytes().is_none() {
            self.cx.error_spanned_by(
                ty,
                format!(
                    "a `#[constant]` table holds a concrete number type, not `{}`",
                    elem.rust_name()
                ),
            );
            return None;
        }
        Some(elem)
    }
}
