//! Iterators consumed inside larger expressions (`x.iter().sum::<f32>() / n as f32`, `acc +=
//! a.iter().zip(b).map(..).sum::<f32>()`, `.sum::<f32>().sqrt()`, in conditions and in one arm
//! of an `if`), a device function's `x.iter().sum()` typed by its return type and an
//! assignment's typed by the element it writes (`out[r] = row.iter().sum();`), integer
//! `.max()` / `.min()` unwrapped, ranges consumed (`(0..k).map(|i| ..).sum()`), `filter`,
//! `count`, `any`, `all` and `position(..).unwrap_or(..)`, and `match` on a tuple, on every
//! backend at hand, against the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// The spread of `row` around `mean`, its sum typed by the function's return type.
#[device]
fn spread(row: &[f32], mean: f32) -> f32 {
    row.iter().map(|v| (v - mean) * (v - mean)).sum()
}

/// A row's statistics, each consumed iterator part of a larger expression.
#[kernel]
fn row_stats(x: &[f32], w: &[f32], cols: usize, out: &mut [f32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r >= out.len() {
        return;
    }
    let row = &x[r * cols..(r + 1) * cols];
    let mean = row.iter().sum::<f32>() / cols as f32;
    let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
    let mut acc = mean;
    acc += row.iter().zip(w).map(|(p, q)| p * q).sum::<f32>();
    let range =
        row.iter().fold(f32::MIN, |m, &v| m.max(v)) - row.iter().copied().fold(f32::MAX, f32::min);
    let sign = if row.iter().sum::<f32>() > 0.0 {
        1.0
    } else if row.iter().map(|v| v.abs()).sum::<f32>() > 1.5 {
        -1.0
    } else {
        0.0
    };
    // Computed only when taken: `row[3..]` is out of range for shorter rows.
    let tail = if cols > 3 {
        row[3..].iter().sum::<f32>() * 0.5
    } else {
        0.0
    };
    out[r] = acc + norm + range + sign + tail + spread(row, mean);
}

fn row_stats_host(row: &[f32], w: &[f32]) -> f32 {
    let cols = row.len();
    let mean = row.iter().sum::<f32>() / cols as f32;
    let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
    let mut acc = mean;
    acc += row.iter().zip(w).map(|(p, q)| p * q).sum::<f32>();
    let range =
        row.iter().fold(f32::MIN, |m, &v| m.max(v)) - row.iter().copied().fold(f32::MAX, f32::min);
    let sign = if row.iter().sum::<f32>() > 0.0 {
        1.0
    } else if row.iter().map(|v| v.abs()).sum::<f32>() > 1.5 {
        -1.0
    } else {
        0.0
    };
    let tail = if cols > 3 {
        row[3..].iter().sum::<f32>() * 0.5
    } else {
        0.0
    };
    let spread: f32 = row.iter().map(|v| (v - mean) * (v - mean)).sum();
    acc + norm + range + sign + tail + spread
}

#[test]
fn consumed_iterators_in_expressions_match_rust() {
    for cols in [2usize, 3, 7] {
        let rows = 100;
        let x = random_f32(rows * cols, cols as u64);
        let w = random_f32(cols, 99);
        let expected: Vec<f32> = x.chunks(cols).map(|row| row_stats_host(row, &w)).collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let dw = DeviceBuffer::from_host(&stream, &w).unwrap();
            let mut out = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
            row_stats::launch(
                &stream,
                LaunchConfig::for_len(rows, 64),
                &dx,
                &dw,
                cols,
                &mut out,
            )
            .unwrap();
            close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        }
    }
}

