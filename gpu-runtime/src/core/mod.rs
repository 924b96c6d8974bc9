//! The bottom layer: backend-neutral data every other layer shares. Errors, the backend
//! choice, scalar types and their host representation, kernel descriptions and template
//! arguments, launch geometry and limits, device properties, memory accounting, checked-mode records, the
//! disk-cache format and which directories it may load code from. It imports nothing above it: no CUDA, no CPU backend, no public front.

pub(crate) mod aot;
pub(crate) mod assertion;
pub(crate) mod backend;
pub(crate) mod cache;
pub(crate) mod checks;
pub(crate) mod collective;
pub(crate) mod compiled;
pub(crate) mod element;
pub(crate) mod error;
pub(crate) mod generic;
pub(crate) mod info;
pub(crate) mod kernel;
pub(crate) mod launch;
pub(crate) mod memory;
pub(crate) mod race;
pub(crate) mod scalar;
pub(crate) mod source;
pub(crate) mod tensor_map;
pub(crate) mod trust;
pub(crate) mod value;
