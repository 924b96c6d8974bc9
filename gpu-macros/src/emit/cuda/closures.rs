//! Closures as C++ lambdas: `[=](float a, float b) -> float { ... }`, capturing by copy as the
//! Rust closure does. A lambda written in device code is a device lambda under NVRTC; shared
//! memory, being static storage, is referred to rather than copied.

use super::{cuda_type, Emitter};
use crate::emit::writer::Writer;
use crate::ir::*;
use crate::types::{ClosureTy, Ty};

impl Emitter<'_> {
    /// The lambda of a closure expression.
    pub(super) fn closure(&mut self, id: ExprId, params: &[LocalId], body: &Block) -> String {
        let params: Vec<String> = params
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    self.value_type(self.types.local(*p)),
                    self.name(*p)
                )
            })
            .collect();
        let ret = match self.types.closure_rets.get(&id) {
            Some(Ty::Scalar(scalar)) => cuda_type(*scalar),
            _ => "void",
        };
        // The body is written at one more indentation, then spliced into the expression.
        let depth = self.out.depth();
        let outer = std::mem::replace(&mut self.out, Writer::new());
        let loops = std::mem::take(&mut self.loops);
        for _ in 0..=depth {
            self.out.indent();
        }
        self.block_body(body);
        let text = std::mem::replace(&mut self.out, outer).finish();
        self.loops = loops;
        let close = "    ".repeat(depth);
        format!("[=]({}) -> {ret} {{\n{text}{close}}}", params.join(", "))
    }

    /// A scalar's C++ type, or `auto` for what only the C++ compiler names (a closure).
    pub(super) fn value_type(&self, ty: Ty) -> String {
        match ty {
            Ty::Scalar(scalar) => cuda_type(scalar).to_string(),
            Ty::Closure(ClosureTy::Bound(index)) => self
                .kernel
                .generics
                .iter()
                .find_map(|g| match g {
                    GenericParam::Closure(bound) if bound.index == index => {
                        Some(bound.name.to_string())
                    }
                    _ => None,
                })
                .unwrap_or_else(|| "auto".to_string()),
            _ => "auto".to_string(),
        }
    }
}
