//! Stage 3: code generation from the typed IR. The emitters are siblings that read the same
//! types and never re-infer them.

pub mod cuda;
pub mod helpers;
pub mod host;
pub mod writer;
