//! `DeviceBuffer::fill` for every element width, on the CPU backend and (where there is one) a
//! GPU: 1, 2 and 4-byte memsets, and 8-byte patterns whose halves differ or agree.

use gpu_dsl_runtime::{test_device, DeviceBuffer, Scalar, Stream};
use half::{bf16, f16};

/// Fills a buffer that held other values and checks every element, then the empty buffer.
fn fills<T: Scalar + PartialEq + std::fmt::Debug>(stream: &Stream, start: &[T], value: T) {
    let mut buffer = DeviceBuffer::from_host(stream, start).unwrap();
    buffer.fill(stream, value).unwrap();
    let got = buffer.to_host(stream).unwrap();
    assert_eq!(got.len(), start.len());
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, value, "{} element {i} of {}", T::TYPE, start.len());
    }
    let mut empty = DeviceBuffer::<T>::zeroed(stream, 0).unwrap();
    empty.fill(stream, value).unwrap();
    assert!(empty.to_host(stream).unwrap().is_empty());
}

#[test]
fn every_width_fills_every_element() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in [1usize, 3, 1000, 4097] {
        fills(&stream, &vec![7u8; n], 0xa5);
        fills(&stream, &vec![-1i8; n], -128);
        fills(&stream, &vec![true; n], false);
        fills(&stream, &vec![1u16; n], 0xbeef);
        fills(&stream, &vec![5i16; n], -2);
        fills(&stream, &vec![f16::ONE; n], f16::from_f32(-2.5));
        fills(&stream, &vec![bf16::ONE; n], bf16::from_f32(3.75));
        fills(&stream, &vec![0u32; n], 0xdead_beef);
        fills(&stream, &vec![0i32; n], -7);
        fills(&stream, &vec![0.0f32; n], 1.25);
        // Halves that differ take the strided route; equal halves one 4-byte memset.
        fills(&stream, &vec![0.0f64; n], std::f64::consts::PI);
        fills(&stream, &vec![0u64; n], 0x0123_4567_89ab_cdef);
        fills(&stream, &vec![0i64; n], -1);
        fills(&stream, &vec![0usize; n], 0x0000_0001_0000_0001);
    }
}

#[test]
fn fill_is_ordered_with_copies_on_the_stream() {
    let gpu = test_device();
    let stream = gpu.new_stream().unwrap();
    let n = 1 << 16;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut buffer = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut copy = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    buffer.fill(&stream, -1.0).unwrap();
    copy.copy_from(&stream, &buffer).unwrap();
    buffer.copy_from_host(&stream, &host).unwrap();
    buffer.fill(&stream, 2.0).unwrap();
    assert!(copy.to_host(&stream).unwrap().iter().all(|&v| v == -1.0));
    assert!(buffer.to_host(&stream).unwrap().iter().all(|&v| v == 2.0));
}
