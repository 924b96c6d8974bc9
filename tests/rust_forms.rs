//! Forms Rust users write that kernels accept: atomics on a row of a 2-D shared array,
//! `Option` locals, `min_by`/`max_by` and their `_key` forms, checked arithmetic consumed at
//! once, `chunks` walks, and loops bounded by a module constant whose type only rustc knows;
//! each against the same Rust on the host, on the CPU backend and the GPU where there is one.

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{Kernel, TemplateArg};

const HIST_WARPS: usize = 4;

/// A byte histogram: each warp counts into its own row of a 2-D shared array.
#[kernel]
fn histogram_rows(data: &[u8], bins: &mut [u32]) {
    let hist = shared_array::<[u32; 256], HIST_WARPS>();
    let tid = thread_idx().x as usize;
    let warp = tid / 32;
    for b in (tid..256).step_by(block_dim().x as usize) {
        for w in 0..HIST_WARPS {
            hist[w][b] = 0;
        }
    }
    sync_threads();
    let mut i = global_idx().x;
    while i < data.len() {
        hist[warp].atomic_add(data[i] as usize, 1);
        i += grid_size().x;
    }
    sync_threads();
    for b in (tid..256).step_by(block_dim().x as usize) {
        let mut sum = 0u32;
        for w in 0..HIST_WARPS {
            sum += hist[w][b];
        }
        bins.atomic_add(b, sum);
    }
}

/// An atomic past the end of a row, for checked mode.
#[kernel]
fn row_past_the_end(at: usize, out: &mut [u32]) {
    let rows = shared_array::<[u32; 8], 2>();
    let old = rows[1].atomic_max(at, 5);
    out[0] = old;
}

/// For each point, the nearest center closer than `limit`, if any, read back every way an
/// `Option` is taken apart.
#[kernel]
fn nearest_within(points: &[f32], centers: &[f32], limit: f32, out: &mut [u32]) {
    let i = global_idx().x;
    if i >= points.len() {
        return;
    }
    let mut best: Option<usize> = None;
    let mut best_d = limit;
    for j in 0..centers.len() {
        let d = (points[i] - centers[j]).abs();
        if d < best_d {
            best_d = d;
            best = Some(j);
        }
    }
    if let Some(j) = best {
        out[i * 5] = j as u32;
    } else {
        out[i * 5] = u32::MAX;
    }
    out[i * 5 + 1] = match best {
        Some(j) => j as u32 * 2,
        None => 1,
    };
    out[i * 5 + 2] = best.unwrap_or(7) as u32;
    out[i * 5 + 3] = best.is_some() as u32
        + 2 * best.is_none() as u32
        + 4 * (best == Some(3)) as u32
        + 8 * (best != None) as u32;
    let copy = best;
    let again = if let Some(j) = copy { j + 1 } else { 0 };
    out[i * 5 + 4] = again as u32;
}

/// `unwrap` of a `None`, which panics with Rust's message.
#[kernel]
fn unwrap_none(limit: usize, out: &mut [u32]) {
    let mut found: Option<u32> = None;
    for k in 0..10usize {
        if k > limit {
            found = Some(k as u32);
            break;
        }
    }
    out[0] = found.unwrap();
}

/// Checked arithmetic consumed at once, on every pair of bytes.
#[kernel]
fn checked_bytes(a: &[u8], b: &[u8], out: &mut [u32]) {
    let i = global_idx().x;
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        out[i * 6] =
            x.checked_add(y).unwrap_or(0) as u32 + 1000 * x.checked_add(y).is_none() as u32;
        out[i * 6 + 1] = if let Some(d) = x.checked_sub(y) {
            d as u32
        } else {
            999
        };
        out[i * 6 + 2] = match x.checked_mul(y) {
            Some(p) => p as u32,
            None => 777,
        };
        let product = (x as i8).checked_mul(y as i8);
        out[i * 6 + 3] = match product {
            Some(v) => (v as i32 + 1000) as u32,
            None => 5,
        };
        out[i * 6 + 4] = ((x as i8).checked_sub(y as i8).unwrap_or_default() as i32 + 500) as u32;
        out[i * 6 + 5] = ((x as i8).checked_add(y as i8).unwrap_or(i8::MIN) as i32 + 500) as u32;
    }
}

