//! The caching allocator on a GPU: freed memory stays reserved in the device's pool and is
//! reused, `empty_cache` hands it back, a full device empties the cache before giving up, and
//! running out of memory is `Error::OutOfMemory` with this process's figures. Each test prints
//! `skipped: no CUDA device` without a GPU.
//!
//! Alone in its process, and the tests take turns (`serial`), so the reserved figures move only
//! with what each test does.

use std::sync::{Mutex, MutexGuard, PoisonError};

use gpu_dsl_runtime::{test_gpu, DeviceBuffer, Error, Gpu};

const MIB: usize = 1 << 20;

/// One test at a time: they all read the one device's pool.
fn serial() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Device 0 with an empty cache, or `None` (printing why) without one.
fn gpu() -> Option<Gpu> {
    let gpu = test_gpu()?;
    gpu.empty_cache().unwrap();
    Some(gpu)
}

#[test]
fn freed_memory_is_reused_and_empty_cache_returns_it() {
    let _turn = serial();
    let Some(gpu) = gpu() else { return };
    let stream = gpu.default_stream();
    let bytes = 64 * MIB;
    let base = gpu.memory_allocated();
    let base_reserved = gpu.memory_reserved();

    let first = DeviceBuffer::<u8>::zeroed(&stream, bytes).unwrap();
    assert_eq!(gpu.memory_allocated(), base + bytes);
    let reserved = gpu.memory_reserved();
    assert!(
        reserved >= base_reserved + bytes,
        "reserved {reserved} after allocating {bytes} on {base_reserved}"
    );

    drop(first);
    // With the driver's default release threshold (0) the pool would hand the memory back
    // here; the runtime raised it, so the memory stays reserved.
    gpu.synchronize().unwrap();
    assert_eq!(gpu.memory_allocated(), base);
    assert_eq!(
        gpu.memory_reserved(),
        reserved,
        "freed memory left the pool at a synchronization"
    );

    // The same size again, and again in another type, comes from the cache.
    let second = DeviceBuffer::<u8>::zeroed(&stream, bytes).unwrap();
    assert_eq!(
        gpu.memory_reserved(),
        reserved,
        "the freed block was not reused"
    );
    drop(second);
    for _ in 0..10 {
        let again = DeviceBuffer::<f32>::zeroed(&stream, bytes / 4).unwrap();
        assert_eq!(gpu.memory_allocated(), base + bytes);
        drop(again);
    }
    gpu.synchronize().unwrap();
    assert_eq!(
        gpu.memory_reserved(),
        reserved,
        "a round trip grew the pool"
    );
    assert!(gpu.max_memory_allocated() >= base + bytes);

    gpu.empty_cache().unwrap();
    let emptied = gpu.memory_reserved();
    assert!(
        emptied + bytes <= reserved,
        "empty_cache kept {emptied} of {reserved} reserved bytes"
    );
    assert_eq!(gpu.memory_allocated(), base);
}

#[test]
fn a_full_device_empties_the_cache_before_giving_up() {
    let _turn = serial();
    let Some(gpu) = gpu() else { return };
    let stream = gpu.default_stream();
    let total = gpu.total_memory();
    // Together more than the device has: the second fits only once the first's cached memory
    // is handed back.
    let first = total / 10 * 4;
    let second = total / 10 * 7;
    drop(DeviceBuffer::<u8>::zeroed(&stream, first).unwrap());
    gpu.synchronize().unwrap();
    assert!(
        gpu.memory_reserved() >= first,
        "the freed buffer was not cached"
    );
    match DeviceBuffer::<u8>::zeroed(&stream, second) {
        Ok(buffer) => {
            assert_eq!(buffer.len(), second);
            assert!(gpu.memory_reserved() >= second);
        }
        // Another process may hold the memory; then the cache must at least have been emptied
        // before the error.
        Err(Error::OutOfMemory { reserved, .. }) => {
            assert!(reserved < first, "the cache ({reserved} bytes) was kept");
            eprintln!("the device is shared: {second} bytes did not fit after emptying the cache");
        }
        Err(other) => panic!("expected the allocation to succeed, got {other}"),
    }
}

#[test]
fn asking_for_more_than_the_device_has_is_out_of_memory() {
    let _turn = serial();
    let Some(gpu) = gpu() else { return };
    let stream = gpu.new_stream().unwrap();
    let kept = DeviceBuffer::<f32>::zeroed(&stream, MIB / 4).unwrap();
    let held = gpu.memory_allocated();
    let asked = gpu.total_memory() * 2;
    let err = DeviceBuffer::<u8>::zeroed(&stream, asked).unwrap_err();
    match &err {
        Error::OutOfMemory {
            device,
            requested,
            allocated,
            reserved,
            total,
        } => {
            assert_eq!(*device, format!("GPU 0 ({})", gpu.name()));
            assert_eq!(*requested, asked);
            assert_eq!(*allocated, held);
            assert!(
                *reserved >= MIB,
                "{reserved} reserved while 1 MiB is allocated"
            );
            // The refused request leaves nothing it gathered in the pool.
            assert!(
                *reserved < gpu.total_memory() / 2,
                "{reserved} reserved after a refused request while 1 MiB is allocated"
            );
            assert_eq!(*total, gpu.total_memory());
        }
        other => panic!("expected OutOfMemory, got {other:?}: {other}"),
    }
    let message = err.to_string();
    for words in [
        "out of memory on GPU 0",
        &format!("({asked} bytes)"),
        "drop buffers",
        "Gpu::empty_cache()",
        "smaller batch",
    ] {
        assert!(message.contains(words), "{words:?} missing from: {message}");
    }
    // Nothing was counted, and the device still works.
    assert_eq!(gpu.memory_allocated(), held);
    let copy = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0]).unwrap();
    assert_eq!(copy.to_host(&stream).unwrap(), [1.0, 2.0]);
    drop(kept);
}

#[test]
fn trackers_measure_device_buffers() {
    let _turn = serial();
    let Some(gpu) = gpu() else { return };
    let stream = gpu.default_stream();
    let outer = gpu.track_memory();
    let a = DeviceBuffer::<u8>::zeroed(&stream, 3 * MIB).unwrap();
    let inner = gpu.track_memory();
    drop(DeviceBuffer::<u8>::zeroed(&stream, 8 * MIB).unwrap());
    assert_eq!(inner.peak_increase_bytes(), 8 * MIB);
    assert_eq!(inner.delta_bytes(), 0);
    drop(inner);
    assert_eq!(outer.peak_increase_bytes(), 11 * MIB);
    assert_eq!(outer.delta_bytes(), 3 * MIB as i64);
    drop(a);
    assert_eq!(outer.delta_bytes(), 0);
}
