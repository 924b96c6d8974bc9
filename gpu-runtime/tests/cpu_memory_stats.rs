//! Memory accounting on the CPU backend, alone in its process so no other test binary allocates
//! on the shared CPU device meanwhile; the tests here take turns (`serial`) for the same
//! reason, so every figure is exact.

use std::sync::{Mutex, MutexGuard, PoisonError};

use gpu_dsl_runtime::{DeviceBuffer, Error, Gpu};

/// One test at a time: they all count bytes on the one CPU device.
fn serial() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn buffers_are_counted_while_alive() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let before = gpu.memory_stats();
    let buffer = DeviceBuffer::<u32>::zeroed(&stream, 1000).unwrap();
    let during = gpu.memory_stats();
    assert_eq!(during.allocated_bytes, before.allocated_bytes + 4000);
    assert_eq!(during.live_buffers, before.live_buffers + 1);
    assert!(during.peak_bytes >= during.allocated_bytes);
    // Nothing is cached on the CPU backend.
    assert_eq!(during.reserved_bytes, during.allocated_bytes);
    drop(buffer);
    let after = gpu.memory_stats();
    assert_eq!(after.allocated_bytes, before.allocated_bytes);
    assert_eq!(after.live_buffers, before.live_buffers);
}

#[test]
fn allocated_peak_and_reset_follow_torch() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let base = gpu.memory_allocated();
    gpu.reset_peak_memory();
    assert_eq!(gpu.max_memory_allocated(), base);

    let a = DeviceBuffer::<f32>::zeroed(&stream, 1000).unwrap();
    let b = DeviceBuffer::from_host(&stream, &[7u64; 250]).unwrap();
    assert_eq!(gpu.memory_allocated(), base + 6000);
    assert_eq!(gpu.memory_reserved(), base + 6000);
    drop(a);
    assert_eq!(gpu.memory_allocated(), base + 2000);
    assert_eq!(gpu.max_memory_allocated(), base + 6000);

    gpu.reset_peak_memory();
    assert_eq!(gpu.max_memory_allocated(), base + 2000);
    // An empty buffer holds one element, as on a GPU, and counts it.
    let empty = DeviceBuffer::<f64>::zeroed(&stream, 0).unwrap();
    assert_eq!(gpu.memory_allocated(), base + 2008);
    assert_eq!(gpu.max_memory_allocated(), base + 2008);

    // Nothing is cached, so emptying the cache changes nothing.
    gpu.empty_cache().unwrap();
    assert_eq!(gpu.memory_reserved(), base + 2008);
    let stats = gpu.memory_stats();
    assert_eq!(
        (
            stats.allocated_bytes,
            stats.peak_bytes,
            stats.reserved_bytes
        ),
        (base + 2008, base + 2008, base + 2008)
    );
    drop((b, empty));
    assert_eq!(gpu.memory_allocated(), base);
}

#[test]
fn a_tracker_sees_its_scope_peak_and_delta() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let base = gpu.memory_allocated();
    let tracker = gpu.track_memory();
    assert_eq!(tracker.start_bytes(), base);
    assert_eq!((tracker.peak_bytes(), tracker.delta_bytes()), (base, 0));

    let big = DeviceBuffer::<u8>::zeroed(&stream, 4096).unwrap();
    let kept = DeviceBuffer::<u8>::zeroed(&stream, 1024).unwrap();
    drop(big);
    assert_eq!(tracker.peak_bytes(), base + 5120);
    assert_eq!(tracker.peak_increase_bytes(), 5120);
    assert_eq!(tracker.delta_bytes(), 1024);
    assert_eq!(
        tracker.to_string(),
        format!(
            "peak {} (5.00 KiB above the start), now +1.00 KiB against the start",
            fmt_bytes(base + 5120)
        )
    );

    // A tracker's peak is its own: resetting the device's leaves it.
    gpu.reset_peak_memory();
    assert_eq!(gpu.max_memory_allocated(), base + 1024);
    assert_eq!(tracker.peak_bytes(), base + 5120);
    drop(kept);
    assert_eq!(tracker.delta_bytes(), 0);
}

#[test]
fn nested_and_overlapping_trackers_count_separately() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let base = gpu.memory_allocated();
    // A buffer from before every tracker, freed inside them.
    let old = DeviceBuffer::<u8>::zeroed(&stream, 500).unwrap();

    let outer = gpu.track_memory();
    let a = DeviceBuffer::<u8>::zeroed(&stream, 1000).unwrap();
    let inner = gpu.track_memory();
    assert_eq!(inner.start_bytes(), base + 1500);
    let b = DeviceBuffer::<u8>::zeroed(&stream, 3000).unwrap();
    drop(b);
    assert_eq!(inner.peak_increase_bytes(), 3000);
    assert_eq!(inner.delta_bytes(), 0);
    assert_eq!(outer.peak_increase_bytes(), 4000);
    assert_eq!(outer.delta_bytes(), 1000);

    drop(old);
    assert_eq!(inner.delta_bytes(), -500);
    assert_eq!(outer.delta_bytes(), 500);

    // A third tracker that outlives the inner one but not the outer: overlapping, not nested.
    let third = gpu.track_memory();
    drop(inner);
    let c = DeviceBuffer::<u8>::zeroed(&stream, 6000).unwrap();
    assert_eq!(third.peak_increase_bytes(), 6000);
    assert_eq!(outer.peak_bytes(), base + 7000);
    assert_eq!(outer.peak_increase_bytes(), 6500);
    drop(outer);
    drop(c);
    assert_eq!(third.delta_bytes(), 0);
    assert_eq!(third.peak_bytes(), base + 7000);
    drop((a, third));
    assert_eq!(gpu.memory_allocated(), base);
}

#[test]
fn a_buffer_too_large_for_the_host_is_out_of_memory_with_the_figures() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let live = gpu.memory_stats().live_buffers;
    let kept = DeviceBuffer::<u32>::zeroed(&stream, 1000).unwrap();
    let held = gpu.memory_allocated();
    // 4 EiB: a valid size no machine can allocate.
    let err = DeviceBuffer::<u16>::zeroed(&stream, 1 << 61).unwrap_err();
    match err {
        Error::OutOfMemory {
            ref device,
            requested,
            allocated,
            reserved,
            total,
        } => {
            assert_eq!(device, "the CPU backend (host memory)");
            assert_eq!(requested, 1 << 62);
            assert_eq!((allocated, reserved), (held, held));
            assert_eq!(total, gpu.total_memory());
        }
        ref other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // The failed allocation is not counted.
    assert_eq!(gpu.memory_allocated(), held);
    assert_eq!(gpu.memory_stats().live_buffers, live + 1);
    drop(kept);
}

/// `bytes` as the runtime prints them.
fn fmt_bytes(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1 << 20 {
        format!("{:.2} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
    }
}