/// Per row of `k` values: the first smallest and last largest index (`min_by` / `max_by` over
/// a range, by `partial_cmp` and `total_cmp`), the same by keys, and the extreme values of a
/// slice's walk.
#[kernel]
fn extremes_by(d: &[f32], k: usize, out: &mut [u32], values: &mut [f32]) {
    let i = global_idx().x;
    if (i + 1) * k > d.len() {
        return;
    }
    let row = i * k;
    out[i * 5] = (0..k)
        .min_by(|&a, &b| d[row + a].partial_cmp(&d[row + b]).unwrap())
        .unwrap() as u32;
    out[i * 5 + 1] = (0..k)
        .max_by(|&a, &b| d[row + a].partial_cmp(&d[row + b]).unwrap())
        .unwrap() as u32;
    out[i * 5 + 2] = (0..k)
        .max_by(|a, b| d[row + *a].total_cmp(&d[row + *b]))
        .unwrap() as u32;
    out[i * 5 + 3] = (0..k).min_by_key(|&j| (d[row + j] * 4.0) as i32).unwrap() as u32;
    out[i * 5 + 4] = (0..k)
        .rev()
        .max_by_key(|&j| (d[row + j] * 4.0) as i32)
        .unwrap_or(99) as u32;
    values[i * 3] = d
        .iter()
        .skip(row)
        .take(k)
        .copied()
        .max_by(f32::total_cmp)
        .unwrap();
    values[i * 3 + 1] = *d
        .iter()
        .skip(row)
        .take(k)
        .min_by(|a, b| a.total_cmp(b))
        .unwrap();
    values[i * 3 + 2] = (0..k)
        .map(|j| d[row + j])
        .min_by(|a, b| b.partial_cmp(a).unwrap())
        .unwrap();
}

const STEPS: i32 = 37;
const ROUNDS: u32 = 5;
const TAPS: usize = 3;

/// Loops bounded by module constants: `STEPS`, whose uses fix no type, is an `i32` as Rust
/// types an integer literal; `ROUNDS` and `TAPS` take the types their uses need.
#[kernel]
fn constant_bounds(x: &[f32], out: &mut [f32], counts: &mut [u32]) {
    let i = global_idx().x;
    if i + TAPS > x.len() {
        return;
    }
    let mut acc = 0.0f32;
    for _ in 0..STEPS {
        acc = acc * 0.5 + x[i];
    }
    let mut it = 0;
    while it < STEPS && acc > 0.05 * it as f32 {
        it += 1;
    }
    let n = STEPS;
    let mut total = 0u32;
    for k in 0..ROUNDS {
        total += k * k;
    }
    let mut window = 0.0;
    for k in 0..TAPS {
        window += x[i + k];
    }
    out[i] = acc + window + (n - it - 40) as f32;
    counts[i] = total + it as u32;
}

const ROW: usize = 23;

/// A slice's chunks and windows, walked over a whole slice and over parts of one.
#[kernel]
fn chunk_walks(x: &[f32], k: usize, out: &mut [f32], pairs: &mut [f32]) {
    let i = global_idx().x;
    if i >= x.len() / ROW {
        return;
    }
    let mut exact = 0.0;
    for c in x[i * ROW..(i + 1) * ROW].chunks_exact(4) {
        exact += c[0] * c[3];
    }
    let row = &x[i * ROW..(i + 1) * ROW];
    let mut ragged = 0.0;
    for (j, c) in row.chunks(8).enumerate() {
        ragged += j as f32 * c.len() as f32;
        for v in c.iter() {
            ragged += v;
        }
    }
    let mut widest = f32::MIN;
    for w in row.windows(3) {
        widest = widest.max(w[0] + w[1] * w[2]);
    }
    let (mut count, mut last) = (0u32, 0usize);
    for c in x.chunks(k) {
        count += 1;
        last = c.len();
    }
    out[i * 5] = exact;
    out[i * 5 + 1] = ragged;
    out[i * 5 + 2] = widest;
    out[i * 5 + 3] = count as f32;
    out[i * 5 + 4] = last as f32;
    for (j, p) in pairs[i * 6..i * 6 + 6].chunks_exact_mut(2).enumerate() {
        p[0] = row[j];
        p[1] = row[j] * 2.0;
    }
}

