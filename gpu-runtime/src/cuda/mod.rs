//! The CUDA backend: the only part of the runtime that calls CUDA, through cudarc.
//!
//! Files by what they own: `loader` (finding libcuda, libnvrtc and libcublas without a panic),
//! `error` (cudarc statuses as the runtime's error data), `device` (context, default stream,
//! properties), `stream` (queues and kernel launches), `memory` (device and page-locked
//! memory, copies), `event`, `graph` (capture and replay), `compile` (NVRTC), `modules`
//! (compiled-kernel caches and loading), `checked` (the checked-mode error slot) and `blas`
//! (cuBLAS). It uses only the core layer; the public types reach it through the front's
//! dispatch (`crate::dispatch`).

pub(crate) mod blas;
pub(crate) mod checked;
pub(crate) mod compile;
pub(crate) mod device;
mod error;
pub(crate) mod event;
pub(crate) mod graph;
pub(crate) mod loader;
pub(crate) mod memory;
pub(crate) mod modules;
pub(crate) mod stream;
