//! Throughput of the CPU backend, printed past the test harness's capture. Figures are only
//! meaningful from a release build:
//!
//! `cargo test --release -p gpu-dsl-runtime --test cpu_bench -- --nocapture --test-threads 1`
//!
//! Debug builds run the same code on smaller inputs, as a smoke test.

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use corosensei::{Coroutine, CoroutineResult};
use gpu_dsl_runtime::cpu::{CpuArgs, ThreadCtx};
use gpu_dsl_runtime::{
    Block, DeviceBuffer, ElemType, Gpu, Grid, Kernel, KernelArg, LaunchConfig, ParamKind,
    ScalarType,
};

fn say(line: &str) {
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// Elements per benchmark: 2^24 in release builds, 2^20 in debug builds.
fn elements() -> usize {
    if cfg!(debug_assertions) {
        1 << 20
    } else {
        1 << 24
    }
}

/// The best of `runs` timings of `f`.
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn rate(elements: usize, time: Duration) -> String {
    format!(
        "{:.0} M elements/s",
        elements as f64 / time.as_secs_f64() / 1e6
    )
}

const fn slice(elem: ScalarType, mutable: bool) -> ParamKind {
    ParamKind::Slice {
        elem: ElemType::Scalar(elem),
        mutable,
    }
}

fn saxpy_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let a: f32 = args.scalar(0);
    let x = args.slice::<f32>(1);
    let y = args.slice::<f32>(2);
    let i = (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize;
    if i < y.len() {
        y.set(i, a * x.get(i, t, 1) + y.get(i, t, 1), t, 1);
    }
}

static SAXPY: Kernel = Kernel::__generated_v2(
    "saxpy",
    "saxpy",
    "",
    &[
        ParamKind::Scalar(ScalarType::F32),
        slice(ScalarType::F32, false),
        slice(ScalarType::F32, true),
    ],
    "tests/cpu_bench.rs",
    true,
)
.with_cpu(saxpy_twin, false);

#[test]
fn saxpy_throughput() {
    let n = elements();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let mut ys: Vec<f32> = vec![1.0; n];
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let mut y = DeviceBuffer::from_host(&stream, &ys).unwrap();

    let plain = best_of(5, || {
        let a = black_box(2.0f32);
        for (y, x) in ys.iter_mut().zip(&xs) {
            *y += a * x;
        }
        black_box(&mut ys);
    });
    let kernel = best_of(5, || {
        stream
            .launch(
                &SAXPY,
                LaunchConfig::for_len(n, 256),
                &[
                    KernelArg::scalar(2.0f32),
                    KernelArg::slice(&x),
                    KernelArg::slice_mut(&mut y),
                ],
            )
            .unwrap();
    });
    stream.synchronize().unwrap();
    say(&format!(
        "cpu_bench saxpy (y = a*x + y, {n} f32, 256 threads/block) on {}: kernel {:.2} ms \
         ({}), plain single-threaded Rust loop {:.2} ms ({}): kernel/loop speed = {:.2}",
        gpu.name(),
        kernel.as_secs_f64() * 1e3,
        rate(n, kernel),
        plain.as_secs_f64() * 1e3,
        rate(n, plain),
        plain.as_secs_f64() / kernel.as_secs_f64()
    ));
    // Five launches of y = 2x + y from y = 1 (the plain loop ran on `ys`, not on `y`).
    let got = y.to_host(&stream).unwrap();
    assert_eq!(got[3], 1.0 + 5.0 * 2.0 * 3.0);
}

/// One element per thread, a 1024-wide tree in shared memory, one atomic per block.
fn block_reduce_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let out = args.slice::<f32>(1);
    let tile = t.shared_array::<f32>(0, 1024);
    let tid = t.thread_idx().x as usize;
    let i = (t.block_idx().x * t.block_dim().x) as usize + tid;
    tile.set(tid, if i < x.len() { x.get(i, t, 1) } else { 0.0 }, t, 1);
    t.sync_threads();
    let mut s = t.block_dim().x as usize / 2;
    while s > 0 {
        if tid < s {
            tile.set(tid, tile.get(tid, t, 1) + tile.get(tid + s, t, 1), t, 1);
        }
        t.sync_threads();
        s /= 2;
    }
    if tid == 0 {
        out.atomic_add(0, tile.get(0, t, 1), t, 1);
    }
}