const KERNELS: &[&Kernel] = &[
    &histogram_rows::KERNEL,
    &row_past_the_end::KERNEL,
    &nearest_within::KERNEL,
    &unwrap_none::KERNEL,
    &checked_bytes::KERNEL,
    &extremes_by::KERNEL,
    &constant_bounds::KERNEL,
    &chunk_walks::KERNEL,
];

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let cases: Vec<(&Kernel, &[TemplateArg])> = KERNELS.iter().map(|k| (*k, &[][..])).collect();
    assert_compiles_with_nvrtc(&cases);
}

#[test]
fn atomics_on_a_row_of_shared_memory_count_every_byte() {
    assert!(
        histogram_rows::SOURCE.contains("rs_atomic_add(&hist["),
        "{}",
        histogram_rows::SOURCE
    );
    let data: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut expected = vec![0u32; 256];
    for &b in &data {
        expected[b as usize] += 1;
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dd = DeviceBuffer::from_host(&stream, &data).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
        let config = LaunchConfig::new(Grid::x(7), Block::x(32 * HIST_WARPS as u32));
        histogram_rows::launch(&stream, config, &dd, &mut bins).unwrap();
        assert_eq!(bins.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn an_atomic_past_the_end_of_a_row_panics_in_checked_mode() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1)).checked(true);
        row_past_the_end::launch(&stream, config, 7, &mut out).unwrap();
        stream.synchronize().unwrap();
        row_past_the_end::launch(&stream, config, 8, &mut out).unwrap();
        let err = stream.synchronize().expect_err("index 8 of a row of 8");
        let message = common::panic_message(&err);
        assert_eq!(
            message,
            "index out of bounds: the len is 8 but the index is 8"
        );
    }
}

#[test]
fn option_locals_keep_the_best_candidate() {
    let points: Vec<f32> = (0..300).map(|i| (i as f32 * 0.37).sin() * 10.0).collect();
    let centers: Vec<f32> = (0..17).map(|j| j as f32 * 1.3 - 9.0).collect();
    let limit = 0.3f32;
    let mut expected = Vec::new();
    for &p in &points {
        let mut best: Option<usize> = None;
        let mut best_d = limit;
        for (j, &c) in centers.iter().enumerate() {
            let d = (p - c).abs();
            if d < best_d {
                best_d = d;
                best = Some(j);
            }
        }
        expected.push(best.map_or(u32::MAX, |j| j as u32));
        expected.push(best.map_or(1, |j| j as u32 * 2));
        expected.push(best.unwrap_or(7) as u32);
        expected.push(
            best.is_some() as u32
                + 2 * best.is_none() as u32
                + 4 * (best == Some(3)) as u32
                + 8 * best.is_some() as u32,
        );
        expected.push(best.map_or(0, |j| j + 1) as u32);
    }
    assert!(expected.chunks(5).any(|c| c[3] == 9) && expected.chunks(5).any(|c| c[3] == 2));
    assert!(expected.chunks(5).any(|c| c[3] == 13));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dp = DeviceBuffer::from_host(&stream, &points).unwrap();
        let dc = DeviceBuffer::from_host(&stream, &centers).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, points.len() * 5).unwrap();
        let config = LaunchConfig::for_len(points.len(), 64);
        nearest_within::launch(&stream, config, &dp, &dc, limit, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn unwrap_of_none_panics_with_rusts_message() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1));
        unwrap_none::launch(&stream, config, 3, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), [4], "{}", gpu.name());
        unwrap_none::launch(&stream, config, 20, &mut out).unwrap();
        let err = stream.synchronize().expect_err("nothing found");
        let message = common::panic_message(&err);
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

