//! Tensor copies (`tma_load_2d`) and transaction-counting mbarriers: boxes of 2-D tensors land
//! in shared memory in the layout of each swizzle mode, with zeros outside the tensor, on the
//! GPU (compute capability 9.0) and on the CPU backend; bad maps are refused on both.

mod common;

use common::assert_compiles_with_nvrtc;
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, Swizzle, TensorMap};

/// Block b copies the box at (xs[b], ys[b]) into shared memory with one tensor copy and writes
/// shared memory's words out as they lie, swizzle and all.
#[kernel]
fn box_copy(map: &TensorMap<u32>, xs: &[i32], ys: &[i32], bytes: u32, out: &mut [u32]) {
    let smem = dynamic_shared::<u32>();
    let bars = shared_array::<u64, 1>();
    let t = thread_idx().x as usize;
    let b = block_idx().x as usize;
    if t == 0 {
        mbarrier_init(bars, 0, 1);
    }
    sync_threads();
    if t == 0 {
        mbarrier_arrive_expect_tx(bars, 0, bytes);
        tma_load_2d(smem, 0, map, xs[b], ys[b], bars, 0);
    }
    mbarrier_wait(bars, 0, 0);
    let words = bytes as usize / 4;
    let mut i = t;
    while i < words {
        out[b * words + i] = smem[i];
        i += block_dim().x as usize;
    }
}

/// Two boxes of one map completing on one barrier, announced by two threads' arrivals.
#[kernel]
fn two_boxes(map: &TensorMap<u16>, out: &mut [u16]) {
    let smem = dynamic_shared::<u16>();
    let bars = shared_array::<u64, 2>();
    let t = thread_idx().x as usize;
    if t == 0 {
        mbarrier_init(bars, 1, 2);
    }
    sync_threads();
    if t < 2 {
        // Each box is 8 rows of 64 halves (1 KiB); the second lies 8 rows down.
        mbarrier_arrive_expect_tx(bars, 1, 1024);
        tma_load_2d(smem, t * 512, map, 0, (t * 8) as i32, bars, 1);
    }
    mbarrier_wait(bars, 1, 0);
    for i in 0..8 {
        out[t * 8 + i] = smem[t * 512 + i];
    }
}

/// Where element (r, c) of a box with `row_bytes`-byte rows of `elem`-byte elements lands,
/// in elements: chunk `c·elem / 16` of row r moves to chunk `chunk ^ ((offset / 128) % k)`
/// within each 128-byte line, k = 2, 4, 8 for the 32-, 64- and 128-byte swizzles.
fn swizzled(r: usize, c: usize, row_bytes: usize, elem: usize, swizzle: Swizzle) -> usize {
    let offset = r * row_bytes + c * elem;
    let k = match swizzle {
        Swizzle::None => 1,
        Swizzle::B32 => 2,
        Swizzle::B64 => 4,
        Swizzle::B128 => 8,
    };
    let line = offset / 128;
    let chunk = (offset / 16) % 8;
    let moved = (chunk & !(k - 1)) | ((chunk ^ line) & (k - 1));
    (line * 128 + moved * 16 + offset % 16) / elem
}

fn check_boxes(gpu: &Gpu) {
    let stream = gpu.default_stream();
    // A 37 × 50 tensor of u32 in rows of 52 (16-byte multiples), each element its coordinates.
    let (rows, cols, stride) = (37usize, 50usize, 52usize);
    let host: Vec<u32> = (0..rows * stride)
        .map(|i| ((i / stride) as u32) << 16 | (i % stride) as u32 | 0x8000_0000)
        .collect();
    let data = DeviceBuffer::from_host(&stream, &host).unwrap();
    // Boxes inside, across the right and bottom edges, and at negative coordinates.
    let xs = [0i32, 8, 44, -4, 40];
    let ys = [0i32, 3, 30, -2, 36];
    let x_buf = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let y_buf = DeviceBuffer::from_host(&stream, &ys).unwrap();
    for (swizzle, box_cols, box_rows) in [
        (Swizzle::None, 12u32, 5u32),
        (Swizzle::B32, 8, 16),
        (Swizzle::B64, 16, 8),
        (Swizzle::B128, 32, 16),
    ] {
        let map =
            TensorMap::new_2d(&data, [rows, cols], stride, [box_rows, box_cols], swizzle).unwrap();
        let words = (box_rows * box_cols) as usize;
        assert_eq!(map.box_bytes() as usize, words * 4);
        let mut out = DeviceBuffer::zeroed(&stream, xs.len() * words).unwrap();
        let config = LaunchConfig::new(Grid::x(xs.len() as u32), Block::x(64))
            .with_shared_mem(words as u32 * 4);
        box_copy::launch(
            &stream,
            config,
            &map,
            &x_buf,
            &y_buf,
            map.box_bytes(),
            &mut out,
        )
        .unwrap();
        let got = out.to_host(&stream).unwrap();
        for (b, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            for r in 0..box_rows as usize {
                for c in 0..box_cols as usize {
                    let (row, col) = (y as i64 + r as i64, x as i64 + c as i64);
                    let inside = (0..rows as i64).contains(&row) && (0..cols as i64).contains(&col);
                    let expected = if inside {
                        host[row as usize * stride + col as usize]
                    } else {
                        0
                    };
                    let at = swizzled(r, c, box_cols as usize * 4, 4, swizzle);
                    assert_eq!(
                        got[b * words + at],
                        expected,
                        "{:?} on {swizzle:?}: box {b} at ({x}, {y}), element ({r}, {c})",
                        gpu.backend()
                    );
                }
            }
        }
    }
}