/// A grid-stride loop per thread first, then the same tree over 256 threads.
fn strided_reduce_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let x = args.slice::<f32>(0);
    let out = args.slice::<f32>(1);
    let tile = t.shared_array::<f32>(0, 256);
    let tid = t.thread_idx().x as usize;
    let stride = (t.grid_dim().x * t.block_dim().x) as usize;
    let mut sum = 0.0;
    let mut i = (t.block_idx().x * t.block_dim().x) as usize + tid;
    while i < x.len() {
        sum += x.get(i, t, 1);
        i += stride;
    }
    tile.set(tid, sum, t, 1);
    t.sync_threads();
    let mut s = t.block_dim().x as usize / 2;
    while s > 0 {
        if tid < s {
            tile.set(tid, tile.get(tid, t, 1) + tile.get(tid + s, t, 1), t, 1);
        }
        t.sync_threads();
        s /= 2;
    }
    if tid == 0 {
        out.atomic_add(0, tile.get(0, t, 1), t, 1);
    }
}

const REDUCE_PARAMS: &[ParamKind] = &[slice(ScalarType::F32, false), slice(ScalarType::F32, true)];

static BLOCK_REDUCE: Kernel =
    Kernel::__generated_v2("block_reduce", "block_reduce", "", REDUCE_PARAMS, "", true)
        .with_cpu(block_reduce_twin, true);

static STRIDED_REDUCE: Kernel = Kernel::__generated_v2(
    "strided_reduce",
    "strided_reduce",
    "",
    REDUCE_PARAMS,
    "",
    true,
)
.with_cpu(strided_reduce_twin, true);

#[test]
fn reduction_throughput() {
    let n = elements();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    // Small integers: every order of summation gives the exact total.
    let xs: Vec<f32> = (0..n).map(|i| (i % 4) as f32).collect();
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();

    let plain = best_of(5, || {
        black_box(black_box(&xs).iter().sum::<f32>());
    });
    // The sum of the first `m` elements, by the blocks that cover them.
    let run = |kernel: &'static Kernel, config: LaunchConfig, m: usize| {
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let time = best_of(3, || {
            out.copy_from_host(&stream, &[0.0]).unwrap();
            stream
                .launch(
                    kernel,
                    config,
                    &[KernelArg::slice(&x), KernelArg::slice_mut(&mut out)],
                )
                .unwrap();
        });
        let expected = xs[..m].iter().map(|&v| f64::from(v)).sum::<f64>() as f32;
        assert_eq!(
            out.to_host(&stream).unwrap(),
            [expected],
            "{}",
            kernel.name()
        );
        time
    };
    // A coroutine per element is slow in unoptimised builds: a smoke-test size there.
    let m = if cfg!(debug_assertions) { 1 << 16 } else { n };
    let per_element = run(&BLOCK_REDUCE, LaunchConfig::for_len(m, 1024), m);
    let strided_blocks = 4 * gpu.sm_count();
    let strided = run(
        &STRIDED_REDUCE,
        LaunchConfig::new(Grid::x(strided_blocks), Block::x(256)),
        n,
    );
    say(&format!(
        "cpu_bench reduction ({n} f32, shared-memory tree with sync_threads) on {}: \
         one element per thread, 1024 threads/block ({m} elements): {:.1} ms ({}); \
         grid-stride, {} blocks of 256: {:.1} ms ({}); plain single-threaded Rust sum: {:.1} ms \
         ({})",
        gpu.name(),
        per_element.as_secs_f64() * 1e3,
        rate(m, per_element),
        strided_blocks,
        strided.as_secs_f64() * 1e3,
        rate(n, strided),
        plain.as_secs_f64() * 1e3,
        rate(n, plain)
    ));
}

