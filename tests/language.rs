//! The textbook kernels, written with `#[kernel]`: tiled matrix multiply in shared memory, a
//! warp-shuffle reduction, a histogram with atomics, Monte Carlo π with Philox, and the other
//! constructs of the language, each compared with the CPU.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu_dsl::prelude::*;
use gpu_dsl::runtime::test_device;

#[kernel]
fn matmul_tiled(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    const TILE: usize = 16;
    let a_tile = shared_array::<f32, { TILE * TILE }>();
    let b_tile = shared_array::<f32, { TILE * TILE }>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = block_idx().y as usize * TILE + ty;
    let col = block_idx().x as usize * TILE + tx;
    let mut acc = 0.0f32;
    for t in (0..k).step_by(TILE) {
        a_tile[ty * TILE + tx] = if row < m && t + tx < k {
            a[row * k + t + tx]
        } else {
            0.0
        };
        b_tile[ty * TILE + tx] = if col < n && t + ty < k {
            b[(t + ty) * n + col]
        } else {
            0.0
        };
        sync_threads();
        for i in 0..TILE {
            acc += a_tile[ty * TILE + i] * b_tile[i * TILE + tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

#[test]
fn tiled_matrix_multiply_in_shared_memory() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for (m, n, k) in [(1, 1, 1), (17, 33, 65), (128, 96, 200)] {
        let a_host = random_f32(m * k, 1);
        let b_host = random_f32(k * n, 2);
        let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
        let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
        let mut c = DeviceBuffer::zeroed(&stream, m * n).unwrap();
        let grid = Grid::xy(n.div_ceil(16) as u32, m.div_ceil(16) as u32);
        let config = LaunchConfig::new(grid, Block::xy(16, 16));
        matmul_tiled::launch(&stream, config, m, n, k, &a, &b, &mut c).unwrap();
        let got = c.to_host(&stream).unwrap();
        for i in 0..m {
            for j in 0..n {
                let expected: f64 = (0..k)
                    .map(|p| a_host[i * k + p] as f64 * b_host[p * n + j] as f64)
                    .sum();
                let g = got[i * n + j] as f64;
                assert!(
                    (g - expected).abs() < 1e-4 * k as f64,
                    "({m},{n},{k}) [{i},{j}]: {g} vs {expected}"
                );
            }
        }
    }
}

#[device]
fn warp_sum(v: f32) -> f32 {
    let mut total = v;
    let mut offset = 16u32;
    while offset > 0 {
        total += shfl_down_sync(0xffff_ffff, total, offset);
        offset /= 2;
    }
    total
}

/// One pass: each warp reduces with shuffles, lane 0 of each warp adds into shared memory,
/// thread 0 of each block adds the block's sum to the total.
#[kernel]
fn sum_reduce(x: &[f32], total: &mut [f32]) {
    let block_sum = shared_array::<f32, 1>();
    if thread_idx().x == 0 {
        block_sum[0] = 0.0;
    }
    sync_threads();
    let mut v = 0.0f32;
    for i in (global_idx().x..x.len()).step_by(grid_size().x) {
        v += x[i];
    }
    let warp_total = warp_sum(v);
    if lane_id() == 0 {
        block_sum.atomic_add(0, warp_total);
    }
    sync_threads();
    if thread_idx().x == 0 {
        total.atomic_add(0, block_sum[0]);
    }
}

#[test]
fn warp_shuffle_reduction() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    for n in [1usize, 31, 1000, 1 << 20] {
        let host = random_f32(n, 3);
        let x = DeviceBuffer::from_host(&stream, &host).unwrap();
        let mut total = DeviceBuffer::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(64), Block::x(256));
        sum_reduce::launch(&stream, config, &x, &mut total).unwrap();
        let got = total.to_host(&stream).unwrap()[0] as f64;
        let expected: f64 = host.iter().map(|v| *v as f64).sum();
        assert!(
            (got - expected).abs() < 1e-3 * (n as f64).sqrt().max(1.0),
            "n={n}: {got} vs {expected}"
        );
    }
}

/// Per-block histograms in shared memory, merged with global atomics.
#[kernel]
fn histogram(values: &[u32], bins: &mut [u32]) {
    const BINS: usize = 64;
    let local = shared_array::<u32, BINS>();
    let t = thread_idx().x as usize;
    for b in (t..BINS).step_by(block_dim().x as usize) {
        local[b] = 0;
    }
    sync_threads();
    for i in (global_idx().x..values.len()).step_by(grid_size().x) {
        local.atomic_add(values[i] as usize % BINS, 1);
    }
    sync_threads();
    for b in (t..BINS).step_by(block_dim().x as usize) {
        bins.atomic_add(b, local[b]);
    }
}

#[test]
fn histogram_with_shared_and_global_atomics() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1_000_003;
    let host: Vec<u32> = random_f32(n, 4)
        .iter()
        .map(|v| (v.abs() * 1e6) as u32)
        .collect();
    let values = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut bins = DeviceBuffer::zeroed(&stream, 64).unwrap();
    histogram::launch(
        &stream,
        LaunchConfig::new(Grid::x(100), Block::x(128)),
        &values,
        &mut bins,
    )
    .unwrap();
    let got = bins.to_host(&stream).unwrap();
    let mut expected = vec![0u32; 64];
    for v in &host {
        expected[*v as usize % 64] += 1;
    }
    assert_eq!(got, expected);
}

/// Each thread draws `per_thread` points from its own Philox stream; hits are counted per warp
/// with a ballot and summed with one atomic per warp.
#[kernel]
fn monte_carlo_pi(seed: u32, per_thread: u32, hits: &mut [u64]) {
    let id = global_idx().x as u32;
    let mut count = 0u32;
    let mut i = 0u32;
    while i < per_thread {
        let r = philox4x32_10(i, id, 0, 0, seed, 0x5eed);
        let x = uniform_f32(r[0]);
        let y = uniform_f32(r[1]);
        if x * x + y * y < 1.0 {
            count += 1;
        }
        let x2 = uniform_f32(r[2]);
        let y2 = uniform_f32(r[3]);
        if x2 * x2 + y2 * y2 < 1.0 {
            count += 1;
        }
        i += 1;
    }
    let mut total = count as u64;
    let mut offset = 16u32;
    while offset > 0 {
        total += shfl_xor_sync(0xffff_ffff, total, offset);
        offset >>= 1;
    }
    if lane_id() == 0 {
        hits.atomic_add(0, total);
    }
}

