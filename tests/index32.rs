//! Index-heavy kernels written as Rust users write them (`usize` indices from `thread_idx()`,
//! `block_idx()` and constants), whose CUDA computes the indices that provably fit in 32 bits
//! in `unsigned int`: each runs on every backend at hand, checked and unchecked, and is
//! compared with plain Rust. Products and subtractions that do not fit stay 64-bit, which the
//! edge cases check by results that differ if they were narrowed.

mod common;

/// The tiled matmul as users write it, shared with the benchmark of ported programs.
#[allow(dead_code)]
#[path = "../examples/bench/port_kernels.rs"]
mod ports;

use common::{assert_compiles_with_nvrtc, backends as devices, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{compile_to_ptx, compile_to_ptx_generic, test_nvrtc, TemplateArg};

use ports::{matmul_tiled, TILE};

const T: usize = 16;
/// A multiplier whose products with a thread index need more than 32 bits.
const WIDE_STEP: usize = 1 << 23;

/// The same product with its thread indices in mutable locals updated by a value the range
/// analysis cannot bound (`n & 0`, zero, but of an unknown `n`), so they stay 64-bit: the
/// baseline the narrowed kernel's PTX is compared with.
#[kernel]
fn matmul_tiled_wide(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile_a = shared_array::<f32, { TILE * TILE }>();
    let tile_b = shared_array::<f32, { TILE * TILE }>();
    let mut tx = thread_idx().x as usize;
    let mut ty = thread_idx().y as usize;
    tx += n & 0;
    ty += n & 0;
    let row = block_idx().y as usize * TILE + ty;
    let col = block_idx().x as usize * TILE + tx;
    let mut sum = 0.0f32;
    for t in 0..n / TILE {
        tile_a[ty * TILE + tx] = a[row * n + t * TILE + tx];
        tile_b[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        sync_threads();
        for k in 0..TILE {
            sum += tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        }
        sync_threads();
    }
    c[row * n + col] = sum;
}

#[kernel]
fn transpose_tiled(width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let tile = shared_array::<f32, { T * (T + 1) }>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let x = block_idx().x as usize * T + tx;
    let y = block_idx().y as usize * T + ty;
    if x < width && y < height {
        tile[ty * (T + 1) + tx] = input[y * width + x];
    }
    sync_threads();
    let out_x = block_idx().y as usize * T + tx;
    let out_y = block_idx().x as usize * T + ty;
    if out_x < height && out_y < width {
        output[out_y * height + out_x] = tile[tx * (T + 1) + ty];
    }
}

#[kernel]
fn stencil_2d(width: usize, height: usize, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x >= 1 && y >= 1 && x + 1 < width && y + 1 < height {
        let c = y * width + x;
        output[c] =
            (input[c - 1] + input[c + 1] + input[c - width] + input[c + width]) * 0.25 - input[c];
    }
}

#[kernel]
fn neighbour_difference(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * 256 + t;
    tile[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    if t > 0 && i < out.len() {
        out[i] = tile[t] - tile[t - 1];
    } else if i < out.len() {
        out[i] = tile[t];
    }
}

/// Neighbours clamped to the block's tile with `max`/`min`: `t.max(1) - 1` cannot wrap.
#[kernel]
fn clamped_neighbours(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * 256 + t;
    tile[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    if i < out.len() {
        out[i] = tile[t.max(1) - 1] + tile[(t + 1).min(255)];
    }
}

/// Products past 32 bits, a `u32` product that wraps at 32 bits, and a wrapping subtraction:
/// each result differs from Rust's if the arithmetic were narrowed.
#[kernel]
fn wide_products(out: &mut [u64]) {
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * block_dim().x as usize + t;
    let literal = (t * (1 << 23)) >> 20;
    let constant = (t * WIDE_STEP) / (WIDE_STEP >> 3);
    let wrapped_u32 = (thread_idx().x.wrapping_mul(5_000_000)) as usize % 1_000_003;
    let wrapped_sub = t.wrapping_sub(1) >> 40;
    let fits = (t * 4_000_000 + 4095) >> 12;
    if i * 5 + 4 < out.len() {
        out[i * 5] = literal as u64;
        out[i * 5 + 1] = constant as u64;
        out[i * 5 + 2] = wrapped_u32 as u64;
        out[i * 5 + 3] = wrapped_sub as u64;
        out[i * 5 + 4] = fits as u64;
    }
}

/// A product whose fit depends on the instantiation: the C++ compiler computes it in 32 bits
/// for a small `STEP` and in 64 for a large one.
#[kernel]
fn scaled_by_step<const STEP: usize>(out: &mut [u64]) {
    let t = thread_idx().x as usize;
    let scaled = t * STEP + (STEP - 1);
    out[t] = (scaled >> 9) as u64;
}

/// Products of a guarded index and a parameter, and their quotients, in a loop: computed in
/// 32 bits when the launch's `stride` and length keep them below 2^32, in 64 bits otherwise.
#[kernel]
fn scaled_by_parameter(stride: usize, out: &mut [u64]) {
    let i = global_idx().x;
    if i < out.len() {
        let mut acc = 0u64;
        for k in 0..4 {
            let scaled = i * stride + k;
            acc += (scaled + scaled / 7) as u64;
        }
        out[i] = acc;
    }
}

/// A grid-stride walk of row `block_idx().y` of `out`, each element the bit length of its
/// column mixed with its index: the indices fit in 32 bits where the launch's grid and `n` do,
/// which only the launcher knows (`i` steps by the grid's threads), and the bit length counts
/// at most 32 shifts.
#[kernel]
fn strided_rows(n: usize, out: &mut [u64]) {
    let row = block_idx().y as usize;
    let mut i = global_idx().x;
    while i < n {
        let mut bits = i as u32;
        let mut k = 0;
        while bits != 0 {
            bits >>= 1;
            k += 1;
        }
        out[row * n + i] = (row * n + i) as u64 * 3 + k;
        i += grid_size().x;
    }
}

/// Columns and rows of `tiles`' tile.
const TILE_W: usize = 8;
const TILE_H: usize = 64;

/// Each thread writes a column of the tile, every `block_dim / TILE_W`-th row from its own:
/// its row and column bound from a tuple of values, then swapped the same way (both read
/// before either is bound), and a `step_by` loop over a constant bound with a step the
/// launch sets.
#[kernel]
fn tiles(out: &mut [u32]) {
    let tid = thread_idx().x as usize;
    let (row, col) = (tid / TILE_W, tid % TILE_W);
    let (row, col) = (col, row);
    for offset in (0..TILE_H).step_by(block_dim().x as usize / TILE_W) {
        out[(row + offset) * TILE_W + col] = (tid * 1000 + offset) as u32;
    }
}

/// Elements a row of `rows_by_constant` has.
const ROW: usize = 16;

/// A row of `ROW` elements a thread: the fit of `i * ROW + j` depends on the launch's `n` and
/// on a constant from outside the kernel, which the launcher reads from its typed copy.
#[kernel]
fn rows_by_constant(n: usize, out: &mut [u32]) {
    let i = global_idx().x;
    if i < n {
        for j in 0..ROW {
            out[i * ROW + j] = (i * ROW + j) as u32 ^ 0x5555;
        }
    }
}

/// A clamped 3x3 neighbourhood of a `width × height` byte image, read through a closure, as
/// the Sobel port does: the pixel offsets fit in 32 bits when the image does.
#[kernel]
fn neighbourhood_sum(width: usize, height: usize, image: &[u8], out: &mut [u32]) {
    let x = global_idx().x;
    let y = global_idx().y;
    if x < width && y < height {
        let left = if x > 0 { x - 1 } else { 0 };
        let right = (x + 1).min(width - 1);
        let up = if y > 0 { y - 1 } else { 0 };
        let down = (y + 1).min(height - 1);
        let at = |px: usize, py: usize| image[py * width + px] as u32;
        out[y * width + x] = at(left, up)
            + at(x, up)
            + at(right, up)
            + at(left, y)
            + at(right, y)
            + at(left, down)
            + at(x, down)
            + at(right, down);
    }
}

/// The shared-memory tree reduction of the CUDA samples, its stride a mutable `usize` halved
/// each step, as Rust users write it.
#[kernel]
fn tree_sum(x: &[f32], sums: &mut [f32]) {
    let cache = shared_array::<f32, 256>();
    let tid = thread_idx().x as usize;
    let i = global_idx().x;
    cache[tid] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut stride = block_dim().x as usize / 2;
    while stride > 0 {
        if tid < stride {
            cache[tid] += cache[tid + stride];
        }
        sync_threads();
        stride >>= 1;
    }
    if tid == 0 {
        sums[block_idx().x as usize] = cache[0];
    }
}

#[test]
fn kernels_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&matmul_tiled::KERNEL, &[]),
        (&transpose_tiled::KERNEL, &[]),
        (&stencil_2d::KERNEL, &[]),
        (&neighbour_difference::KERNEL, &[]),
        (&clamped_neighbours::KERNEL, &[]),
        (&wide_products::KERNEL, &[]),
        (&scaled_by_step::KERNEL, &[TemplateArg::Const(1 << 10)]),
        (&scaled_by_step::KERNEL, &[TemplateArg::Const(1 << 30)]),
        (&scaled_by_parameter::KERNEL, &[]),
        (&strided_rows::KERNEL, &[]),
        (&tiles::KERNEL, &[]),
        (&rows_by_constant::KERNEL, &[]),
        (&neighbourhood_sum::KERNEL, &[]),
        (&tree_sum::KERNEL, &[]),
    ]);
}

