//! Constants from outside the kernel, const-generic arithmetic as a length, `#[unroll(N)]`,
//! inclusive ranges and `_` bindings, each compared with a plain Rust computation.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, TemplateArg};

const TILE: usize = 32;
const SCALE: f32 = 1.5;
const OFFSET: i32 = -7;
const HALF_ONE: f16 = f16::ONE;
const FLAG: bool = true;

pub mod consts {
    /// Read through a path from the kernels below, and by the device function here.
    pub const STRIDE: u32 = 3;
    pub(crate) const PRIVATE_BIAS: f32 = 0.25;

    use gpu_dsl::prelude::*;

    /// Reads this module's constants: the kernel names them through this function's module.
    #[device]
    pub fn biased(x: f32) -> f32 {
        x * STRIDE as f32 + PRIVATE_BIAS + crate::SCALE_AGAIN
    }
}

const SCALE_AGAIN: f32 = 2.0;

#[kernel]
fn tiled_scale(x: &[f32], ints: &mut [i32], out: &mut [f32]) {
    let tile = shared_array::<f32, TILE>();
    let local = [0.0f32; { TILE / 8 }];
    let counts = [0u32; consts::STRIDE as usize];
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * TILE + t;
    tile[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let neighbour = tile[(t + 1) % TILE];
    if i < out.len() {
        let one: f16 = HALF_ONE;
        let half_one = one.to_f32();
        let flag = if FLAG { 1.0 } else { 0.0 };
        out[i] = consts::biased(neighbour * SCALE) + local[t % (TILE / 8)] + half_one * flag;
        ints[i] = i as i32 * consts::STRIDE as i32 + OFFSET + counts[i % 3] as i32;
    }
}

#[test]
fn outer_constants_reach_both_backends() {
    assert_compiles_with_nvrtc(&[(&tiled_scale::KERNEL, &[])]);
    // The values reach the CUDA source exactly: integers in full, floats by their bits.
    for spelled in [
        format!("[{TILE}ull]"),
        format!("__int_as_float((int)0x{:08x}u)", SCALE.to_bits()),
        format!("(-{} - 1)", -OFFSET - 1),
        format!("rs_f16::from_bits(0x{:04x})", HALF_ONE.to_bits()),
    ] {
        assert!(
            tiled_scale::SOURCE.contains(&spelled),
            "{spelled} in {}",
            tiled_scale::SOURCE
        );
    }
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 100;
    let host = random_f32(n, 3);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut ints = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let blocks = n.div_ceil(TILE) as u32;
    let config = LaunchConfig::new(Grid::x(blocks), Block::x(TILE as u32));
    tiled_scale::launch(&stream, config, &x, &mut ints, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    let got_ints = ints.to_host(&stream).unwrap();
    for i in 0..n {
        let block = i / TILE;
        let j = block * TILE + (i % TILE + 1) % TILE;
        let neighbour = if j < n { host[j] } else { 0.0 };
        let expected = (neighbour * SCALE) * 3.0 + 0.25 + SCALE_AGAIN + 1.0;
        assert!(
            (got[i] - expected).abs() < 1e-5,
            "[{i}] {} vs {expected}",
            got[i]
        );
        assert_eq!(got_ints[i], i as i32 * 3 + OFFSET, "[{i}]");
    }
}

/// Block-wide sums through a `BLOCK * BLOCK` tile and an `N + 1` local array, with lengths
/// from const parameters' arithmetic and an outer constant.
#[kernel]
fn tile_sums<const BLOCK: usize, const N: usize>(x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, { BLOCK * BLOCK }>();
    let mut window = [0.0f32; { N + 1 }];
    let spare = [1.0f32; { TILE / 16 + N }];
    let t = thread_idx().x as usize;
    let base = block_idx().x as usize * (BLOCK * BLOCK);
    tile[t] = if base + t < x.len() { x[base + t] } else { 0.0 };
    sync_threads();
    #[unroll(2)]
    for k in 0..=N {
        window[k] = tile[(t + k) % (BLOCK * BLOCK)];
    }
    let mut sum = 0.0f32;
    for k in 0..window.len() {
        sum += window[k];
    }
    if base + t < out.len() {
        out[base + t] = sum + spare[t % spare.len()] - 1.0;
    }
}

#[test]
fn const_generic_arithmetic_sizes_shared_memory_and_arrays() {
    const BLOCK: usize = 8;
    const N: usize = 3;
    assert_compiles_with_nvrtc(&[(
        &tile_sums::KERNEL,
        &[
            TemplateArg::Const(BLOCK as u64),
            TemplateArg::Const(N as u64),
        ],
    )]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 150;
    let host = random_f32(n, 9);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let threads = BLOCK * BLOCK;
    let config = LaunchConfig::new(
        Grid::x(n.div_ceil(threads) as u32),
        Block::x(threads as u32),
    );
    tile_sums::launch::<BLOCK, N>(&stream, config, &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, got) in got.iter().enumerate() {
        let base = i / threads * threads;
        let t = i - base;
        let expected: f32 = (0..=N)
            .map(|k| {
                let j = base + (t + k) % threads;
                if j < n {
                    host[j]
                } else {
                    0.0
                }
            })
            .sum();
        assert!((got - expected).abs() < 1e-5, "[{i}] {got} vs {expected}");
    }
}

/// `a..=b` up to the type's maximum, with and without `step_by`; `let _ = ...;` and
/// `_name` bindings.
#[kernel]
fn inclusive_ranges(_unused: u32, from: u32, out: &mut [u32]) {
    let i = global_idx().x;
    if i < out.len() {
        let mut count = 0u32;
        for _k in from..=u32::MAX {
            count += 1;
        }
        let mut stepped = 0u32;
        for k in (from..=u32::MAX).step_by(i + 1) {
            stepped = stepped.wrapping_add(k);
        }
        let mut empty = 0u32;
        for _ in 5..=4 {
            empty += 1;
        }
        // Signed and small counters up to their maxima, with `continue` skipping the rest.
        let mut signed = 0i32;
        for k in (i32::MAX - 3)..=i32::MAX {
            if k == i32::MAX - 1 {
                continue;
            }
            signed = signed.wrapping_add(k);
        }
        let mut small = 0u32;
        for b in 250u8..=u8::MAX {
            small += b as u32;
        }
        for d in -3i8..=i8::MIN {
            small += d as u32;
        }
        let _ = out[i];
        let _spare = count;
        out[i] = count + stepped + empty + signed as u32 + small;
    }
}

#[test]
fn inclusive_ranges_reach_the_maximum() {
    assert_compiles_with_nvrtc(&[(&inclusive_ranges::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 40;
    let from = u32::MAX - 20;
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::for_len(n, 32);
    inclusive_ranges::launch(&stream, config, 0, from, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, got) in got.iter().enumerate() {
        let count = (from..=u32::MAX).count() as u32;
        let stepped = (from..=u32::MAX)
            .step_by(i + 1)
            .fold(0u32, |a, k| a.wrapping_add(k));
        let signed = ((i32::MAX - 3)..=i32::MAX)
            .filter(|&k| k != i32::MAX - 1)
            .fold(0i32, |a, k| a.wrapping_add(k));
        let small: u32 = (250u8..=u8::MAX).map(u32::from).sum();
        let expected = count
            .wrapping_add(stepped)
            .wrapping_add(signed as u32)
            .wrapping_add(small);
        assert_eq!(*got, expected, "[{i}]");
    }
}

const TAPS: usize = 3;
const WEIGHT: f64 = 0.25;

/// Reads this module's constants, called from a kernel in the same module.
#[device]
fn weighted(v: f32) -> f32 {
    (v as f64 * WEIGHT) as f32 * TAPS as f32
}

/// A kernel `const` computed from an outer constant, sizing an annotated array.
#[kernel]
fn windowed(x: &[f32], out: &mut [f32]) {
    const WIDTH: usize = TAPS * 2 - 1;
    let mut window: [f32; WIDTH] = [0.0; WIDTH];
    let i = global_idx().x;
    if i < out.len() {
        for k in 0..WIDTH {
            window[k] = if i + k < x.len() { x[i + k] } else { 0.0 };
        }
        let mut sum = 0.0f32;
        for k in 0..window.len() {
            sum += weighted(window[k]);
        }
        out[i] = sum;
    }
}

#[test]
fn outer_constants_in_local_consts_and_same_module_device_functions() {
    assert_compiles_with_nvrtc(&[(&windowed::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 70;
    let host = random_f32(n, 5);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    windowed::launch(&stream, LaunchConfig::for_len(n, 32), &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    let width = TAPS * 2 - 1;
    for (i, got) in got.iter().enumerate() {
        let expected: f32 = (0..width)
            .map(|k| {
                let v = if i + k < n { host[i + k] } else { 0.0 };
                (v as f64 * WEIGHT) as f32 * TAPS as f32
            })
            .sum();
        assert!((got - expected).abs() < 1e-5, "[{i}] {got} vs {expected}");
    }
}

const SMALL: u32 = 2;
const LIMIT: u32 = 5;

/// Outer constants as `match` patterns: a name compares with the value, as in Rust.
#[kernel]
fn classify(x: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if i < x.len() {
        let class = match x[i] {
            SMALL => 100,
            0..=LIMIT => 200,
            _ => 300,
        };
        out[i] = class;
    }
}

#[test]
fn outer_constants_as_patterns() {
    assert_compiles_with_nvrtc(&[(&classify::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<u32> = (0..12).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    classify::launch(&stream, LaunchConfig::for_len(host.len(), 32), &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    let expected: Vec<u32> = host
        .iter()
        .map(|v| match *v {
            SMALL => 100,
            0..=LIMIT => 200,
            _ => 300,
        })
        .collect();
    assert_eq!(got, expected);
}

const BLOCK_THREADS: usize = 128;
const MIN_BLOCKS: u32 = 2;

/// Launch bounds from the constants the host launches with.
#[kernel(launch_bounds(BLOCK_THREADS, MIN_BLOCKS))]
fn bounded(out: &mut [u32]) {
    let i = global_idx().x;
    if i < out.len() {
        out[i] = BLOCK_THREADS as u32 * 2 + MIN_BLOCKS;
    }
}

#[test]
fn outer_constants_as_launch_bounds() {
    assert_compiles_with_nvrtc(&[(&bounded::KERNEL, &[])]);
    let spelled = format!("__launch_bounds__({BLOCK_THREADS}u, {MIN_BLOCKS}u)");
    assert!(bounded::SOURCE.contains(&spelled), "{}", bounded::SOURCE);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 300;
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    bounded::launch(
        &stream,
        LaunchConfig::for_len(n, BLOCK_THREADS as u32),
        &mut out,
    )
    .unwrap();
    let got = out.to_host(&stream).unwrap();
    assert_eq!(got, vec![(BLOCK_THREADS * 2) as u32 + MIN_BLOCKS; n]);
}

/// A host type whose associated constants kernels read.
pub struct Gravity;

impl Gravity {
    pub const G: f32 = 9.81;
    pub const STEPS: u32 = 4;
}

/// Associated constants of a type, named by path like any outer constant.
#[kernel]
fn fall(v: &mut [f32]) {
    let i = global_idx().x;
    if i < v.len() {
        // The loop alone does not give the constant a type: `as` does.
        for _ in 0..Gravity::STEPS as u32 {
            v[i] += Gravity::G * 0.5;
        }
    }
}

#[test]
fn associated_constants_are_outer_constants() {
    assert_compiles_with_nvrtc(&[(&fall::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = random_f32(50, 11);
    let mut v = DeviceBuffer::from_host(&stream, &host).unwrap();
    fall::launch(&stream, LaunchConfig::for_len(host.len(), 32), &mut v).unwrap();
    let got = v.to_host(&stream).unwrap();
    for (i, (got, start)) in got.iter().zip(&host).enumerate() {
        let mut expected = *start;
        for _ in 0..Gravity::STEPS {
            expected += Gravity::G * 0.5;
        }
        assert!((got - expected).abs() < 1e-5, "[{i}] {got} vs {expected}");
    }
}

/// A 5-tap Gaussian as CUDA samples write filter weights, a module constant.
const GAUSS5: [f32; 5] = [0.0625, 0.25, 0.375, 0.25, 0.0625];
/// A lookup table indexed by data.
const NIBBLE_BITS: [u8; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

pub mod tables {
    /// Read by the device function beside it and, through a path, by the kernel.
    pub const OFFSETS: [i64; 3] = [-1_000_000_000_000, 0, i64::MAX];

    use gpu_dsl::prelude::*;

    /// A table read from a device function's own module.
    #[device]
    pub fn offset(k: usize) -> i64 {
        OFFSETS[k % OFFSETS.len()]
    }
}

/// Tables of module constants: indexed by a constant, by a loop counter, by data, walked by
/// a `for` loop, and their lengths.
#[kernel]
fn tables_of_constants(
    x: &[f32],
    bytes: &[u8],
    out: &mut [f32],
    counts: &mut [u32],
    wide: &mut [i64],
) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let mut s = 0.0f32;
    for k in 0..GAUSS5.len() {
        let j = (i + k).min(x.len() - 1);
        s += GAUSS5[k] * x[j];
    }
    for (k, w) in GAUSS5.iter().enumerate() {
        s += *w * k as f32 * 0.001;
    }
    out[i] = s + GAUSS5[2];
    let b = bytes[i];
    let low: u8 = NIBBLE_BITS[(b & 15) as usize];
    counts[i] = (low + NIBBLE_BITS[(b >> 4) as usize]) as u32;
    wide[i] = tables::offset(i) + tables::OFFSETS[1];
}

#[test]
fn array_constants_are_tables_on_both_backends() {
    let n = 300;
    let x = random_f32(n, 97);
    let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
    let expected: Vec<f32> = (0..n)
        .map(|i| {
            let mut s = 0.0f32;
            for k in 0..GAUSS5.len() {
                s += GAUSS5[k] * x[(i + k).min(n - 1)];
            }
            for (k, w) in GAUSS5.iter().enumerate() {
                s += *w * k as f32 * 0.001;
            }
            s + GAUSS5[2]
        })
        .collect();
    let expected_counts: Vec<u32> = bytes.iter().map(|b| b.count_ones()).collect();
    let expected_wide: Vec<i64> = (0..n).map(|i| tables::OFFSETS[i % 3]).collect();
    for gpu in common::backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let db = DeviceBuffer::from_host(&stream, &bytes).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut counts = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        let mut wide = DeviceBuffer::<i64>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        tables_of_constants::launch(&stream, config, &dx, &db, &mut out, &mut counts, &mut wide)
            .unwrap();
        common::close(&out.to_host(&stream).unwrap(), &expected, 1e-6);
        assert_eq!(
            counts.to_host(&stream).unwrap(),
            expected_counts,
            "{}",
            gpu.name()
        );
        assert_eq!(
            wide.to_host(&stream).unwrap(),
            expected_wide,
            "{}",
            gpu.name()
        );
    }
    assert_compiles_with_nvrtc(&[(&tables_of_constants::KERNEL, &[])]);
}

/// A scale a method of a `#[device]` type reads.
const KELVIN_OFFSET: f32 = 273.15;

/// A temperature, whose methods read an outer constant.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Celsius {
    pub degrees: f32,
}

#[device]
impl Celsius {
    /// The temperature in kelvin.
    pub fn kelvin(self) -> f32 {
        self.degrees + KELVIN_OFFSET
    }
}

#[device]
impl core::ops::Mul<f32> for Celsius {
    type Output = Celsius;
    fn mul(self, s: f32) -> Celsius {
        Celsius {
            degrees: self.degrees * s * TABLE_SCALE[1],
        }
    }
}

/// A table a trait method reads.
const TABLE_SCALE: [f32; 2] = [0.5, 2.0];

/// Methods and operators of a `#[device]` type that read outer constants and tables, named
/// after the method as the kernel's other functions name them.
#[kernel]
fn to_kelvin(c: &[Celsius], out: &mut [f32]) {
    let i = global_idx().x;
    if i < out.len() {
        out[i] = (c[i] * 0.5).kelvin();
    }
}

#[test]
fn methods_of_device_types_read_outer_constants() {
    assert_compiles_with_nvrtc(&[(&to_kelvin::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<Celsius> = random_f32(40, 12)
        .into_iter()
        .map(|v| Celsius { degrees: v * 50.0 })
        .collect();
    let c = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, host.len()).unwrap();
    to_kelvin::launch(&stream, LaunchConfig::for_len(host.len(), 32), &c, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (i, (got, c)) in got.iter().zip(&host).enumerate() {
        let expected = c.degrees * 0.5 * TABLE_SCALE[1] + KELVIN_OFFSET;
        assert!((got - expected).abs() < 1e-4, "[{i}] {got} vs {expected}");
    }
}

/// The divisor of a normalisation, known only to rustc as an `f32`.
const VARIANCE: f32 = 6.25;

/// The most of a count, a `u32`.
const CAP: u32 = 20;

/// Methods called on constants whose type only the code around them gives, as PolyBench's
/// correlation divides by `sqrt(FLOAT_N)`: `VARIANCE.sqrt()` is an `f32` because it multiplies
/// one, `CAP.min(..)` a `u32` because its argument is.
#[kernel]
fn constant_methods(x: &[f32], y: &mut [f32], counts: &mut [u32]) {
    let i = global_idx().x;
    if i < x.len() {
        y[i] = x[i] / VARIANCE.sqrt() + VARIANCE.max(x[i] * 10.0);
        counts[i] = CAP.min(i as u32 * 3);
    }
}

#[test]
fn methods_of_constants_take_their_types_from_their_uses() {
    assert_compiles_with_nvrtc(&[(&constant_methods::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = random_f32(100, 101);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, host.len()).unwrap();
    let mut counts = DeviceBuffer::<u32>::zeroed(&stream, host.len()).unwrap();
    let config = LaunchConfig::for_len(host.len(), 64);
    constant_methods::launch(&stream, config, &x, &mut y, &mut counts).unwrap();
    let (y, counts) = (
        y.to_host(&stream).unwrap(),
        counts.to_host(&stream).unwrap(),
    );
    for (i, v) in host.iter().enumerate() {
        let expected = v / VARIANCE.sqrt() + VARIANCE.max(v * 10.0);
        assert!(
            (y[i] - expected).abs() <= 1e-6 * (1.0 + expected.abs()),
            "{i}"
        );
        assert_eq!(counts[i], CAP.min(i as u32 * 3), "{i}");
    }
}

pub mod mesh {
    use gpu_dsl::prelude::*;

    /// Neighbours a cell lists, at most.
    pub const MAX_NEIGHBOURS: usize = 4;
    /// Components of a position.
    const DIM: usize = 3;

    /// A mesh cell whose arrays' lengths are this module's constants, which a kernel in another
    /// module names only through the struct.
    #[device]
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    #[repr(C)]
    pub struct Cell {
        pub count: u32,
        pub neighbours: [u32; MAX_NEIGHBOURS],
        pub centre: [f32; DIM],
        pub weights: [[f32; 2]; MAX_NEIGHBOURS + 1],
    }
}

use mesh::Cell;

/// Each cell's value: its weighted neighbours' values plus its own, over the lists' lengths
/// as the struct gives them.
#[kernel]
fn gather_neighbours(cells: &[Cell], values: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < cells.len() {
        let cell = cells[i];
        let mut sum = cell.weights[cell.neighbours.len()][0] * values[i];
        for (n, &j) in cell.neighbours.iter().enumerate() {
            if (n as u32) < cell.count {
                sum += cell.weights[n][1] * values[j as usize];
            }
        }
        let mut norm = 0.0f32;
        for c in cell.centre {
            norm += c * c;
        }
        out[i] = sum + norm;
    }
}

/// Scales each cell's centre in place, walking the field of an element of memory.
#[kernel]
fn scale_centres(cells: &mut [Cell], factor: f32) {
    let i = global_idx().x;
    if i < cells.len() {
        for c in cells[i].centre.iter_mut() {
            *c *= factor;
        }
    }
}

/// Fills `part` with its indices times `step`: a device function's `&mut [u32]`.
#[device]
fn ramp(part: &mut [u32], step: u32) {
    for k in 0..part.len() {
        part[k] = k as u32 * step;
    }
}

/// Sums of parts of arrays: a cell's listed neighbours (`&cell.neighbours[..n]`), and a part of
/// a local array written through a device function.
#[kernel]
fn listed_sums(cells: &[Cell], out: &mut [u32]) {
    let i = global_idx().x;
    if i < cells.len() {
        let cell = cells[i];
        let n = cell.count as usize;
        let listed = &cell.neighbours[..n];
        let mut local = [1u32; 8];
        let lo = i % 4;
        ramp(&mut local[lo..lo + 3], 5);
        let mut spread = 0u32;
        for &v in local[lo..].iter() {
            spread += v;
        }
        out[i] = listed.iter().sum::<u32>() + 1000 * spread;
    }
}

#[test]
fn parts_of_arrays_in_structs_and_locals() {
    assert_compiles_with_nvrtc(&[(&listed_sums::KERNEL, &[])]);
    let n = 200;
    let cells: Vec<Cell> = (0..n)
        .map(|i| Cell {
            count: (i % 5) as u32,
            neighbours: [i as u32, 3 * i as u32, 7, 11],
            ..Cell::default()
        })
        .collect();
    let expected: Vec<u32> = (0..n)
        .map(|i| {
            let cell = &cells[i];
            let listed: u32 = cell.neighbours.iter().take(cell.count as usize).sum();
            let mut local = [1u32; 8];
            let lo = i % 4;
            for k in 0..3 {
                local[lo + k] = k as u32 * 5;
            }
            listed + 1000 * local[lo..].iter().sum::<u32>()
        })
        .collect();
    for gpu in common::backends() {
        let stream = gpu.default_stream();
        let cells_buf = DeviceBuffer::from_host(&stream, &cells).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::try_for_len(n, 64).unwrap();
        listed_sums::launch(&stream, config, &cells_buf, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected);
    }
}

#[test]
fn struct_array_lengths_from_outer_constants() {
    assert_compiles_with_nvrtc(&[
        (&gather_neighbours::KERNEL, &[]),
        (&scale_centres::KERNEL, &[]),
    ]);
    let n = 300;
    let values = random_f32(n, 41);
    let noise = random_f32(n * 16, 42);
    let cells: Vec<Cell> = (0..n)
        .map(|i| {
            let mut cell = Cell {
                count: (i % 5) as u32,
                ..Cell::default()
            };
            for k in 0..mesh::MAX_NEIGHBOURS {
                cell.neighbours[k] = ((i * 7 + k * 13) % n) as u32;
                cell.weights[k] = [noise[16 * i + 2 * k], noise[16 * i + 2 * k + 1]];
            }
            cell.weights[mesh::MAX_NEIGHBOURS] = [noise[16 * i + 10], 0.0];
            cell.centre = [noise[16 * i + 11], noise[16 * i + 12], noise[16 * i + 13]];
            cell
        })
        .collect();
    let expected: Vec<f32> = cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            let mut sum = cell.weights[mesh::MAX_NEIGHBOURS][0] * values[i];
            for k in 0..cell.count as usize {
                sum += cell.weights[k][1] * values[cell.neighbours[k] as usize];
            }
            sum + cell.centre.iter().map(|c| c * c).sum::<f32>()
        })
        .collect();
    for gpu in common::backends() {
        let stream = gpu.default_stream();
        let cells_buf = DeviceBuffer::from_host(&stream, &cells).unwrap();
        let values_buf = DeviceBuffer::from_host(&stream, &values).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::try_for_len(n, 128).unwrap();
        gather_neighbours::launch(&stream, config, &cells_buf, &values_buf, &mut out).unwrap();
        common::close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        let mut scaled = DeviceBuffer::from_host(&stream, &cells).unwrap();
        scale_centres::launch(&stream, config, &mut scaled, -2.0).unwrap();
        for (cell, got) in cells.iter().zip(scaled.to_host(&stream).unwrap()) {
            assert_eq!(got.centre, cell.centre.map(|c| c * -2.0));
            assert_eq!(
                (got.neighbours, got.weights),
                (cell.neighbours, cell.weights)
            );
        }
    }
}