#[test]
fn checked_arithmetic_matches_rust_on_every_pair_of_bytes() {
    let (a, b): (Vec<u8>, Vec<u8>) = (0..=255u8)
        .flat_map(|x| (0..=255u8).map(move |y| (x, y)))
        .unzip();
    let mut expected = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        expected
            .push(x.checked_add(y).unwrap_or(0) as u32 + 1000 * x.checked_add(y).is_none() as u32);
        expected.push(x.checked_sub(y).map_or(999, u32::from));
        expected.push(x.checked_mul(y).map_or(777, u32::from));
        expected.push(
            (x as i8)
                .checked_mul(y as i8)
                .map_or(5, |v| (v as i32 + 1000) as u32),
        );
        expected.push(((x as i8).checked_sub(y as i8).unwrap_or_default() as i32 + 500) as u32);
        expected.push(((x as i8).checked_add(y as i8).unwrap_or(i8::MIN) as i32 + 500) as u32);
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, a.len() * 6).unwrap();
        let config = LaunchConfig::for_len(a.len(), 256);
        checked_bytes::launch(&stream, config, &da, &db, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// Rows with ties, signed zeros and (for the panic) a NaN.
fn tied_rows(rows: usize, k: usize) -> Vec<f32> {
    (0..rows * k)
        .map(|n| match (n * 7 + n / k) % 5 {
            0 => 0.0,
            1 => -0.0,
            v => ((v as f32) * 0.75).floor() * 0.25 - 1.0,
        })
        .collect()
}

#[test]
fn max_by_and_min_by_follow_rusts_ties() {
    let (rows, k) = (200, 9);
    let d = tied_rows(rows, k);
    let mut expected = Vec::new();
    let mut expected_values = Vec::new();
    for i in 0..rows {
        let r = &d[i * k..(i + 1) * k];
        expected.push(
            (0..k)
                .min_by(|&a, &b| r[a].partial_cmp(&r[b]).unwrap())
                .unwrap() as u32,
        );
        expected.push(
            (0..k)
                .max_by(|&a, &b| r[a].partial_cmp(&r[b]).unwrap())
                .unwrap() as u32,
        );
        expected.push((0..k).max_by(|a, b| r[*a].total_cmp(&r[*b])).unwrap() as u32);
        expected.push((0..k).min_by_key(|&j| (r[j] * 4.0) as i32).unwrap() as u32);
        expected.push(
            (0..k)
                .rev()
                .max_by_key(|&j| (r[j] * 4.0) as i32)
                .unwrap_or(99) as u32,
        );
        expected_values.push(r.iter().copied().max_by(f32::total_cmp).unwrap());
        expected_values.push(*r.iter().min_by(|a, b| a.total_cmp(b)).unwrap());
        expected_values.push(
            r.iter()
                .copied()
                .min_by(|a, b| b.partial_cmp(a).unwrap())
                .unwrap(),
        );
    }
    // Ties decide: the first minimum and the last maximum differ from the other ends.
    assert_ne!(
        expected.chunks(5).map(|c| c[0]).collect::<Vec<_>>(),
        (0..rows)
            .map(|i| {
                let r = &d[i * k..(i + 1) * k];
                (0..k)
                    .rev()
                    .min_by(|&a, &b| r[a].partial_cmp(&r[b]).unwrap())
                    .unwrap() as u32
            })
            .collect::<Vec<_>>()
    );
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dd = DeviceBuffer::from_host(&stream, &d).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, rows * 5).unwrap();
        let mut values = DeviceBuffer::<f32>::zeroed(&stream, rows * 3).unwrap();
        let config = LaunchConfig::for_len(rows, 64);
        extremes_by::launch(&stream, config, &dd, k, &mut out, &mut values).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bits(values.to_host(&stream).unwrap()),
            bits(expected_values.clone()),
            "{}",
            gpu.name()
        );
    }
}

#[test]
fn partial_cmp_of_a_nan_panics_as_rust_does() {
    let k = 4;
    let mut d = tied_rows(1, k);
    d[2] = f32::NAN;
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dd = DeviceBuffer::from_host(&stream, &d).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, 5).unwrap();
        let mut values = DeviceBuffer::<f32>::zeroed(&stream, 3).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1));
        extremes_by::launch(&stream, config, &dd, k, &mut out, &mut values).unwrap();
        let err = stream
            .synchronize()
            .expect_err("a NaN has no partial order");
        let message = common::panic_message(&err);
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