/// What a thread switch costs: a coroutine suspend + resume versus handing control between
/// two OS threads (the alternative to coroutines for blocking at a barrier).
#[test]
fn switch_costs() {
    let rounds: u64 = if cfg!(debug_assertions) {
        100_000
    } else {
        2_000_000
    };
    let mut coroutine = Coroutine::new(|yielder, mut count: u64| loop {
        count = yielder.suspend(count + 1);
    });
    let start = Instant::now();
    let mut value = 0;
    for _ in 0..rounds {
        if let CoroutineResult::Yield(v) = coroutine.resume(black_box(value)) {
            value = v;
        }
    }
    let coroutine_ns = start.elapsed().as_secs_f64() * 1e9 / rounds as f64;
    assert_eq!(value, rounds);

    let handoffs: u64 = if cfg!(debug_assertions) {
        2_000
    } else {
        20_000
    };
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let other = {
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            for _ in 0..handoffs {
                barrier.wait();
            }
        })
    };
    let start = Instant::now();
    for _ in 0..handoffs {
        barrier.wait();
    }
    let thread_ns = start.elapsed().as_secs_f64() * 1e9 / handoffs as f64;
    other.join().unwrap();
    say(&format!(
        "cpu_bench switch costs: coroutine suspend+resume {coroutine_ns:.1} ns; two OS threads \
         meeting at a std::sync::Barrier {thread_ns:.0} ns per barrier ({:.0}x)",
        thread_ns / coroutine_ns
    ));
}

/// What the race checker costs: the same launches with it off and on (a shadow per word
/// touched, checked on every access), and the same results either way.
#[test]
fn racecheck_cost() {
    let n = elements() / 16;
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let xs: Vec<f32> = (0..n).map(|i| (i % 4) as f32).collect();
    let x = DeviceBuffer::from_host(&stream, &xs).unwrap();
    let mut results = Vec::new();
    let mut times = Vec::new();
    for racecheck in [false, true] {
        let mut y = DeviceBuffer::from_host(&stream, &vec![1.0f32; n]).unwrap();
        let saxpy = best_of(3, || {
            let config = LaunchConfig::for_len(n, 256).racecheck(racecheck);
            let args = [
                KernelArg::scalar(2.0f32),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y),
            ];
            stream.launch(&SAXPY, config, &args).unwrap();
        });
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
        let reduce = best_of(3, || {
            out.copy_from_host(&stream, &[0.0]).unwrap();
            let config = LaunchConfig::for_len(n, 1024).racecheck(racecheck);
            let args = [KernelArg::slice(&x), KernelArg::slice_mut(&mut out)];
            stream.launch(&BLOCK_REDUCE, config, &args).unwrap();
        });
        results.push((y.to_host(&stream).unwrap(), out.to_host(&stream).unwrap()));
        times.push((saxpy, reduce));
    }
    assert_eq!(results[0], results[1], "the checker changes no result");
    let ratio = |on: Duration, off: Duration| on.as_secs_f64() / off.as_secs_f64();
    say(&format!(
        "cpu_bench racecheck ({n} f32) on {}: saxpy {:.2} ms off, {:.2} ms on ({:.1}x); \
         shared-memory tree reduction {:.2} ms off, {:.2} ms on ({:.1}x)",
        gpu.name(),
        times[0].0.as_secs_f64() * 1e3,
        times[1].0.as_secs_f64() * 1e3,
        ratio(times[1].0, times[0].0),
        times[0].1.as_secs_f64() * 1e3,
        times[1].1.as_secs_f64() * 1e3,
        ratio(times[1].1, times[0].1),
    ));
}