#[test]
fn monte_carlo_pi_with_philox() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    // On the GPU 2^28 samples (2^20 threads, 128 draws of 2 points each), error < 1e-3; the CPU
    // backend runs 2^22, whose standard error is about 8e-4.
    let on_gpu = gpu.backend() == gpu_dsl::runtime::Backend::Cuda;
    let threads = if on_gpu { 1usize << 20 } else { 1 << 16 };
    let per_thread = if on_gpu { 128u32 } else { 32 };
    let tolerance = if on_gpu { 1e-3 } else { 4e-3 };
    let mut hits = DeviceBuffer::zeroed(&stream, 1).unwrap();
    monte_carlo_pi::launch(
        &stream,
        LaunchConfig::for_len(threads, 256),
        2026,
        per_thread,
        &mut hits,
    )
    .unwrap();
    let samples = threads as f64 * per_thread as f64 * 2.0;
    let pi = 4.0 * hits.to_host(&stream).unwrap()[0] as f64 / samples;
    let error = (pi - std::f64::consts::PI).abs();
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "monte carlo pi: {pi} from {samples} samples on {}, error {error:.2e}",
        gpu.name()
    );
    assert!(error < tolerance, "pi estimate {pi} from {samples} samples");
}

/// Dynamic shared memory sized at launch, a block-wide tree reduction with barriers.
#[kernel]
fn block_max(x: &[i32], out: &mut [i32]) {
    let scratch = dynamic_shared::<i32>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    scratch[t] = if i < x.len() { x[i] } else { i32::MIN };
    sync_threads();
    let mut stride = scratch.len() / 2;
    while stride > 0 {
        if t < stride {
            scratch[t] = scratch[t].max(scratch[t + stride]);
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = scratch[0];
    }
}

#[test]
fn dynamic_shared_memory_tree_reduction() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 100_000;
    let host: Vec<i32> = random_f32(n, 5).iter().map(|v| (v * 1e9) as i32).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let threads = 512u32;
    let blocks = n.div_ceil(threads as usize);
    let mut out = DeviceBuffer::zeroed(&stream, blocks).unwrap();
    let config = LaunchConfig::for_len(n, threads).with_shared_mem(threads * 4);
    block_max::launch(&stream, config, &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for (b, chunk) in host.chunks(threads as usize).enumerate() {
        assert_eq!(got[b], *chunk.iter().max().unwrap(), "block {b}");
    }
}

/// Every atomic on global and shared memory, with the old values they return.
#[kernel]
fn atomics(ints: &mut [i64], floats: &mut [f32], bits: &mut [u32], olds: &mut [u32]) {
    let t = global_idx().x;
    if t >= olds.len() {
        return;
    }
    let v = t as i64 - 100;
    ints.atomic_add(0, v);
    ints.atomic_sub(1, v);
    ints.atomic_min(2, v);
    ints.atomic_max(3, v);
    floats.atomic_add(0, 0.5);
    floats.atomic_min(1, v as f32);
    floats.atomic_max(2, v as f32);
    bits.atomic_or(0, 1u32 << (t as u32 % 32));
    bits.atomic_and(1, !(1u32 << (t as u32 % 32)));
    bits.atomic_xor(2, 1u32 << (t as u32 % 7));
    // Exactly one thread wins the swap from 0, and everyone sees a distinct old ticket.
    if bits.atomic_compare_exchange(3, 0, t as u32 + 1) == 0 {
        bits.atomic_add(6, 1);
    }
    let ticket = bits.atomic_add(4, 1);
    olds[ticket as usize] = bits.atomic_exchange(5, t as u32);
}

#[test]
fn atomics_on_every_type() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1000usize;
    let mut ints = DeviceBuffer::from_host(&stream, &[0i64, 0, i64::MAX, i64::MIN]).unwrap();
    let mut floats = DeviceBuffer::from_host(&stream, &[0.0f32, f32::MAX, f32::MIN]).unwrap();
    let mut bits =
        DeviceBuffer::from_host(&stream, &[0u32, u32::MAX, 0, 0, 0, u32::MAX, 0]).unwrap();
    let mut olds = DeviceBuffer::zeroed(&stream, n).unwrap();
    atomics::launch(
        &stream,
        LaunchConfig::for_len(n, 128),
        &mut ints,
        &mut floats,
        &mut bits,
        &mut olds,
    )
    .unwrap();
    let vs: Vec<i64> = (0..n as i64).map(|t| t - 100).collect();
    let sum: i64 = vs.iter().sum();
    assert_eq!(
        ints.to_host(&stream).unwrap(),
        vec![sum, -sum, -100, n as i64 - 101]
    );
    assert_eq!(
        floats.to_host(&stream).unwrap(),
        vec![0.5 * n as f32, -100.0, (n - 101) as f32]
    );
    let b = bits.to_host(&stream).unwrap();
    assert_eq!(b[0], u32::MAX);
    assert_eq!(b[1], 0);
    let mut xor = 0u32;
    for t in 0..n {
        xor ^= 1 << (t % 7);
    }
    assert_eq!(b[2], xor);
    assert!(
        b[3] >= 1 && b[3] <= n as u32,
        "compare_exchange winner {}",
        b[3]
    );
    assert_eq!(b[6], 1, "exactly one compare_exchange succeeds");
    assert_eq!(b[4], n as u32);
    // The exchanged values: the initial one and every thread's id but the last, each once.
    let mut olds = olds.to_host(&stream).unwrap();
    olds.push(b[5]);
    olds.sort_unstable();
    let mut expected: Vec<u32> = (0..n as u32).collect();
    expected.push(u32::MAX);
    expected.sort_unstable();
    assert_eq!(olds, expected);
}