/// Integer extremes of a row (`.max().unwrap()`, `.min().unwrap_or(v)`, after `.copied()` or
/// `.map(..)`, through `*`, over parts that may be empty) and ranges consumed by `sum`, `fold`
/// and `max`, with `step_by` and `rev`.
#[kernel]
fn row_extremes(x: &[i32], cols: usize, out: &mut [i32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r >= out.len() {
        return;
    }
    let row = &x[r * cols..(r + 1) * cols];
    let hi = *row.iter().max().unwrap();
    let lo = row.iter().copied().min().unwrap_or(0);
    let spread = row.iter().map(|&v| v.abs()).max().unwrap() - lo;
    let front = row[..cols / 2].iter().max().copied().unwrap_or(-1);
    let back = *row[1..].iter().min().unwrap_or(&i32::MAX);
    let weighted: i32 = (0..cols).map(|k| row[k] * k as i32).sum();
    let mixed = (1..=cols as i32).fold(0, |acc, k| acc * 3 % 1000 + k);
    let evens: i32 = (0..cols).step_by(2).map(|k| row[k]).sum();
    let late = (0..cols)
        .rev()
        .map(|k| row[k] - k as i32)
        .max()
        .unwrap_or_default();
    out[r] = (hi * 3 + lo + spread + front + weighted + mixed + evens + late)
        .wrapping_add(back)
        .wrapping_add(1 + row.iter().copied().min().unwrap() / 2);
}

fn row_extremes_host(row: &[i32]) -> i32 {
    let cols = row.len();
    let hi = *row.iter().max().unwrap();
    let lo = row.iter().copied().min().unwrap_or(0);
    let spread = row.iter().map(|&v| v.abs()).max().unwrap() - lo;
    let front = row[..cols / 2].iter().max().copied().unwrap_or(-1);
    let back = *row[1..].iter().min().unwrap_or(&i32::MAX);
    let weighted: i32 = (0..cols).map(|k| row[k] * k as i32).sum();
    let mixed = (1..=cols as i32).fold(0, |acc, k| acc * 3 % 1000 + k);
    let evens: i32 = (0..cols).step_by(2).map(|k| row[k]).sum();
    let late = (0..cols)
        .rev()
        .map(|k| row[k] - k as i32)
        .max()
        .unwrap_or_default();
    (hi * 3 + lo + spread + front + weighted + mixed + evens + late)
        .wrapping_add(back)
        .wrapping_add(1 + row.iter().copied().min().unwrap() / 2)
}

#[test]
fn integer_extremes_and_consumed_ranges_match_rust() {
    for cols in [1usize, 2, 5, 8] {
        let rows = 70;
        let x: Vec<i32> = random_f32(rows * cols, 7 + cols as u64)
            .iter()
            .map(|v| (v * 1000.0) as i32)
            .collect();
        let expected: Vec<i32> = x.chunks(cols).map(row_extremes_host).collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::<i32>::zeroed(&stream, rows).unwrap();
            let config = LaunchConfig::for_len(rows, 32);
            row_extremes::launch(&stream, config, &dx, cols, &mut out).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        }
    }
}

