//! The CUDA backend: the only part of the runtime that calls CUDA, through cudarc.
//!
//! Files by what they own: `loader` (finding libcuda, libnvrtc and libcublas without a panic),
//! `error` (cudarc statuses as the runtime's error data), `device` (`CudaDevice`: context,
//! default stream, properties), `stream` (queues, synchronization and kernel launches),
//! `memory` (device and page-locked memory, copies, allocations that retry after emptying the
//! cache), `mempool` (the memory pool that caches freed device memory), `event`, `graph`
//! (capture and replay), `capture_gate` (keeping device-wide synchronizations out of captures
//! in progress), `compile` (NVRTC), `module_cache` (the loaded kernels of a device), `modules`
//! (compiling and loading them, with the disk cache), `error_slot` (the checked-mode error
//! slot), `checked` (wiring checked modules to it and reporting panics), `grid_word` (a
//! stream's grid-barrier word), `cooperative` (cooperative launches: residency limits), `nvtx`
//! (the profiler's named ranges, where libnvToolsExt is installed), `blas` (cuBLAS) and `nccl`
//! (communicators and their collectives). `device` holds only what a `CudaDevice` is; the files that add its methods
//! import it, and it imports only the leaves its fields need, so the files use each other in
//! one direction. It uses only the core layer; the public types reach it through the front's
//! dispatch (`crate::dispatch`).

pub(crate) mod blas;
pub(crate) mod capture_gate;
pub(crate) mod checked;
pub(crate) mod compile;
pub(crate) mod cooperative;
pub(crate) mod device;
mod error;
pub(crate) mod error_slot;
pub(crate) mod event;
pub(crate) mod graph;
pub(crate) mod grid_word;
pub(crate) mod loader;
pub(crate) mod memory;
pub(crate) mod mempool;
pub(crate) mod module_cache;
pub(crate) mod modules;
pub(crate) mod nccl;
pub(crate) mod nvtx;
pub(crate) mod stream;