/// Votes and shuffles across a warp.
#[kernel]
fn warp_votes(x: &[i32], ballots: &mut [u32], flags: &mut [u32], rotated: &mut [i32]) {
    let i = global_idx().x;
    let v = x[i];
    let positive = v > 0;
    let ballot = ballot_sync(0xffff_ffff, positive);
    let all = all_sync(0xffff_ffff, positive);
    let any = any_sync(0xffff_ffff, positive);
    let lane = lane_id();
    rotated[i] =
        shfl_sync(0xffff_ffff, v, (lane + 1) % warp_size()) + shfl_up_sync(0xffff_ffff, v, 1) * 0;
    if lane == 0 {
        let warp = i / 32;
        ballots[warp] = ballot;
        flags[warp] = all as u32 * 2 + any as u32;
    }
}

#[test]
fn warp_votes_and_shuffles() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let warps = 8;
    let mut host: Vec<i32> = random_f32(32 * warps, 6)
        .iter()
        .map(|v| (v * 100.0) as i32)
        .collect();
    host[32..64].iter_mut().for_each(|v| *v = v.abs() + 1);
    host[64..96].iter_mut().for_each(|v| *v = -v.abs() - 1);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut ballots = DeviceBuffer::zeroed(&stream, warps).unwrap();
    let mut flags = DeviceBuffer::zeroed(&stream, warps).unwrap();
    let mut rotated = DeviceBuffer::zeroed(&stream, 32 * warps).unwrap();
    warp_votes::launch(
        &stream,
        LaunchConfig::for_len(32 * warps, 64),
        &x,
        &mut ballots,
        &mut flags,
        &mut rotated,
    )
    .unwrap();
    let (ballots, flags, rotated) = (
        ballots.to_host(&stream).unwrap(),
        flags.to_host(&stream).unwrap(),
        rotated.to_host(&stream).unwrap(),
    );
    for w in 0..warps {
        let lanes = &host[w * 32..(w + 1) * 32];
        let ballot = lanes
            .iter()
            .enumerate()
            .fold(0u32, |acc, (l, v)| acc | ((*v > 0) as u32) << l);
        assert_eq!(ballots[w], ballot, "warp {w}");
        let all = lanes.iter().all(|v| *v > 0) as u32;
        let any = lanes.iter().any(|v| *v > 0) as u32;
        assert_eq!(flags[w], all * 2 + any, "warp {w}");
        for l in 0..32 {
            assert_eq!(
                rotated[w * 32 + l],
                lanes[(l + 1) % 32],
                "warp {w} lane {l}"
            );
        }
    }
}

/// Warp reductions of `u32` and `i32` over the lanes of `mask`; lanes outside it do not call
/// them and leave their outputs alone.
#[kernel]
fn warp_reductions(u: &[u32], x: &[i32], mask: u32, u_out: &mut [u32], x_out: &mut [i32]) {
    let i = global_idx().x;
    if (mask >> lane_id()) & 1 != 0 {
        u_out[3 * i] = reduce_add_sync(mask, u[i]);
        u_out[3 * i + 1] = reduce_min_sync(mask, u[i]);
        u_out[3 * i + 2] = reduce_max_sync(mask, u[i]);
        x_out[3 * i] = reduce_add_sync(mask, x[i]);
        x_out[3 * i + 1] = reduce_min_sync(mask, x[i]);
        x_out[3 * i + 2] = reduce_max_sync(mask, x[i]);
    }
}

#[test]
fn warp_reductions_over_full_and_partial_masks() {
    let warps = 4;
    let n = 32 * warps;
    // Large words, so the sums wrap; negative and positive integers.
    let u: Vec<u32> = random_f32(n, 11)
        .iter()
        .map(|v| ((v + 1.0) * 2.0e9) as u32)
        .collect();
    let x: Vec<i32> = random_f32(n, 12)
        .iter()
        .map(|v| (v * 1.0e9) as i32)
        .collect();
    for gpu in [Gpu::cpu(), test_device()] {
        let stream = gpu.default_stream();
        for mask in [0xffff_ffff_u32, 0x8f0f_00f1, 0x0000_0100] {
            let u_in = DeviceBuffer::from_host(&stream, &u).unwrap();
            let x_in = DeviceBuffer::from_host(&stream, &x).unwrap();
            let mut u_out = DeviceBuffer::zeroed(&stream, 3 * n).unwrap();
            let mut x_out = DeviceBuffer::zeroed(&stream, 3 * n).unwrap();
            warp_reductions::launch(
                &stream,
                LaunchConfig::for_len(n, 64),
                &u_in,
                &x_in,
                mask,
                &mut u_out,
                &mut x_out,
            )
            .unwrap();
            let (u_out, x_out) = (
                u_out.to_host(&stream).unwrap(),
                x_out.to_host(&stream).unwrap(),
            );
            for w in 0..warps {
                let lanes: Vec<usize> = (0..32).filter(|l| (mask >> l) & 1 != 0).collect();
                let us = lanes.iter().map(|l| u[w * 32 + l]);
                let xs = lanes.iter().map(|l| x[w * 32 + l]);
                let u_expected = [
                    us.clone().fold(0u32, u32::wrapping_add),
                    us.clone().min().unwrap(),
                    us.max().unwrap(),
                ];
                let x_expected = [
                    xs.clone().fold(0i32, i32::wrapping_add),
                    xs.clone().min().unwrap(),
                    xs.max().unwrap(),
                ];
                for l in 0..32 {
                    let i = w * 32 + l;
                    let (u_want, x_want) = if lanes.contains(&l) {
                        (u_expected, x_expected)
                    } else {
                        ([0; 3], [0; 3])
                    };
                    assert_eq!(
                        u_out[3 * i..3 * i + 3],
                        u_want,
                        "mask {mask:#x} warp {w} lane {l}"
                    );
                    assert_eq!(
                        x_out[3 * i..3 * i + 3],
                        x_want,
                        "mask {mask:#x} warp {w} lane {l}"
                    );
                }
            }
        }
    }
}