#[test]
fn loops_bounded_by_module_constants_match_rust() {
    let x: Vec<f32> = (0..500).map(|i| ((i * 37) % 101) as f32 * 0.02).collect();
    let (mut out, mut counts) = (vec![0.0f32; x.len()], vec![0u32; x.len()]);
    for i in 0..=x.len() - TAPS {
        let mut acc = 0.0f32;
        for _ in 0..STEPS {
            acc = acc * 0.5 + x[i];
        }
        let mut it = 0;
        while it < STEPS && acc > 0.05 * it as f32 {
            it += 1;
        }
        let window: f32 = x[i..i + TAPS].iter().sum();
        out[i] = acc + window + (STEPS - it - 40) as f32;
        counts[i] = (0..ROUNDS).map(|k| k * k).sum::<u32>() + it as u32;
    }
    // Signed: the `i32` difference goes below zero, and the while loop stops at different trips.
    assert!(out.iter().any(|&v| v < 0.0));
    assert!(counts.iter().any(|&c| c != counts[0]));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut dout = DeviceBuffer::<f32>::zeroed(&stream, x.len()).unwrap();
        let mut dcounts = DeviceBuffer::<u32>::zeroed(&stream, x.len()).unwrap();
        let config = LaunchConfig::for_len(x.len(), 64);
        constant_bounds::launch(&stream, config, &dx, &mut dout, &mut dcounts).unwrap();
        common::close(&dout.to_host(&stream).unwrap(), &out, 1e-5);
        assert_eq!(dcounts.to_host(&stream).unwrap(), counts, "{}", gpu.name());
    }
}

#[test]
fn chunks_and_windows_walk_as_in_rust() {
    let rows = 40;
    let x: Vec<f32> = (0..rows * ROW)
        .map(|n| ((n * 29) % 53) as f32 * 0.125 - 3.0)
        .collect();
    for k in [7, 1, 1000] {
        let (mut out, mut pairs) = (Vec::new(), Vec::new());
        for row in x.chunks_exact(ROW) {
            out.push(row.chunks_exact(4).map(|c| c[0] * c[3]).sum::<f32>());
            let mut ragged = 0.0;
            for (j, c) in row.chunks(8).enumerate() {
                ragged += j as f32 * c.len() as f32 + c.iter().sum::<f32>();
            }
            out.push(ragged);
            let widest = row.windows(3).map(|w| w[0] + w[1] * w[2]);
            out.push(widest.fold(f32::MIN, f32::max));
            out.push(x.chunks(k).count() as f32);
            out.push(x.chunks(k).last().unwrap().len() as f32);
            pairs.extend(row[..3].iter().flat_map(|&v| [v, v * 2.0]));
        }
        // The last of `chunks(7)` is the remainder, 920 % 7.
        assert_eq!(out[4], if k == 7 { 3.0 } else { k.min(x.len()) as f32 });
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut dout = DeviceBuffer::<f32>::zeroed(&stream, rows * 5).unwrap();
            let mut dpairs = DeviceBuffer::<f32>::zeroed(&stream, rows * 6).unwrap();
            let config = LaunchConfig::for_len(rows, 32);
            chunk_walks::launch(&stream, config, &dx, k, &mut dout, &mut dpairs).unwrap();
            common::close(&dout.to_host(&stream).unwrap(), &out, 1e-5);
            assert_eq!(dpairs.to_host(&stream).unwrap(), pairs, "{}", gpu.name());
        }
    }
}

#[test]
fn a_chunk_size_of_zero_panics_as_rust_does() {
    let x = vec![1.0f32; ROW];
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 5).unwrap();
        let mut pairs = DeviceBuffer::<f32>::zeroed(&stream, 6).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(1));
        chunk_walks::launch(&stream, config, &dx, 0, &mut out, &mut pairs).unwrap();
        let err = stream.synchronize().expect_err("chunks(0)");
        let message = common::panic_message(&err);
        assert_eq!(message, "chunk size must be non-zero");
    }
}

/// `==` and `!=` of arrays and tuples, as Rust compares them element by element.
#[kernel]
fn compare_groups(x: &[u32], out: &mut [u32]) {
    let i = global_idx().x;
    if 4 * i + 3 < x.len() {
        let a = [x[4 * i], x[4 * i + 1]];
        let b = [x[4 * i + 2], x[4 * i + 3]];
        let grid = [[x[4 * i], 0], [x[4 * i + 1], 1]];
        let pair = (x[4 * i], x[4 * i + 2] % 2 == 0);
        let mut flags = 0u32;
        if a == b {
            flags |= 1;
        }
        if a != [1, 2] {
            flags |= 2;
        }
        if grid == [[1, 0], [2, 1]] {
            flags |= 4;
        }
        if pair == (1, true) {
            flags |= 8;
        }
        if pair != (x[4 * i + 1], false) {
            flags |= 16;
        }
        out[i] = flags;
    }
}

