//! Stage 3: code generation from the typed IR. The emitters (CUDA source, CPU twin, host
//! launcher) are siblings that read the same types and never re-infer them.

pub mod assertions;
pub mod cpu;
pub mod cuda;
pub mod helpers;
pub mod host;
pub mod outer;
pub mod writer;