/// Local arrays, `const` items, and 16-byte vector loads and stores.
#[kernel]
fn vector_copy_scaled(x: &[f32], y: &mut [f32]) {
    const WIDTH: usize = 4;
    let i = global_idx().x * WIDTH;
    if i + WIDTH <= x.len() {
        let v = x.load4(i);
        let weights: [f32; 4] = [1.0, 2.0, 3.0, 4.0];
        let mut out = [0.0f32; WIDTH];
        for k in 0..WIDTH {
            out[k] = v[k] * weights[k];
        }
        y.store4(i, out);
    } else {
        for k in i..x.len() {
            y[k] = x[k] * (k - i + 1) as f32;
        }
    }
}

#[test]
fn vector_loads_local_arrays_and_consts() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 4 * 1000 + 3;
    let host = random_f32(n, 7);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, n).unwrap();
    vector_copy_scaled::launch(
        &stream,
        LaunchConfig::for_len(n.div_ceil(4), 128),
        &x,
        &mut y,
    )
    .unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        assert_eq!(got[i], host[i] * (i % 4 + 1) as f32, "i={i}");
    }
}

/// Labelled loops, `match` in statement and value position, and fast-math methods.
#[kernel]
fn control_flow(x: &[i32], out: &mut [i32], approx: &mut [f32]) {
    let i = global_idx().x;
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let class = match v % 7 {
        0 => 10,
        1 | 2 => 20,
        3..=5 => 30,
        _ => 40,
    };
    let mut found = -1;
    'rows: for r in 0..8 {
        for c in 0..8 {
            if r * c == v % 50 {
                found = r * 8 + c;
                break 'rows;
            }
            if c > r {
                continue 'rows;
            }
        }
    }
    let mut steps = 0;
    let mut n = v.abs() % 1000 + 1;
    'collatz: loop {
        match n {
            1 => break 'collatz,
            _ => {
                n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                steps += 1;
            }
        }
    }
    out[i] = class * 1_000_000 + found * 1000 + steps;
    let f = v as f32 * 1e-4;
    approx[i] = f.fast_exp() + f.fast_sin() + f.fast_tanh() + f.fast_div(3.0);
}

fn control_flow_cpu(v: i32) -> (i32, f32) {
    let class = match v % 7 {
        0 => 10,
        1 | 2 => 20,
        3..=5 => 30,
        _ => 40,
    };
    let mut found = -1;
    'rows: for r in 0..8 {
        for c in 0..8 {
            if r * c == v % 50 {
                found = r * 8 + c;
                break 'rows;
            }
            if c > r {
                continue 'rows;
            }
        }
    }
    let mut steps = 0;
    let mut n = v.abs() % 1000 + 1;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    let f = v as f32 * 1e-4;
    (
        class * 1_000_000 + found * 1000 + steps,
        f.exp() + f.sin() + f.tanh() + f / 3.0,
    )
}

#[test]
fn labelled_loops_match_and_fast_math() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 5000;
    let host: Vec<i32> = (0..n as i32).map(|i| i * 37 - 90_000).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut approx = DeviceBuffer::zeroed(&stream, n).unwrap();
    control_flow::launch(
        &stream,
        LaunchConfig::for_len(n, 128),
        &x,
        &mut out,
        &mut approx,
    )
    .unwrap();
    let (out, approx) = (
        out.to_host(&stream).unwrap(),
        approx.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let (expected, expected_approx) = control_flow_cpu(host[i]);
        assert_eq!(out[i], expected, "x={}", host[i]);
        // The fast intrinsics trade accuracy for speed: a few ulp to ~1e-3 relative.
        assert!(
            (approx[i] - expected_approx).abs() < 2e-3 * expected_approx.abs().max(1.0),
            "x={}: {} vs {expected_approx}",
            host[i],
            approx[i]
        );
    }
}

/// Half precision: `f16` and `bf16` buffers, arithmetic rounded as the `half` crate rounds, the
/// explicit conversions and the constants.
#[kernel]
fn half_precision(
    a: &[f16],
    b: &[bf16],
    scale: f16,
    out_a: &mut [f16],
    out_b: &mut [bf16],
    wide: &mut [f32],
) {
    let i = global_idx().x;
    if i < a.len() {
        let x = a[i] * scale + f16::ONE;
        let y = b[i] / bf16::from_f32(3.0) - bf16::from_f64(0.25);
        out_a[i] = if x.is_nan() { f16::ZERO } else { x.max(-x) };
        out_b[i] = -y;
        wide[i] = x.to_f32() + y.to_f32() + f16::from_f32(wide[i]).to_f32();
    }
}

#[test]
fn half_precision_matches_the_half_crate() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 4096;
    let af: Vec<f32> = random_f32(n, 11).iter().map(|v| v * 300.0).collect();
    let bf: Vec<f32> = random_f32(n, 12).iter().map(|v| v * 1e20).collect();
    let a_host: Vec<f16> = af.iter().map(|v| f16::from_f32(*v)).collect();
    let b_host: Vec<bf16> = bf.iter().map(|v| bf16::from_f32(*v)).collect();
    let w_host: Vec<f32> = random_f32(n, 13);
    let scale = f16::from_f32(0.7);
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let mut out_a = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut out_b = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut wide = DeviceBuffer::from_host(&stream, &w_host).unwrap();
    half_precision::launch(
        &stream,
        LaunchConfig::for_len(n, 128),
        &a,
        &b,
        scale,
        &mut out_a,
        &mut out_b,
        &mut wide,
    )
    .unwrap();
    let (ga, gb, gw) = (
        out_a.to_host(&stream).unwrap(),
        out_b.to_host(&stream).unwrap(),
        wide.to_host(&stream).unwrap(),
    );
    for i in 0..n {
        let x = a_host[i] * scale + f16::ONE;
        let y = b_host[i] / bf16::from_f32(3.0) - bf16::from_f64(0.25);
        let expected_a = if x.is_nan() { f16::ZERO } else { x.max(-x) };
        assert_eq!(
            ga[i].to_bits(),
            expected_a.to_bits(),
            "f16 {i}: {} vs {expected_a}",
            ga[i]
        );
        assert_eq!(
            gb[i].to_bits(),
            (-y).to_bits(),
            "bf16 {i}: {} vs {}",
            gb[i],
            -y
        );
        let expected_w = x.to_f32() + y.to_f32() + f16::from_f32(w_host[i]).to_f32();
        assert_eq!(gw[i], expected_w, "wide {i}");
    }
}