#[test]
fn max_of_nothing_unwrapped_panics_as_rust_does() {
    for gpu in backends() {
        let stream = gpu.new_stream().unwrap();
        let dx = DeviceBuffer::from_host(&stream, &[1i32, 2]).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, 1).unwrap();
        row_extremes::launch(&stream, LaunchConfig::for_len(1, 32), &dx, 0, &mut out).unwrap();
        let err = stream
            .synchronize()
            .expect_err("an empty row has no maximum");
        let message = common::panic_message(&err);
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

/// Each row's sum stored straight into the output, its type the output's elements'.
#[kernel]
fn row_sums(x: &[f32], cols: usize, out: &mut [f32], counts: &mut [u32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r < out.len() {
        out[r] = x[r * cols..(r + 1) * cols].iter().sum();
        counts[r] = x[r * cols..(r + 1) * cols]
            .iter()
            .map(|&v| (v > 0.0) as u32)
            .sum();
    }
}

#[test]
fn sums_typed_by_the_place_match_rust() {
    let (rows, cols) = (50, 6);
    let x = random_f32(rows * cols, 4);
    let sums: Vec<f32> = x.chunks(cols).map(|row| row.iter().sum()).collect();
    let counts: Vec<u32> = x
        .chunks(cols)
        .map(|row| row.iter().map(|&v| (v > 0.0) as u32).sum())
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let mut dc = DeviceBuffer::<u32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        row_sums::launch(&stream, config, &dx, cols, &mut out, &mut dc).unwrap();
        close(&out.to_host(&stream).unwrap(), &sums, 1e-6);
        assert_eq!(dc.to_host(&stream).unwrap(), counts, "{}", gpu.name());
    }
}

/// Counts and tests of a row's elements, through `filter` before and after a `map`.
#[kernel]
fn row_tests(x: &[i32], cols: usize, limit: i32, out: &mut [i32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r >= out.len() {
        return;
    }
    let row = &x[r * cols..(r + 1) * cols];
    let positive = row.iter().filter(|&&v| v > 0).count();
    let small = row.iter().copied().filter(|v| v.abs() < limit).count() as i32;
    let any_big = row.iter().any(|&v| v > limit);
    let all_even = row.iter().all(|v| *v % 2 == 0);
    let even_triples: i32 = row.iter().filter(|v| **v % 2 == 0).map(|v| v * 3).sum();
    let tens: i32 = row.iter().map(|&v| v / 10).filter(|&q| q > 2).sum();
    let thirds = (0..cols).filter(|k| k % 3 == 0).count();
    let mut flags = 0;
    if row.iter().any(|&v| v == limit) || x.iter().all(|&v| v != 0) {
        flags += 1;
    }
    out[r] = positive as i32 * 1000
        + small * 100
        + any_big as i32 * 10
        + all_even as i32
        + even_triples
        + tens * 7
        + thirds as i32 * 11
        + flags;
}

fn row_tests_host(row: &[i32], x: &[i32], limit: i32) -> i32 {
    let cols = row.len();
    let positive = row.iter().filter(|&&v| v > 0).count();
    let small = row.iter().copied().filter(|v| v.abs() < limit).count() as i32;
    let any_big = row.iter().any(|&v| v > limit);
    let all_even = row.iter().all(|v| *v % 2 == 0);
    let even_triples: i32 = row.iter().filter(|v| **v % 2 == 0).map(|v| v * 3).sum();
    let tens: i32 = row.iter().map(|&v| v / 10).filter(|&q| q > 2).sum();
    let thirds = (0..cols).filter(|k| k % 3 == 0).count();
    let mut flags = 0;
    if row.contains(&limit) || x.iter().all(|&v| v != 0) {
        flags += 1;
    }
    positive as i32 * 1000
        + small * 100
        + any_big as i32 * 10
        + all_even as i32
        + even_triples
        + tens * 7
        + thirds as i32 * 11
        + flags
}

#[test]
fn filters_counts_and_tests_match_rust() {
    for (cols, limit) in [(1usize, 30), (4, 20), (9, 45)] {
        let rows = 60;
        let mut x: Vec<i32> = random_f32(rows * cols, 3 + cols as u64)
            .iter()
            .map(|v| (v * 60.0) as i32)
            .collect();
        // Rows of even numbers only, which `all` passes.
        for v in x[..cols * 3].iter_mut() {
            *v = *v / 2 * 2;
        }
        let expected: Vec<i32> = x
            .chunks(cols)
            .map(|row| row_tests_host(row, &x, limit))
            .collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::<i32>::zeroed(&stream, rows).unwrap();
            let config = LaunchConfig::for_len(rows, 32);
            row_tests::launch(&stream, config, &dx, cols, limit, &mut out).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
        }
    }
}

/// Consumed iterators and values computed by statements where Rust evaluates them: on the
/// right of `&&` / `||` (only when the left side lets it run: `row[3..]` is out of range for
/// short rows), in one arm of an `if` inside a larger expression, in a `while` condition
/// (evaluated before each iteration), in a `for` loop's bound and in an expression statement.
#[kernel]
fn lifted_forms(x: &[i32], cols: usize, out: &mut [i32], total: &mut [i32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r >= out.len() {
        return;
    }
    let row = &x[r * cols..(r + 1) * cols];
    let long_and_positive = cols > 3 && row[3..].iter().sum::<i32>() > 0;
    let short_or_odd = cols <= 3 || row[3..].iter().any(|&v| v % 2 != 0);
    let mut v = 2 * if row[0] > 0 {
        let t = row[0] * 3;
        t - 1
    } else {
        row.iter().map(|&e| e.abs()).max().unwrap()
    };
    let mut halvings = 0;
    while row.iter().any(|&e| e.abs() > v) && halvings < 20 {
        v += 7;
        halvings += 1;
    }
    let mut walked = 0;
    for k in 0..row.iter().filter(|&&e| e > 0).count() {
        walked += k as i32;
    }
    total.atomic_add(0, row.iter().sum::<i32>());
    out[r] = long_and_positive as i32 + 2 * short_or_odd as i32 + 4 * v + 1000 * halvings + walked;
}

fn lifted_forms_host(row: &[i32]) -> i32 {
    let cols = row.len();
    let long_and_positive = cols > 3 && row[3..].iter().sum::<i32>() > 0;
    let short_or_odd = cols <= 3 || row[3..].iter().any(|&v| v % 2 != 0);
    let mut v = 2 * if row[0] > 0 {
        let t = row[0] * 3;
        t - 1
    } else {
        row.iter().map(|&e| e.abs()).max().unwrap()
    };
    let mut halvings = 0;
    while row.iter().any(|&e| e.abs() > v) && halvings < 20 {
        v += 7;
        halvings += 1;
    }
    let mut walked = 0;
    for k in 0..row.iter().filter(|&&e| e > 0).count() {
        walked += k as i32;
    }
    long_and_positive as i32 + 2 * short_or_odd as i32 + 4 * v + 1000 * halvings + walked
}

#[test]
fn lifted_forms_match_rust() {
    for cols in [2usize, 3, 6] {
        let rows = 50;
        let x: Vec<i32> = random_f32(rows * cols, 30 + cols as u64)
            .iter()
            .map(|v| (v * 90.0) as i32)
            .collect();
        let expected: Vec<i32> = x.chunks(cols).map(lifted_forms_host).collect();
        for gpu in backends() {
            let stream = gpu.default_stream();
            let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut out = DeviceBuffer::<i32>::zeroed(&stream, rows).unwrap();
            let mut total = DeviceBuffer::<i32>::zeroed(&stream, 1).unwrap();
            let config = LaunchConfig::for_len(rows, 32);
            lifted_forms::launch(&stream, config, &dx, cols, &mut out, &mut total).unwrap();
            assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
            assert_eq!(total.to_host(&stream).unwrap(), vec![x.iter().sum::<i32>()]);
        }
    }
}

/// The index of a key in a row (`position`, unwrapped three ways), then a class of the row
/// by a `match` on a tuple.
#[device]
fn find(row: &[i32], key: i32) -> usize {
    row.iter().position(|&v| v == key).unwrap_or(row.len())
}

#[kernel]
fn positions(x: &[i32], cols: usize, key: i32, out: &mut [i32]) {
    let r = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if r >= out.len() {
        return;
    }
    let row = &x[r * cols..(r + 1) * cols];
    let at = find(row, key);
    let first_even = row
        .iter()
        .filter(|&&v| v != key)
        .position(|v| v % 2 == 0)
        .unwrap_or_default();
    let first_big = (0..cols).position(|k| row[k] > 40).unwrap_or(99);
    let class = match (at < cols, first_even, row[0].signum()) {
        (true, 0, _) => 1,
        (true, e, s) if e > 2 => 10 + s,
        (false, 0 | 1, -1) => 20,
        (found, _, s) => 30 + found as i32 * 5 + s,
    };
    out[r] = at as i32 * 1000 + first_even as i32 * 100 + first_big as i32 + class * 10_000;
}

fn positions_host(row: &[i32], key: i32) -> i32 {
    let cols = row.len();
    let at = row.iter().position(|&v| v == key).unwrap_or(row.len());
    let first_even = row
        .iter()
        .filter(|&&v| v != key)
        .position(|v| v % 2 == 0)
        .unwrap_or_default();
    let first_big = (0..cols).position(|k| row[k] > 40).unwrap_or(99);
    let class = match (at < cols, first_even, row[0].signum()) {
        (true, 0, _) => 1,
        (true, e, s) if e > 2 => 10 + s,
        (false, 0 | 1, -1) => 20,
        (found, _, s) => 30 + found as i32 * 5 + s,
    };
    at as i32 * 1000 + first_even as i32 * 100 + first_big as i32 + class * 10_000
}

#[test]
fn positions_and_tuple_matches_match_rust() {
    let (rows, cols, key) = (80, 7, 3);
    let x: Vec<i32> = random_f32(rows * cols, 77)
        .iter()
        .map(|v| (v * 50.0) as i32 % 9 * 6 + 3 * (v > &0.0) as i32)
        .collect();
    let expected: Vec<i32> = x.chunks(cols).map(|row| positions_host(row, key)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows, 32);
        positions::launch(&stream, config, &dx, cols, key, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn iterator_values_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&row_stats::KERNEL, &[]),
        (&row_extremes::KERNEL, &[]),
        (&row_sums::KERNEL, &[]),
        (&row_tests::KERNEL, &[]),
        (&lifted_forms::KERNEL, &[]),
        (&positions::KERNEL, &[]),
    ]);
}