#[test]
fn tiled_matmul_with_usize_indices() {
    for device in devices() {
        let stream = device.default_stream();
        for n in [32, 96] {
            let a_host = random_f32(n * n, 3);
            let b_host = random_f32(n * n, 4);
            let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
            let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
            for checked in [true, false] {
                let mut c = DeviceBuffer::zeroed(&stream, n * n).unwrap();
                let grid = Grid::xy((n / TILE) as u32, (n / TILE) as u32);
                let config = LaunchConfig::new(grid, Block::xy(32, 32)).checked(checked);
                matmul_tiled::launch(&stream, config, n, &a, &b, &mut c).unwrap();
                let got = c.to_host(&stream).unwrap();
                for i in 0..n {
                    for j in 0..n {
                        let expected: f64 = (0..n)
                            .map(|p| a_host[i * n + p] as f64 * b_host[p * n + j] as f64)
                            .sum();
                        let g = got[i * n + j] as f64;
                        assert!(
                            (g - expected).abs() < 1e-4 * n as f64,
                            "n={n} [{i},{j}]: {g} vs {expected}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn shared_memory_transpose() {
    for device in devices() {
        let stream = device.default_stream();
        let (width, height) = (37, 50);
        let input_host = random_f32(width * height, 5);
        let input = DeviceBuffer::from_host(&stream, &input_host).unwrap();
        for checked in [true, false] {
            let mut output = DeviceBuffer::zeroed(&stream, width * height).unwrap();
            let grid = Grid::xy(width.div_ceil(T) as u32, height.div_ceil(T) as u32);
            let config = LaunchConfig::new(grid, Block::xy(T as u32, T as u32)).checked(checked);
            transpose_tiled::launch(&stream, config, width, height, &input, &mut output).unwrap();
            let got = output.to_host(&stream).unwrap();
            for y in 0..height {
                for x in 0..width {
                    assert_eq!(got[x * height + y], input_host[y * width + x], "({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn two_dimensional_stencil() {
    for device in devices() {
        let stream = device.default_stream();
        let (width, height) = (45, 70);
        let input_host = random_f32(width * height, 6);
        let input = DeviceBuffer::from_host(&stream, &input_host).unwrap();
        for checked in [true, false] {
            let mut output = DeviceBuffer::zeroed(&stream, width * height).unwrap();
            let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(8) as u32);
            let config = LaunchConfig::new(grid, Block::xy(16, 8)).checked(checked);
            stencil_2d::launch(&stream, config, width, height, &input, &mut output).unwrap();
            let got = output.to_host(&stream).unwrap();
            for y in 0..height {
                for x in 0..width {
                    let c = y * width + x;
                    let expected = if x >= 1 && y >= 1 && x + 1 < width && y + 1 < height {
                        (input_host[c - 1]
                            + input_host[c + 1]
                            + input_host[c - width]
                            + input_host[c + width])
                            * 0.25
                            - input_host[c]
                    } else {
                        0.0
                    };
                    assert!((got[c] - expected).abs() <= 1e-6, "({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn guarded_subtraction_of_a_thread_index() {
    for device in devices() {
        let stream = device.default_stream();
        let n = 700;
        let x_host = random_f32(n, 7);
        let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
        for checked in [true, false] {
            let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
            let config =
                LaunchConfig::new(Grid::x(n.div_ceil(256) as u32), Block::x(256)).checked(checked);
            neighbour_difference::launch(&stream, config, &x, &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            for i in 0..n {
                let expected = if i % 256 > 0 {
                    x_host[i] - x_host[i - 1]
                } else {
                    x_host[i]
                };
                assert_eq!(got[i], expected, "{i}");
            }
        }
    }
}

#[test]
fn neighbours_clamped_with_min_and_max() {
    for device in devices() {
        let stream = device.default_stream();
        let n = 600;
        let x_host = random_f32(n, 8);
        let x = DeviceBuffer::from_host(&stream, &x_host).unwrap();
        for checked in [true, false] {
            let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
            let config =
                LaunchConfig::new(Grid::x(n.div_ceil(256) as u32), Block::x(256)).checked(checked);
            clamped_neighbours::launch(&stream, config, &x, &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            let tile = |i: usize| x_host.get(i).copied().unwrap_or(0.0);
            for (i, got) in got.iter().enumerate() {
                let (block, t) = (i / 256 * 256, i % 256);
                let expected = tile(block + t.max(1) - 1) + tile(block + (t + 1).min(255));
                assert_eq!(*got, expected, "{i}");
            }
        }
    }
}

#[test]
fn products_past_32_bits_stay_exact() {
    for device in devices() {
        let stream = device.default_stream();
        let (blocks, threads) = (2, 1024);
        for checked in [true, false] {
            let mut out = DeviceBuffer::zeroed(&stream, blocks * threads * 5).unwrap();
            let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32))
                .checked(checked);
            wide_products::launch(&stream, config, &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            for b in 0..blocks {
                for t in 0..threads {
                    let i = b * threads + t;
                    let expected = [
                        (t * (1 << 23)) >> 20,
                        (t * WIDE_STEP) / (WIDE_STEP >> 3),
                        ((t as u32).wrapping_mul(5_000_000)) as usize % 1_000_003,
                        t.wrapping_sub(1) >> 40,
                        (t * 4_000_000 + 4095) >> 12,
                    ];
                    for (k, expected) in expected.into_iter().enumerate() {
                        assert_eq!(got[i * 5 + k], expected as u64, "thread {t}, value {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn const_generic_products_pick_their_width_per_instantiation() {
    for device in devices() {
        let stream = device.default_stream();
        let threads = 1024;
        for checked in [true, false] {
            let config = LaunchConfig::new(Grid::x(1), Block::x(threads as u32)).checked(checked);
            let mut small = DeviceBuffer::zeroed(&stream, threads).unwrap();
            scaled_by_step::launch::<{ 1 << 10 }>(&stream, config, &mut small).unwrap();
            let mut large = DeviceBuffer::zeroed(&stream, threads).unwrap();
            scaled_by_step::launch::<{ 1 << 30 }>(&stream, config, &mut large).unwrap();
            let (small, large) = (
                small.to_host(&stream).unwrap(),
                large.to_host(&stream).unwrap(),
            );
            for t in 0..threads {
                let expected = |step: usize| ((t * step + (step - 1)) >> 9) as u64;
                assert_eq!(small[t], expected(1 << 10), "small, thread {t}");
                assert_eq!(large[t], expected(1 << 30), "large, thread {t}");
            }
        }
    }
}

/// 64-bit integer instructions in PTX: wide multiplies, 64-bit adds, shifts, compares and
/// conversions between the widths.
fn wide_integer_ops(ptx: &str) -> usize {
    ptx.lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|op| {
            op.starts_with("mul.wide")
                || op.starts_with("mad.wide")
                || op.starts_with("cvt.u64.u32")
                || op.starts_with("cvt.u32.u64")
                || [".s64", ".u64", ".b64"].iter().any(|w| op.ends_with(w))
                    && !op.starts_with("ld.")
                    && !op.starts_with("st.")
                    && !op.starts_with("cvta")
                    && !op.starts_with("mov")
        })
        .count()
}

/// The tiled matrix multiply's PTX computes its shared-memory and thread/block indices in 32
/// bits: the 64-bit integer instructions left are those of the unknown `n` (the tile loop's
/// counter and the global addresses).
#[test]
fn tiled_matmul_ptx_has_32_bit_shared_indices() {
    if !test_nvrtc() {
        return;
    }
    let ptx = compile_to_ptx(&matmul_tiled::KERNEL, (9, 0)).unwrap();
    let wide = wide_integer_ops(&ptx);
    let baseline = wide_integer_ops(&compile_to_ptx(&matmul_tiled_wide::KERNEL, (9, 0)).unwrap());
    println!("tiled matmul: {wide} 64-bit integer instructions in the PTX, {baseline} unnarrowed");
    // The counts depend on the NVRTC version; that narrowing removes some does not.
    assert!(
        wide < baseline,
        "narrowed: {wide}, with the indices left 64-bit: {baseline}\n{ptx}"
    );
}
/// The C++ compiler picks the width per instantiation: `t * STEP` shifts right in 32 bits for
/// a small `STEP` and in 64 bits for one whose products need them.
#[test]
fn const_generic_width_is_chosen_by_the_cpp_compiler() {
    if !test_nvrtc() {
        return;
    }
    let ptx = |step: u64| {
        compile_to_ptx_generic(&scaled_by_step::KERNEL, &[TemplateArg::Const(step)], (9, 0))
            .unwrap()
            .ptx
    };
    let (small, large) = (ptx(1 << 10), ptx(1 << 30));
    assert!(!small.contains("shr.u64"), "{small}");
    assert!(
        small.contains("shr.u32") || small.contains("shr.s32"),
        "{small}"
    );
    assert!(large.contains("shr.u64"), "{large}");
}

/// Both bodies of a kernel split at launch: a stride that keeps every product below 2^32
/// takes the 32-bit one, a stride of 2^40 the 64-bit one, and both match Rust.
#[test]
fn launch_picks_the_width_its_parameters_need() {
    assert!(scaled_by_parameter::SOURCE.contains("rs_body_scaled_by_parameter<true>"));
    for device in devices() {
        let stream = device.default_stream();
        let n = 3000;
        for stride in [3usize, 1 << 20, 1 << 40, usize::MAX / 4096] {
            for checked in [true, false] {
                let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
                let config = LaunchConfig::try_for_len(n, 256).unwrap().checked(checked);
                scaled_by_parameter::launch(&stream, config, stride, &mut out).unwrap();
                let got = out.to_host(&stream).unwrap();
                for (i, got) in got.iter().enumerate() {
                    let expected = (0..4).fold(0u64, |acc, k| {
                        let scaled = i.wrapping_mul(stride).wrapping_add(k);
                        acc.wrapping_add(scaled.wrapping_add(scaled / 7) as u64)
                    });
                    assert_eq!(*got, expected, "stride {stride}, element {i}");
                }
            }
        }
    }
}

#[test]
fn grid_stride_indices_fit_by_the_launch() {
    assert!(strided_rows::SOURCE.contains("strided_rows_rs_fits"));
    for device in devices() {
        let stream = device.default_stream();
        let on_gpu = device.backend() == gpu_dsl::runtime::Backend::Cuda;
        // A launch that fits; one of more threads than an `int` counts (2^31 + 1024), which
        // runs the 64-bit body, on a GPU only.
        let mut launches = vec![(Grid::xy(5, 3), 3, 5000)];
        if on_gpu {
            launches.push((Grid::xy((1 << 21) + 1, 2), 2, 3000));
        }
        for (grid, rows, n) in launches {
            for checked in [true, false] {
                let mut out = DeviceBuffer::zeroed(&stream, rows * n).unwrap();
                let config = LaunchConfig::new(grid, Block::x(1024)).checked(checked);
                strided_rows::launch(&stream, config, n, &mut out).unwrap();
                let got = out.to_host(&stream).unwrap();
                for (index, got) in got.iter().enumerate() {
                    let bits = u64::from(32 - ((index % n) as u32).leading_zeros());
                    assert_eq!(*got, index as u64 * 3 + bits, "{grid:?}, element {index}");
                }
            }
        }
    }
}

#[test]
fn tuple_parts_and_constant_bounded_steps() {
    // The parts bound one by one stay 32-bit, as separate `let`s do, and the tile loop
    // steps as C's does where the constant bound allows (`rs_step_by`).
    assert!(!tiles::SOURCE.contains("rs_tuple2<"));
    assert!(tiles::SOURCE.contains("rs_step_by<"));
    let threads = 64usize;
    let mut expected = vec![0u32; TILE_W * TILE_H];
    for tid in 0..threads {
        let (row, col) = (tid % TILE_W, tid / TILE_W);
        for offset in (0..TILE_H).step_by(threads / TILE_W) {
            expected[(row + offset) * TILE_W + col] = (tid * 1000 + offset) as u32;
        }
    }
    for device in devices() {
        let stream = device.default_stream();
        for checked in [true, false] {
            let mut out = DeviceBuffer::zeroed(&stream, TILE_W * TILE_H).unwrap();
            let config = LaunchConfig::new(Grid::x(1), Block::x(threads as u32)).checked(checked);
            tiles::launch(&stream, config, &mut out).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", device.name());
        }
    }
}

#[test]
fn closure_reads_of_a_clamped_neighbourhood() {
    assert!(neighbourhood_sum::SOURCE.contains("rs_fits"));
    for device in devices() {
        let stream = device.default_stream();
        let (width, height) = (77, 45);
        let image_host: Vec<u8> = (0..width * height).map(|i| (i * 37 % 251) as u8).collect();
        let image = DeviceBuffer::from_host(&stream, &image_host).unwrap();
        for checked in [true, false] {
            let mut out = DeviceBuffer::zeroed(&stream, width * height).unwrap();
            let grid = Grid::xy(width.div_ceil(16) as u32, height.div_ceil(16) as u32);
            let config = LaunchConfig::new(grid, Block::xy(16, 16)).checked(checked);
            neighbourhood_sum::launch(&stream, config, width, height, &image, &mut out).unwrap();
            let got = out.to_host(&stream).unwrap();
            for y in 0..height {
                for x in 0..width {
                    let (l, r) = (x.saturating_sub(1), (x + 1).min(width - 1));
                    let (u, d) = (y.saturating_sub(1), (y + 1).min(height - 1));
                    let at = |px: usize, py: usize| image_host[py * width + px] as u32;
                    let expected = at(l, u)
                        + at(x, u)
                        + at(r, u)
                        + at(l, y)
                        + at(r, y)
                        + at(l, d)
                        + at(x, d)
                        + at(r, d);
                    assert_eq!(got[y * width + x], expected, "({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn tree_reduction_with_a_halving_stride() {
    // The stride is declared 32-bit: its every value is below the block's size.
    assert!(
        tree_sum::SOURCE.contains("int stride = "),
        "{}",
        tree_sum::SOURCE
    );
    for device in devices() {
        let stream = device.default_stream();
        let n = 256 * 9 + 17;
        let host = random_f32(n, 11);
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let blocks = n.div_ceil(256);
        for checked in [true, false] {
            let mut sums = DeviceBuffer::zeroed(&stream, blocks).unwrap();
            let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(256)).checked(checked);
            tree_sum::launch(&stream, config, &x, &mut sums).unwrap();
            let got = sums.to_host(&stream).unwrap();
            for (b, got) in got.iter().enumerate() {
                let expected: f32 = host[b * 256..((b + 1) * 256).min(n)].iter().sum();
                assert!(
                    (got - expected).abs() <= 1e-3,
                    "block {b}: {got} vs {expected}"
                );
            }
        }
    }
}

/// A launch condition that names a constant from outside the kernel is computed by the
/// launcher too: the kernel only reads its hidden parameter.
#[test]
fn launch_condition_with_an_outer_constant() {
    let source = rows_by_constant::SOURCE;
    assert!(
        source.contains("if (rs_launch_fits) rs_body_rows_by_constant<true>"),
        "{source}"
    );
    for device in devices() {
        let stream = device.default_stream();
        let n = 300;
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, n * ROW).unwrap();
        let config = LaunchConfig::try_for_len(n, 128).unwrap();
        rows_by_constant::launch(&stream, config, n, &mut out).unwrap();
        let got = out.to_host(&stream).unwrap();
        for (k, got) in got.iter().enumerate() {
            assert_eq!(*got, k as u32 ^ 0x5555, "element {k}");
        }
    }
}
