//! Kernels written with `#[kernel]`, with safe functions over device buffers that pick the
//! launch configuration.

pub mod map;
