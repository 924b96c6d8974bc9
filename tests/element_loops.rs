//! `for` loops over slices and arrays as Rust writes them (`for v in x.iter()`, `for &v in
//! x.iter()`, `for v in x`, `.enumerate()`, `*v`), which run as loops over indices, on every
//! backend at hand, against the same loops on the host.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// A 3-tap filter from a local array, then sums over a slice parameter in every form.
#[kernel]
fn element_loops(weights: &[f32], x: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i < out.len() {
        let taps = [0.25f32, 0.5, 0.25];
        let mut s = 0.0f32;
        for (k, t) in taps.iter().enumerate() {
            s += *t * x[(i + k) % x.len()];
        }
        for &w in weights.iter() {
            s += w * x[i];
        }
        for w in weights {
            s += *w * 0.5;
        }
        for (j, _) in weights.iter().enumerate() {
            s += j as f32;
        }
        let mut largest = 0.0f32;
        for (j, &w) in weights.iter().enumerate() {
            if j % 2 == 0 {
                continue;
            }
            largest = largest.max(w);
        }
        out[i] = s + largest;
    }
}

fn element_loops_host(weights: &[f32], x: &[f32], i: usize) -> f32 {
    let taps = [0.25f32, 0.5, 0.25];
    let mut s = 0.0f32;
    for (k, t) in taps.iter().enumerate() {
        s += *t * x[(i + k) % x.len()];
    }
    for &w in weights.iter() {
        s += w * x[i];
    }
    for w in weights {
        s += *w * 0.5;
    }
    for (j, _) in weights.iter().enumerate() {
        s += j as f32;
    }
    let mut largest = 0.0f32;
    for (j, &w) in weights.iter().enumerate() {
        if j % 2 == 0 {
            continue;
        }
        largest = largest.max(w);
    }
    s + largest
}

#[test]
fn loops_over_slices_and_arrays_match_rust() {
    let weights = random_f32(7, 81);
    let x = random_f32(100, 83);
    let expected: Vec<f32> = (0..x.len())
        .map(|i| element_loops_host(&weights, &x, i))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let w = DeviceBuffer::from_host(&stream, &weights).unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, x.len()).unwrap();
        let config = LaunchConfig::for_len(x.len(), 64);
        element_loops::launch(&stream, config, &w, &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

const TAPS: usize = 4;

/// The sum of a slice parameter of a device function.
#[device]
fn total(v: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &x in v.iter() {
        s += x;
    }
    s
}

/// Loops over shared memory, a `#[constant]` table and, in a device function, a slice.
#[kernel]
fn element_loops_in_memories(#[constant] table: &[f32; TAPS], x: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx().x as usize;
    tile[t] = x[t];
    sync_threads();
    let mut s = 0.0f32;
    for v in tile.iter() {
        s += *v;
    }
    for (i, c) in table.iter().enumerate() {
        s += *c * i as f32;
    }
    out[t] = s + total(x) * t as f32;
}

#[test]
fn loops_over_shared_memory_constant_tables_and_device_slices() {
    let x = random_f32(64, 87);
    let table = [1.0f32, -2.0, 0.5, 4.0];
    let sum: f32 = x.iter().sum();
    let weighted: f32 = table.iter().enumerate().map(|(i, c)| c * i as f32).sum();
    let expected: Vec<f32> = (0..64).map(|t| sum + weighted + sum * t as f32).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 64).unwrap();
        let config = LaunchConfig::new(Grid::x(1), Block::x(64));
        element_loops_in_memories::launch(&stream, config, &table, &dx, &mut out).unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

#[test]
fn element_loops_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&element_loops::KERNEL, &[]),
        (&element_loops_in_memories::KERNEL, &[]),
    ]);
}

/// `iter_mut` (plain and enumerated) on a local array, shared memory and a slice part,
/// `zip` (also enumerated, with `&` patterns), and loops over parts of slices.
#[kernel]
fn adapter_loops(x: &[f32], y: &[f32], out: &mut [f32], scratch: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let mut acc = [0.0f32; 4];
    for a in acc.iter_mut() {
        *a = x[i];
    }
    for (k, a) in acc.iter_mut().enumerate() {
        *a += k as f32 * y[i];
        *a *= 2.0;
    }
    let mut dot = 0.0f32;
    for (a, b) in x.iter().zip(y.iter()) {
        dot += a * b;
    }
    for (k, (&a, b)) in acc.iter().zip(&x[i..i + 4]).enumerate() {
        dot += (k as f32 + a) * *b;
    }
    let mut window = 0.0f32;
    for v in &y[i..i + 4] {
        window += *v;
    }
    for (k, v) in x[i..].iter().enumerate() {
        if k == 3 {
            break;
        }
        window -= v * 0.5;
    }
    for s in &mut scratch[i * 4..i * 4 + 4] {
        *s = window;
    }
    for (k, s) in scratch[i * 4..i * 4 + 4].iter_mut().enumerate() {
        *s += k as f32;
    }
    out[i] = acc[0] + acc[3] + dot * 0.001 + window;
}