/// One warp's tensor-core product D = A * B + C (A 16x16, B 16x8, f16 or bf16 inputs, f32
/// accumulate), with the PTX fragment layout: lane = 4 * group + thread-in-group.
#[kernel]
fn mma_f16(a: &[f16], b: &[f16], c: &[f32], d: &mut [f32]) {
    let lane = lane_id() as usize;
    let g = lane / 4;
    let t = lane % 4;
    let fa = [
        pack_f16x2(a[g * 16 + t * 2], a[g * 16 + t * 2 + 1]),
        pack_f16x2(a[(g + 8) * 16 + t * 2], a[(g + 8) * 16 + t * 2 + 1]),
        pack_f16x2(a[g * 16 + t * 2 + 8], a[g * 16 + t * 2 + 9]),
        pack_f16x2(a[(g + 8) * 16 + t * 2 + 8], a[(g + 8) * 16 + t * 2 + 9]),
    ];
    let fb = [
        pack_f16x2(b[t * 2 * 8 + g], b[(t * 2 + 1) * 8 + g]),
        pack_f16x2(b[(t * 2 + 8) * 8 + g], b[(t * 2 + 9) * 8 + g]),
    ];
    let acc = [
        c[g * 8 + t * 2],
        c[g * 8 + t * 2 + 1],
        c[(g + 8) * 8 + t * 2],
        c[(g + 8) * 8 + t * 2 + 1],
    ];
    let out = mma_m16n8k16_f16(acc, fa, fb);
    d[g * 8 + t * 2] = out[0];
    d[g * 8 + t * 2 + 1] = out[1];
    d[(g + 8) * 8 + t * 2] = out[2];
    d[(g + 8) * 8 + t * 2 + 1] = out[3];
}

#[kernel]
fn mma_bf16(a: &[bf16], b: &[bf16], c: &[f32], d: &mut [f32]) {
    let lane = lane_id() as usize;
    let g = lane / 4;
    let t = lane % 4;
    let fa = [
        pack_bf16x2(a[g * 16 + t * 2], a[g * 16 + t * 2 + 1]),
        pack_bf16x2(a[(g + 8) * 16 + t * 2], a[(g + 8) * 16 + t * 2 + 1]),
        pack_bf16x2(a[g * 16 + t * 2 + 8], a[g * 16 + t * 2 + 9]),
        pack_bf16x2(a[(g + 8) * 16 + t * 2 + 8], a[(g + 8) * 16 + t * 2 + 9]),
    ];
    let fb = [
        pack_bf16x2(b[t * 2 * 8 + g], b[(t * 2 + 1) * 8 + g]),
        pack_bf16x2(b[(t * 2 + 8) * 8 + g], b[(t * 2 + 9) * 8 + g]),
    ];
    let acc = [
        c[g * 8 + t * 2],
        c[g * 8 + t * 2 + 1],
        c[(g + 8) * 8 + t * 2],
        c[(g + 8) * 8 + t * 2 + 1],
    ];
    let out = mma_m16n8k16_bf16(acc, fa, fb);
    d[g * 8 + t * 2] = out[0];
    d[g * 8 + t * 2 + 1] = out[1];
    d[(g + 8) * 8 + t * 2] = out[2];
    d[(g + 8) * 8 + t * 2 + 1] = out[3];
}

#[test]
fn tensor_core_mma_matches_the_cpu() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let af = random_f32(16 * 16, 21);
    let bf = random_f32(16 * 8, 22);
    let cf = random_f32(16 * 8, 23);
    let c = DeviceBuffer::from_host(&stream, &cf).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(32));
    // The inputs as the tensor cores see them: rounded to 16 bits.
    let a16: Vec<f16> = af.iter().map(|v| f16::from_f32(*v)).collect();
    let b16: Vec<f16> = bf.iter().map(|v| f16::from_f32(*v)).collect();
    let a_b: Vec<bf16> = af.iter().map(|v| bf16::from_f32(*v)).collect();
    let b_b: Vec<bf16> = bf.iter().map(|v| bf16::from_f32(*v)).collect();
    let mut d = DeviceBuffer::zeroed(&stream, 16 * 8).unwrap();
    let a = DeviceBuffer::from_host(&stream, &a16).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b16).unwrap();
    mma_f16::launch(&stream, config, &a, &b, &c, &mut d).unwrap();
    let got_f16 = d.to_host(&stream).unwrap();
    let a = DeviceBuffer::from_host(&stream, &a_b).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_b).unwrap();
    mma_bf16::launch(&stream, config, &a, &b, &c, &mut d).unwrap();
    let got_bf16 = d.to_host(&stream).unwrap();
    for i in 0..16 {
        for j in 0..8 {
            let f16_ref: f64 = cf[i * 8 + j] as f64
                + (0..16)
                    .map(|k| a16[i * 16 + k].to_f64() * b16[k * 8 + j].to_f64())
                    .sum::<f64>();
            let bf16_ref: f64 = cf[i * 8 + j] as f64
                + (0..16)
                    .map(|k| a_b[i * 16 + k].to_f64() * b_b[k * 8 + j].to_f64())
                    .sum::<f64>();
            assert!(
                (got_f16[i * 8 + j] as f64 - f16_ref).abs() < 1e-4,
                "f16 [{i},{j}]: {} vs {f16_ref}",
                got_f16[i * 8 + j]
            );
            assert!(
                (got_bf16[i * 8 + j] as f64 - bf16_ref).abs() < 1e-4,
                "bf16 [{i},{j}]: {} vs {bf16_ref}",
                got_bf16[i * 8 + j]
            );
        }
    }
}

