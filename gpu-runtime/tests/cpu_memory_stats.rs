//! Memory accounting on the CPU backend, alone in its process so no other test allocates on the
//! shared CPU device meanwhile.

use gpu_runtime::{DeviceBuffer, Gpu};

#[test]
fn buffers_are_counted_while_alive() {
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let before = gpu.memory_stats();
    let buffer = DeviceBuffer::<u32>::zeroed(&stream, 1000).unwrap();
    let during = gpu.memory_stats();
    assert_eq!(during.allocated_bytes, before.allocated_bytes + 4000);
    assert_eq!(during.live_buffers, before.live_buffers + 1);
    assert!(during.peak_bytes >= during.allocated_bytes);
    drop(buffer);
    let after = gpu.memory_stats();
    assert_eq!(after.allocated_bytes, before.allocated_bytes);
    assert_eq!(after.live_buffers, before.live_buffers);
}