fn adapter_loops_host(x: &[f32], y: &[f32], i: usize, scratch: &mut [f32]) -> f32 {
    let mut acc = [0.0f32; 4];
    for a in acc.iter_mut() {
        *a = x[i];
    }
    for (k, a) in acc.iter_mut().enumerate() {
        *a += k as f32 * y[i];
        *a *= 2.0;
    }
    let mut dot = 0.0f32;
    for (a, b) in x.iter().zip(y.iter()) {
        dot += a * b;
    }
    for (k, (&a, b)) in acc.iter().zip(&x[i..i + 4]).enumerate() {
        dot += (k as f32 + a) * *b;
    }
    let mut window = 0.0f32;
    for v in &y[i..i + 4] {
        window += *v;
    }
    for (k, v) in x[i..].iter().enumerate() {
        if k == 3 {
            break;
        }
        window -= v * 0.5;
    }
    for s in &mut scratch[i * 4..i * 4 + 4] {
        *s = window;
    }
    for (k, s) in scratch[i * 4..i * 4 + 4].iter_mut().enumerate() {
        *s += k as f32;
    }
    acc[0] + acc[3] + dot * 0.001 + window
}

#[test]
fn iterator_adapters_match_rust() {
    let x = random_f32(200, 91);
    let y = random_f32(150, 93);
    let n = 146;
    let mut scratch_host = vec![0.0f32; 200 * 4];
    let expected: Vec<f32> = (0..n)
        .map(|i| adapter_loops_host(&x, &y, i, &mut scratch_host))
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let dy = DeviceBuffer::from_host(&stream, &y).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut scratch = DeviceBuffer::<f32>::zeroed(&stream, 200 * 4).unwrap();
        adapter_loops::launch(
            &stream,
            LaunchConfig::for_len(n, 64),
            &dx,
            &dy,
            &mut out,
            &mut scratch,
        )
        .unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-4);
        close(
            &scratch.to_host(&stream).unwrap()[..n * 4],
            &scratch_host[..n * 4],
            1e-5,
        );
    }
}

#[test]
fn iterator_adapters_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&adapter_loops::KERNEL, &[])]);
}

/// `sum` and `product` of slices and arrays, typed by the `let` or a turbofish.
#[kernel]
fn sums_and_products(x: &[f32], counts: &[u32], out: &mut [f32], ints: &mut [u32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let weights = [0.5f32, 1.0, 2.0, 4.0];
    let total: f32 = x.iter().sum();
    let scale: f32 = weights.iter().copied().product();
    let window = x[i..i + 4].iter().sum::<f32>();
    let total = total + window;
    out[i] = total * scale;
    let count = counts.iter().sum::<u32>();
    ints[i] = counts[i..i + 2].iter().product::<u32>();
    ints[i] += count;
}

#[test]
fn sums_and_products_match_rust() {
    let x = random_f32(64, 95);
    let counts: Vec<u32> = (0..64).map(|i| i % 5 + 1).collect();
    let n = 60;
    let weights = [0.5f32, 1.0, 2.0, 4.0];
    let total: f32 = x.iter().sum();
    let scale: f32 = weights.iter().copied().product();
    let expected: Vec<f32> = (0..n)
        .map(|i| (total + x[i..i + 4].iter().sum::<f32>()) * scale)
        .collect();
    let expected_ints: Vec<u32> = (0..n)
        .map(|i| counts.iter().sum::<u32>() + counts[i..i + 2].iter().product::<u32>())
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let dc = DeviceBuffer::from_host(&stream, &counts).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        let mut ints = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
        sums_and_products::launch(
            &stream,
            LaunchConfig::for_len(n, 32),
            &dx,
            &dc,
            &mut out,
            &mut ints,
        )
        .unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
        assert_eq!(
            ints.to_host(&stream).unwrap(),
            expected_ints,
            "{}",
            gpu.name()
        );
    }
    assert_compiles_with_nvrtc(&[(&sums_and_products::KERNEL, &[])]);
}

/// `map` before `sum`, over `zip` (a dot product) and `enumerate`, and `fold`, with closures
/// and with functions named by paths (`f32::min`, `f32::abs`).
#[kernel]
fn mapped_reductions(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let dot: f32 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    let squares = a[i..i + 3].iter().map(|v| v * v).sum::<f32>();
    let weighted: f32 = b.iter().enumerate().map(|(k, &v)| k as f32 * v).sum();
    let largest = a.iter().fold(f32::MIN, |m, &v| m.max(v));
    let count = b.iter().fold(0u32, |c, v| if *v > 0.0 { c + 1 } else { c });
    let smallest = b.iter().copied().fold(f32::MAX, f32::min);
    let norm1: f32 = a.iter().copied().map(f32::abs).sum();
    out[i] = dot + squares + weighted * 0.01 + largest + count as f32 + smallest + norm1;
}

#[test]
fn mapped_reductions_match_rust() {
    let a = random_f32(40, 97);
    let b = random_f32(40, 99);
    let n = 30;
    let dot: f32 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    let weighted: f32 = b.iter().enumerate().map(|(k, &v)| k as f32 * v).sum();
    let largest = a.iter().fold(f32::MIN, |m, &v| m.max(v));
    let count = b.iter().fold(0u32, |c, v| if *v > 0.0 { c + 1 } else { c });
    let smallest = b.iter().copied().fold(f32::MAX, f32::min);
    let norm1: f32 = a.iter().copied().map(f32::abs).sum();
    let expected: Vec<f32> = (0..n)
        .map(|i| {
            let squares = a[i..i + 3].iter().map(|v| v * v).sum::<f32>();
            dot + squares + weighted * 0.01 + largest + count as f32 + smallest + norm1
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let da = DeviceBuffer::from_host(&stream, &a).unwrap();
        let db = DeviceBuffer::from_host(&stream, &b).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        mapped_reductions::launch(&stream, LaunchConfig::for_len(n, 32), &da, &db, &mut out)
            .unwrap();
        close(&out.to_host(&stream).unwrap(), &expected, 1e-5);
    }
    assert_compiles_with_nvrtc(&[(&mapped_reductions::KERNEL, &[])]);
}