/// A 16x16 f16 tile through `cp_async_16` into shared memory (its last row zero-filled: the
/// source holds 15), then out through every `ldmatrix` form.
#[kernel]
fn ldmatrix_forms(a: &[f16], out: &mut [u32]) {
    let tile = shared_array::<u32, 128>();
    let lane = lane_id() as usize;
    // Lane l copies half of row l / 2: 16 bytes are 8 halves or 4 words.
    cp_async_16(tile, lane * 4, a, lane * 8, lane * 8 + 8 <= a.len());
    cp_async_commit();
    cp_async_wait(0);
    sync_threads();
    // Lane 8j + r gives row r of matrix j: rows 8 (j % 2).., columns 8 (j / 2)..
    let j = lane / 8;
    let row = (j % 2) * 8 + lane % 8;
    let index = row * 8 + (j / 2) * 4;
    let x4 = ldmatrix_x4(tile, index);
    let x4t = ldmatrix_x4_trans(tile, index);
    let x2 = ldmatrix_x2(tile, index);
    let x2t = ldmatrix_x2_trans(tile, index);
    let x1 = ldmatrix_x1(tile, index);
    let x1t = ldmatrix_x1_trans(tile, index);
    for w in 0..4 {
        out[lane * 4 + w] = x4[w];
        out[128 + lane * 4 + w] = x4t[w];
    }
    for w in 0..2 {
        out[256 + lane * 2 + w] = x2[w];
        out[320 + lane * 2 + w] = x2t[w];
    }
    out[384 + lane] = x1[0];
    out[416 + lane] = x1t[0];
}

#[test]
fn ldmatrix_and_cp_async_match_the_ptx_layout() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let values = random_f32(15 * 16, 31);
    let a16: Vec<f16> = values.iter().map(|v| f16::from_f32(*v)).collect();
    let a = DeviceBuffer::from_host(&stream, &a16).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 448).unwrap();
    let config = LaunchConfig::new(Grid::x(1), Block::x(32));
    ldmatrix_forms::launch(&stream, config, &a, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    let at = |row: usize, col: usize| -> u32 {
        if row < 15 {
            u32::from(a16[row * 16 + col].to_bits())
        } else {
            0
        }
    };
    let pair = |lo: u32, hi: u32| lo | hi << 16;
    for lane in 0..32 {
        let (group, quad) = (lane / 4, lane % 4);
        for j in 0..4 {
            let (r0, c0) = ((j % 2) * 8, (j / 2) * 8);
            let plain = pair(
                at(r0 + group, c0 + 2 * quad),
                at(r0 + group, c0 + 2 * quad + 1),
            );
            let trans = pair(
                at(r0 + 2 * quad, c0 + group),
                at(r0 + 2 * quad + 1, c0 + group),
            );
            assert_eq!(got[lane * 4 + j], plain, "x4 lane {lane} word {j}");
            assert_eq!(
                got[128 + lane * 4 + j],
                trans,
                "x4.trans lane {lane} word {j}"
            );
            if j < 2 {
                assert_eq!(got[256 + lane * 2 + j], plain, "x2 lane {lane} word {j}");
                assert_eq!(
                    got[320 + lane * 2 + j],
                    trans,
                    "x2.trans lane {lane} word {j}"
                );
            }
            if j == 0 {
                assert_eq!(got[384 + lane], plain, "x1 lane {lane}");
                assert_eq!(got[416 + lane], trans, "x1.trans lane {lane}");
            }
        }
    }
}

/// The device's Philox stream is the host reference's, word for word.
#[kernel]
fn philox_words(seed: u32, out: &mut [u32]) {
    let i = global_idx().x;
    if i * 4 + 4 <= out.len() {
        let r = philox4x32_10(i as u32, 7, 0xdead_beef, i as u32 * 3, seed, !seed);
        for k in 0..4 {
            out[i * 4 + k] = r[k];
        }
    }
}

#[test]
fn philox_matches_the_host_reference() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 1000;
    let mut out = DeviceBuffer::zeroed(&stream, n * 4).unwrap();
    philox_words::launch(&stream, LaunchConfig::for_len(n, 128), 42, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for i in 0..n {
        let expected = gpu_dsl::runtime::random::philox4x32_10(
            [i as u32, 7, 0xdead_beef, i as u32 * 3],
            [42, !42],
        );
        assert_eq!(&got[i * 4..i * 4 + 4], &expected, "counter {i}");
    }
}

/// Fences, `sync_warp`, `active_mask` and `clock64`: a flag published after data, read back.
#[kernel]
fn fences_and_clocks(data: &mut [u32], flags: &mut [u32], masks: &mut [u32], ticks: &mut [u64]) {
    let i = global_idx().x;
    if i < data.len() {
        let start = clock64();
        data[i] = i as u32 * 3;
        thread_fence();
        flags.atomic_exchange(i, 1);
        thread_fence_block();
        sync_warp();
        masks[i] = active_mask();
        thread_fence_system();
        ticks[i] = clock64() - start + 1;
    }
}

#[test]
fn fences_sync_warp_and_clocks() {
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 64;
    let mut data = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut flags = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut masks = DeviceBuffer::zeroed(&stream, n).unwrap();
    let mut ticks = DeviceBuffer::zeroed(&stream, n).unwrap();
    fences_and_clocks::launch(
        &stream,
        LaunchConfig::for_len(n, 64),
        &mut data,
        &mut flags,
        &mut masks,
        &mut ticks,
    )
    .unwrap();
    assert_eq!(
        data.to_host(&stream).unwrap(),
        (0..n as u32).map(|i| i * 3).collect::<Vec<_>>()
    );
    assert!(flags.to_host(&stream).unwrap().iter().all(|f| *f == 1));
    assert!(
        masks
            .to_host(&stream)
            .unwrap()
            .iter()
            .all(|m| *m == u32::MAX),
        "full warps are all active"
    );
    assert!(ticks.to_host(&stream).unwrap().iter().all(|t| *t >= 1));
}