#[test]
fn arrays_and_tuples_compare_as_in_rust() {
    assert_compiles_with_nvrtc(&[(&compare_groups::KERNEL, &[])]);
    let groups = 64;
    let x: Vec<u32> = (0..4 * groups as u32)
        .map(|k| {
            let mixed = u64::from(k)
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((mixed >> 33) % 3) as u32
        })
        .collect();
    let expected: Vec<u32> = x
        .chunks(4)
        .map(|g| {
            let (a, b) = ([g[0], g[1]], [g[2], g[3]]);
            let grid = [[g[0], 0], [g[1], 1]];
            let pair = (g[0], g[2] % 2 == 0);
            u32::from(a == b)
                | u32::from(a != [1, 2]) << 1
                | u32::from(grid == [[1, 0], [2, 1]]) << 2
                | u32::from(pair == (1, true)) << 3
                | u32::from(pair != (g[1], false)) << 4
        })
        .collect();
    // Every flag is set somewhere and clear somewhere, so each comparison is exercised.
    for bit in 0..5 {
        assert!(
            expected.iter().any(|f| f & (1 << bit) != 0),
            "bit {bit} never set"
        );
        assert!(
            expected.iter().any(|f| f & (1 << bit) == 0),
            "bit {bit} always set"
        );
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, groups).unwrap();
        compare_groups::launch(&stream, LaunchConfig::for_len(groups, 32), &dx, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// A search's result kept as Rust's `Option`: bound with `let`, taken apart by `if let` and
/// `match`, or by `map_or`, from `position`, `max` and `min` (by reference) and `min_by_key`
/// over a range.
#[kernel]
fn searches(x: &[u32], key: u32, out: &mut [u32]) {
    let row = global_idx().x;
    if 8 * row + 7 < x.len() {
        let part = &x[8 * row..8 * row + 8];
        let first = part.iter().position(|&v| v == key);
        let mut code = first.map_or(100, |i| i as u32);
        if let Some(i) = part.iter().position(|v| *v > key) {
            code += 10 * i as u32;
        } else {
            code += 1000;
        }
        match part.iter().max() {
            Some(m) => code += 10_000 * *m,
            None => code += 7,
        }
        if let Some(&m) = part.iter().min() {
            code += 1_000_000 * m;
        }
        let nearest = (0..8).min_by_key(|&i| part[i].abs_diff(key));
        code += 100_000 * nearest.unwrap_or(9) as u32;
        if first.is_none() {
            code += 50_000_000;
        }
        out[row] = code;
    }
}

#[test]
fn searches_keep_options_as_in_rust() {
    assert_compiles_with_nvrtc(&[(&searches::KERNEL, &[])]);
    let rows = 96;
    let x: Vec<u32> = (0..8 * rows as u64)
        .map(|k| ((k.wrapping_mul(6_364_136_223_846_793_005) >> 35) % 6) as u32)
        .collect();
    let key = 4;
    let expected: Vec<u32> = x
        .chunks(8)
        .map(|part| {
            let first = part.iter().position(|&v| v == key);
            let mut code = first.map_or(100, |i| i as u32);
            code += match part.iter().position(|v| *v > key) {
                Some(i) => 10 * i as u32,
                None => 1000,
            };
            code += 10_000 * *part.iter().max().unwrap();
            code += 1_000_000 * *part.iter().min().unwrap();
            let nearest = (0..8).min_by_key(|&i| part[i].abs_diff(key));
            code += 100_000 * nearest.unwrap_or(9) as u32;
            if first.is_none() {
                code += 50_000_000;
            }
            code
        })
        .collect();
    // Both sides of each search occur among the rows.
    assert!(x.chunks(8).any(|p| p.contains(&key)) && x.chunks(8).any(|p| !p.contains(&key)));
    assert!(x.chunks(8).any(|p| p.iter().all(|&v| v <= key)));
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&stream, rows).unwrap();
        searches::launch(&stream, LaunchConfig::for_len(rows, 32), &dx, key, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}