fn check_two_boxes(gpu: &Gpu) {
    let stream = gpu.default_stream();
    let host: Vec<u16> = (0..16 * 64).map(|i| i as u16).collect();
    let data = DeviceBuffer::from_host(&stream, &host).unwrap();
    let map = TensorMap::new_2d(&data, [16, 64], 64, [8, 64], Swizzle::B128).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 16).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(2)).with_shared_mem(2048);
    two_boxes::launch(&stream, config, &map, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    // Row 0 of each box is unswizzled; thread t read the first 8 halves of box t's row 0.
    let expected: Vec<u16> = (0..2)
        .flat_map(|t| (0..8).map(move |i| (t * 512 + i) as u16))
        .collect();
    assert_eq!(got, expected, "{:?}", gpu.backend());
}

fn devices() -> Vec<Gpu> {
    let mut gpus = vec![Gpu::cpu()];
    let best = test_device();
    if best.backend() == gpu_dsl::runtime::Backend::Cuda && best.compute_capability().0 >= 9 {
        gpus.push(best);
    } else {
        println!("skipped on the GPU: no CUDA device of compute capability 9.0");
    }
    gpus
}

#[test]
fn tensor_copies_land_swizzled_with_zeros_outside() {
    assert_compiles_with_nvrtc(&[(&box_copy::KERNEL, &[]), (&two_boxes::KERNEL, &[])]);
    for gpu in devices() {
        check_boxes(&gpu);
        check_two_boxes(&gpu);
    }
}

#[test]
fn maps_the_copies_cannot_read_are_refused() {
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let data = DeviceBuffer::<f32>::zeroed(&stream, 64 * 64).unwrap();
    let refused = [
        // A row stride that is not a multiple of 16 bytes.
        TensorMap::new_2d(&data, [64, 30], 30, [8, 8], Swizzle::None),
        // Rows that overrun the buffer.
        TensorMap::new_2d(&data, [65, 64], 64, [8, 8], Swizzle::None),
        // A box row wider than the 64-byte swizzle.
        TensorMap::new_2d(&data, [64, 64], 64, [8, 32], Swizzle::B64),
        // A box too large.
        TensorMap::new_2d(&data, [64, 64], 64, [512, 8], Swizzle::None),
    ];
    for result in refused {
        let error = result.unwrap_err();
        assert!(
            matches!(error, gpu_dsl::Error::InvalidTensorMap { .. }),
            "{error}"
        );
        assert!(
            error.to_string().starts_with("invalid tensor map: "),
            "{error}"
        );
    }
}

#[test]
fn a_copy_never_announced_is_a_reported_deadlock() {
    // Announcing fewer bytes than the copy brings leaves the phase's count negative: the
    // barrier never completes, and the CPU backend says which bytes are pending.
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let data = DeviceBuffer::from_host(&stream, &vec![1u32; 64 * 8]).unwrap();
    let map = TensorMap::new_2d(&data, [8, 64], 64, [8, 32], Swizzle::B128).unwrap();
    let xs = DeviceBuffer::from_host(&stream, &[0i32]).unwrap();
    let ys = DeviceBuffer::from_host(&stream, &[0i32]).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 256).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(32)).with_shared_mem(1024);
    let result = box_copy::launch(&stream, config, &map, &xs, &ys, 512, &mut out)
        .and_then(|()| stream.synchronize());
    let error = result.unwrap_err().to_string();
    assert!(error.contains("transaction bytes still pending"), "{error}");
}