/// Runs without a GPU: every kernel above compiles with NVRTC.
#[test]
fn every_kernel_compiles_with_nvrtc() {
    use gpu_dsl::runtime::Kernel;
    let kernels: [&Kernel; 18] = [
        &philox_words::KERNEL,
        &ldmatrix_forms::KERNEL,
        &fences_and_clocks::KERNEL,
        &mma_f16::KERNEL,
        &mma_bf16::KERNEL,
        &half_precision::KERNEL,
        &gather::KERNEL,
        &divide::KERNEL,
        &control_flow::KERNEL,
        &matmul_tiled::KERNEL,
        &sum_reduce::KERNEL,
        &histogram::KERNEL,
        &monte_carlo_pi::KERNEL,
        &block_max::KERNEL,
        &atomics::KERNEL,
        &warp_votes::KERNEL,
        &warp_reductions::KERNEL,
        &vector_copy_scaled::KERNEL,
    ];
    let cases: Vec<(&Kernel, &[gpu_dsl::runtime::TemplateArg])> =
        kernels.iter().map(|k| (*k, &[][..])).collect();
    assert_compiles_with_nvrtc(&cases);
}

#[kernel]
fn gather(indices: &[u32], x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < indices.len() {
        out[i] = x[indices[i] as usize];
    }
}

#[kernel]
fn divide(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_idx().x;
    if i < a.len() {
        out[i] = a[i] / b[i];
    }
}

/// Checked mode turns an out-of-bounds index or a division by zero into a Rust-style panic,
/// naming the kernel and the line, from the next synchronizing call.
#[test]
fn checked_mode_reports_the_user_line() {
    let gpu = test_device();
    // A stream of its own: the panics below must not reach other tests' streams.
    let stream = gpu.new_stream().unwrap();
    let indices = DeviceBuffer::from_host(&stream, &[0u32, 1, 7, 2]).unwrap();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0]).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 4).unwrap();
    let config = LaunchConfig::for_len(4, 32);
    gather::launch(&stream, config.checked(true), &indices, &x, &mut out).unwrap();
    let error = stream.synchronize().unwrap_err().to_string();
    let line = include_str!("language.rs")
        .lines()
        .position(|l| l.trim() == "out[i] = x[indices[i] as usize];")
        .expect("the gather statement")
        + 1;
    assert!(
        error.contains("kernel `gather` panicked at tests/language.rs:"),
        "{error}"
    );
    assert!(
        error.contains(&format!(":{line}:")) || error.contains(&format!(":{line}")),
        "{error} (line {line})"
    );
    assert!(error.contains("the len is 3 but the index is 7"), "{error}");
    // The slot was reset: a good launch works, and unchecked mode does not look.
    let good = DeviceBuffer::from_host(&stream, &[2u32, 1, 0, 1]).unwrap();
    gather::launch(&stream, config.checked(true), &good, &x, &mut out).unwrap();
    assert_eq!(out.to_host(&stream).unwrap(), vec![3.0, 2.0, 1.0, 2.0]);

    let a = DeviceBuffer::from_host(&stream, &[10i32, i32::MIN, 9, 8]).unwrap();
    let b = DeviceBuffer::from_host(&stream, &[2i32, -1, 3, 0]).unwrap();
    let mut q = DeviceBuffer::zeroed(&stream, 4).unwrap();
    divide::launch(&stream, config.checked(true), &a, &b, &mut q).unwrap();
    let error = stream.synchronize().unwrap_err().to_string();
    assert!(error.contains("kernel `divide` panicked"), "{error}");
    assert!(
        error.contains("divide by zero") || error.contains("overflow"),
        "{error}"
    );
    // Unchecked, MIN / -1 wraps as in release Rust (the CPU backend always checks).
    if gpu.backend() != gpu_dsl::runtime::Backend::Cuda {
        return;
    }
    let b = DeviceBuffer::from_host(&stream, &[2i32, -1, 3, 1]).unwrap();
    divide::launch(&stream, config.checked(false), &a, &b, &mut q).unwrap();
    assert_eq!(q.to_host(&stream).unwrap(), vec![5, i32::MIN, 3, 8]);
}

/// Warp 0 produces 8 rounds of 32 values into 2 shared stages, warp 1 consumes them, paced by
/// mbarriers alone (a "full" and a "free" barrier per stage): what a warp-specialized kernel
/// does with its tiles.
#[kernel]
fn mbarrier_pipeline(x: &[u32], out: &mut [u32]) {
    let stages = shared_array::<u32, 64>();
    let bars = shared_array::<u64, 4>();
    let t = thread_idx().x as usize;
    let lane = t % 32;
    if t == 0 {
        for s in 0..2 {
            mbarrier_init(bars, s, 32);
            mbarrier_init(bars, 2 + s, 32);
        }
    }
    sync_threads();
    let base = block_idx().x as usize * 256;
    if t < 32 {
        for round in 0..8 {
            let s = round % 2;
            if round >= 2 {
                mbarrier_wait(bars, 2 + s, ((round / 2 + 1) % 2) as u32);
            }
            stages[s * 32 + lane] = x[base + round * 32 + lane] * 3;
            mbarrier_arrive(bars, s);
        }
    } else {
        let mut sum = 0u32;
        for round in 0..8 {
            let s = round % 2;
            mbarrier_wait(bars, s, ((round / 2) % 2) as u32);
            // Another lane's value: only the barrier orders it after its write.
            let v = stages[s * 32 + (lane + round) % 32];
            sum = sum.wrapping_add(v.wrapping_mul(round as u32 + 1));
            mbarrier_arrive(bars, 2 + s);
        }
        out[block_idx().x as usize * 32 + lane] = sum;
    }
}

#[test]
fn mbarriers_pace_a_producer_and_a_consumer() {
    assert_compiles_with_nvrtc(&[(&mbarrier_pipeline::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let blocks = 3;
    let host: Vec<u32> = (0..blocks * 256)
        .map(|i| (i * 7919 % 1000) as u32)
        .collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, blocks * 32).unwrap();
    let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(64));
    mbarrier_pipeline::launch(&stream, config, &x, &mut out).unwrap();
    let got = out.to_host(&stream).unwrap();
    for b in 0..blocks {
        for lane in 0..32 {
            let expected = (0..8u32).fold(0u32, |sum, round| {
                let v = host[b * 256 + round as usize * 32 + (lane + round as usize) % 32] * 3;
                sum.wrapping_add(v.wrapping_mul(round + 1))
            });
            assert_eq!(got[b * 32 + lane], expected, "block {b} lane {lane}");
        }
    }
}

/// A shift by a constant from outside the kernel, whose type the macro cannot see.
const SHIFT: usize = 5;

/// Saturating arithmetic on every integer width, a shift by an outer constant, and `swap` on a
/// slice and on shared memory, as Rust writes them.
#[kernel]
fn saturating_and_swap(
    a: &[i32],
    b: &[i32],
    sat: &mut [i64],
    shifted: &mut [u32],
    pairs: &mut [u32],
) {
    let i = global_idx().x;
    let tile = shared_array::<u32, 64>();
    let t = thread_idx().x as usize;
    tile[t] = t as u32;
    sync_threads();
    if t % 2 == 0 {
        tile.swap(t, t + 1);
    }
    sync_threads();
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        let (ux, uy) = (x as u32, y as u32);
        let (bx, by) = (x as i8, y as i8);
        let (hx, hy) = (x as u16, y as u16);
        let (wx, wy) = (x as i64 * 3_000_000_000, y as i64 * 3_000_000_000);
        let (vx, vy) = (
            (ux as u64).wrapping_mul(5_000_000_000),
            (uy as u64).wrapping_mul(5_000_000_000),
        );
        let o = i * 12;
        sat[o] = x.saturating_add(y) as i64;
        sat[o + 1] = x.saturating_sub(y) as i64;
        sat[o + 2] = x.saturating_mul(y) as i64;
        sat[o + 3] = ux.saturating_sub(uy) as i64;
        sat[o + 4] = ux.saturating_mul(uy) as i64;
        sat[o + 5] = bx.saturating_add(by) as i64;
        sat[o + 6] = bx.saturating_mul(by) as i64;
        sat[o + 7] = hx.saturating_sub(hy) as i64;
        sat[o + 8] = wx.saturating_add(wy);
        sat[o + 9] = wx.saturating_mul(wy);
        sat[o + 10] = vx.saturating_sub(vy) as i64;
        sat[o + 11] = vx.saturating_mul(vy) as i64;
        shifted[i] = (ux >> SHIFT) + (7u32 << SHIFT);
        pairs[i] = tile[t];
        if i + 1 < a.len() {
            pairs.swap(i, i);
        }
    }
}

#[test]
fn saturating_arithmetic_shifts_by_outer_constants_and_swap() {
    assert_compiles_with_nvrtc(&[(&saturating_and_swap::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let n = 128;
    let specials = [
        i32::MAX,
        i32::MIN,
        -1,
        0,
        1,
        200,
        -200,
        70_000,
        -70_000,
        46_341,
    ];
    let a_host: Vec<i32> = (0..n)
        .map(|i| specials[i % specials.len()].wrapping_add((i / 10) as i32))
        .collect();
    let b_host: Vec<i32> = (0..n)
        .map(|i| specials[(i * 7 + 3) % specials.len()])
        .collect();
    let a = DeviceBuffer::from_host(&stream, &a_host).unwrap();
    let b = DeviceBuffer::from_host(&stream, &b_host).unwrap();
    let mut sat = DeviceBuffer::<i64>::zeroed(&stream, n * 12).unwrap();
    let mut shifted = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    let mut pairs = DeviceBuffer::<u32>::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::x(2), Block::x(64));
    saturating_and_swap::launch(&stream, config, &a, &b, &mut sat, &mut shifted, &mut pairs)
        .unwrap();
    let sat = sat.to_host(&stream).unwrap();
    let shifted = shifted.to_host(&stream).unwrap();
    let pairs = pairs.to_host(&stream).unwrap();
    for i in 0..n {
        let (x, y) = (a_host[i], b_host[i]);
        let (ux, uy) = (x as u32, y as u32);
        let (bx, by) = (x as i8, y as i8);
        let (hx, hy) = (x as u16, y as u16);
        let (wx, wy) = (x as i64 * 3_000_000_000, y as i64 * 3_000_000_000);
        let (vx, vy) = (
            (ux as u64).wrapping_mul(5_000_000_000),
            (uy as u64).wrapping_mul(5_000_000_000),
        );
        let expected = [
            x.saturating_add(y) as i64,
            x.saturating_sub(y) as i64,
            x.saturating_mul(y) as i64,
            ux.saturating_sub(uy) as i64,
            ux.saturating_mul(uy) as i64,
            bx.saturating_add(by) as i64,
            bx.saturating_mul(by) as i64,
            hx.saturating_sub(hy) as i64,
            wx.saturating_add(wy),
            wx.saturating_mul(wy),
            vx.saturating_sub(vy) as i64,
            vx.saturating_mul(vy) as i64,
        ];
        assert_eq!(&sat[i * 12..i * 12 + 12], &expected, "x {x}, y {y}");
        assert_eq!(shifted[i], (ux >> SHIFT) + (7u32 << SHIFT));
        // Each even thread swapped its slot with the next one's.
        let t = i % 64;
        assert_eq!(pairs[i], (t ^ 1) as u32, "thread {t}");
    }
}
