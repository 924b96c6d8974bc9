//! `assert!`, `assert_eq!`, `assert_ne!`, `debug_assert!`, `panic!` and `println!` in kernels
//! and device functions: the failure's kernel, file, line, block, thread and message, and
//! the printed text, compared with what Rust itself writes for the same values.

mod common;

use std::panic::{catch_unwind, UnwindSafe};
use std::sync::{Mutex, MutexGuard};

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{test_device, Backend, Error, TemplateArg};

/// The device, for one test at a time: a GPU has one error slot for all its streams, so a
/// panic launched by one test could surface in another's synchronize.
fn exclusive_device() -> (MutexGuard<'static, ()>, Gpu) {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let gpu = test_device();
    // Whatever a failed earlier test left behind.
    let _ = gpu.synchronize();
    (guard, gpu)
}

/// The 1-based line of this file whose trimmed text is `text`.
fn line_of(text: &str) -> u32 {
    include_str!("diagnostics.rs")
        .lines()
        .position(|l| l.trim() == text)
        .unwrap_or_else(|| panic!("no line `{text}`")) as u32
        + 1
}

/// The message Rust's own panic carries when `f` panics.
fn rust_panic_message(f: impl FnOnce() + UnwindSafe) -> String {
    let payload = catch_unwind(f).expect_err("the Rust assertion should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a text payload")
}

/// The fields of a `KernelPanic`, or a failure naming what came instead.
struct Panic {
    kernel: String,
    file: String,
    line: u32,
    block: [u32; 3],
    thread: [u32; 3],
    message: String,
}

fn panic_of(result: gpu_dsl::runtime::Result<()>) -> Panic {
    match result {
        Err(Error::KernelPanic {
            kernel,
            file,
            line,
            block,
            thread,
            message,
        }) => Panic {
            kernel,
            file,
            line,
            block,
            thread,
            message,
        },
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
}

#[kernel]
fn row_lengths(lengths: &[u32], n: u32, out: &mut [u32]) {
    let i = global_idx().x;
    if i < lengths.len() {
        let len = lengths[i];
        assert!(len == n, "row {} has {} elements", i, len);
        out[i] = len * 2;
    }
}

/// A failing `assert!` reports the kernel, file, line, block, thread and Rust's formatting of
/// the message, in checked and unchecked launches alike; the other threads finish.
#[test]
fn assert_reports_where_and_what() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let n = 7u32;
    let mut host = vec![n; 300];
    host[113] = 5;
    let lengths = DeviceBuffer::from_host(&stream, &host).unwrap();
    for checked in [false, true] {
        let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
        let config = LaunchConfig::for_len(host.len(), 32).checked(checked);
        row_lengths::launch(&stream, config, &lengths, n, &mut out).unwrap();
        let panic = panic_of(stream.synchronize());
        assert_eq!(panic.kernel, "row_lengths");
        assert_eq!(panic.file, "tests/diagnostics.rs");
        assert_eq!(
            panic.line,
            line_of(r#"assert!(len == n, "row {} has {} elements", i, len);"#)
        );
        assert_eq!(panic.block, [113 / 32, 0, 0], "checked {checked}");
        assert_eq!(panic.thread, [113 % 32, 0, 0]);
        assert_eq!(
            panic.message,
            format!("row {} has {} elements", 113usize, 5u32)
        );
        let text = Error::KernelPanic {
            kernel: panic.kernel,
            file: panic.file,
            line: panic.line,
            block: panic.block,
            thread: panic.thread,
            message: panic.message,
        }
        .to_string();
        assert_eq!(
            text,
            format!(
                "kernel `row_lengths` panicked at tests/diagnostics.rs:{} in block (3, 0, 0) \
                 thread (17, 0, 0): row 113 has 5 elements",
                panic.line
            )
        );
        // The other threads ran to the end; the failing one stopped at the assertion.
        let got = out.to_host(&stream).unwrap();
        for (i, (&g, &len)) in got.iter().zip(&host).enumerate() {
            assert_eq!(g, if i == 113 { 0 } else { len * 2 }, "i={i}");
        }
        // Reported once.
        stream.synchronize().unwrap();
    }
}

#[kernel]
fn non_empty(lengths: &[u32], n: u32) {
    let i = global_idx().x;
    if i < lengths.len() {
        assert!(lengths[i] != 0, "row {i} is empty (n = {n:>3})");
    }
}

/// Variables named inline in the message (`{i}`) are recorded like arguments.
#[test]
fn inline_arguments_in_messages() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let mut host = vec![9u32; 40];
    host[39] = 0;
    let lengths = DeviceBuffer::from_host(&stream, &host).unwrap();
    non_empty::launch(&stream, LaunchConfig::for_len(40, 32), &lengths, 0).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!((panic.block, panic.thread), ([1, 0, 0], [7, 0, 0]));
    assert_eq!(
        panic.line,
        line_of(r#"assert!(lengths[i] != 0, "row {i} is empty (n = {n:>3})");"#)
    );
    let (i, n) = (39usize, 0u32);
    assert_eq!(panic.message, format!("row {i} is empty (n = {n:>3})"));
}

/// A passing assertion changes nothing: the same results, and no error.
#[test]
fn passing_assertions_are_silent() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let host = vec![4u32; 1000];
    let lengths = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    row_lengths::launch(
        &stream,
        LaunchConfig::for_len(host.len(), 128),
        &lengths,
        4,
        &mut out,
    )
    .unwrap();
    stream.synchronize().unwrap();
    let expected: Vec<u32> = host.iter().map(|x| x * 2).collect();
    assert_eq!(out.to_host(&stream).unwrap(), expected);
}

#[device]
fn checked_pair(a: i32, b: i32) -> i32 {
    assert_eq!(a, b, "pair at {}", a);
    a + b
}

#[device]
fn checked_distinct(a: f32, b: f32) -> f32 {
    assert_ne!(a, b);
    a - b
}

#[device]
fn never_negative(x: i64) -> i64 {
    if x < 0 {
        panic!("negative input {} (hex {:x})", x, x);
    }
    if x == 1000 {
        todo!();
    }
    in_range(x)
}

/// Ends in a panic rather than a value.
#[device]
fn in_range(x: i64) -> i64 {
    if x <= 1000 {
        return x;
    }
    unreachable!("{x} is out of range");
}

#[kernel]
fn pairs(a: &[i32], b: &[i32], f: &[f32], x: &[i64], out: &mut [i64]) {
    let i = global_idx().x;
    if i < out.len() {
        let s = checked_pair(a[i], b[i]) as i64;
        let d = checked_distinct(f[i], f[i] + 1.0) as i64;
        out[i] = s + d + never_negative(x[i]);
    }
}

/// `assert_eq!`, `assert_ne!` and `panic!` in device functions word their messages as Rust
/// does and name the device function's line and the failing thread.
#[test]
fn assertions_in_device_functions() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let n = 64;
    let run = |a: &[i32], f: &[f32], x: &[i64]| {
        let a_buf = DeviceBuffer::from_host(&stream, a).unwrap();
        let b_buf = DeviceBuffer::from_host(&stream, &vec![3i32; n]).unwrap();
        let f_buf = DeviceBuffer::from_host(&stream, f).unwrap();
        let x_buf = DeviceBuffer::from_host(&stream, x).unwrap();
        let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
        pairs::launch(
            &stream,
            LaunchConfig::for_len(n, 32),
            &a_buf,
            &b_buf,
            &f_buf,
            &x_buf,
            &mut out,
        )
        .unwrap();
        stream.synchronize().map(|()| out.to_host(&stream).unwrap())
    };
    let good_a = vec![3i32; n];
    let good_f = vec![0.5f32; n];
    let good_x: Vec<i64> = (0..n as i64).collect();
    let out = run(&good_a, &good_f, &good_x).unwrap();
    let expected: Vec<i64> = good_x.iter().map(|x| 6 + (-1.0f32) as i64 + x).collect();
    assert_eq!(out, expected);

    let mut bad_a = good_a.clone();
    bad_a[40] = 9;
    let panic = panic_of(run(&bad_a, &good_f, &good_x).map(|_| ()));
    assert_eq!(panic.kernel, "pairs");
    assert_eq!(panic.line, line_of(r#"assert_eq!(a, b, "pair at {}", a);"#));
    assert_eq!((panic.block, panic.thread), ([1, 0, 0], [8, 0, 0]));
    let (a, b) = (9i32, 3i32);
    assert_eq!(
        panic.message,
        rust_panic_message(move || assert_eq!(a, b, "pair at {}", a))
    );

    // f + 1.0 == f only where the float cannot tell them apart.
    let mut bad_f = good_f.clone();
    bad_f[5] = 1.0e9;
    let panic = panic_of(run(&good_a, &bad_f, &good_x).map(|_| ()));
    assert_eq!(panic.line, line_of("assert_ne!(a, b);"));
    assert_eq!((panic.block, panic.thread), ([0, 0, 0], [5, 0, 0]));
    let (fa, fb) = (1.0e9f32, 1.0e9f32 + 1.0);
    assert_eq!(
        panic.message,
        rust_panic_message(move || assert_ne!(fa, fb))
    );

    let mut bad_x = good_x.clone();
    bad_x[63] = -42;
    let panic = panic_of(run(&good_a, &good_f, &bad_x).map(|_| ()));
    assert_eq!(
        panic.line,
        line_of(r#"panic!("negative input {} (hex {:x})", x, x);"#)
    );
    assert_eq!((panic.block, panic.thread), ([1, 0, 0], [31, 0, 0]));
    let x = -42i64;
    assert_eq!(panic.message, format!("negative input {} (hex {:x})", x, x));

    // `unreachable!` and `todo!` say what Rust says.
    for (x, rust) in [
        (
            1001i64,
            rust_panic_message(|| unreachable!("{} is out of range", 1001i64)),
        ),
        (1000, rust_panic_message(|| todo!())),
    ] {
        let mut bad_x = good_x.clone();
        bad_x[3] = x;
        let panic = panic_of(run(&good_a, &good_f, &bad_x).map(|_| ()));
        assert_eq!(panic.thread, [3, 0, 0]);
        assert_eq!(panic.message, rust);
    }
}

#[kernel]
fn in_range(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        debug_assert!(x[i] >= 0.0 && x[i] <= 1.0);
        out[i] = x[i].sqrt();
    }
}

/// `debug_assert!` is compiled into checked launches only; its default message is Rust's.
#[test]
fn debug_assert_only_in_checked_launches() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let host = vec![0.25f32, 0.5, 2.0, 1.0];
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    let config = LaunchConfig::for_len(host.len(), 32);
    in_range::launch(&stream, config.checked(false), &x, &mut out).unwrap();
    stream.synchronize().unwrap();
    let expected: Vec<f32> = host.iter().map(|v| v.sqrt()).collect();
    assert_eq!(out.to_host(&stream).unwrap(), expected);

    in_range::launch(&stream, config.checked(true), &x, &mut out).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!(
        panic.line,
        line_of("debug_assert!(x[i] >= 0.0 && x[i] <= 1.0);")
    );
    assert_eq!(panic.thread, [2, 0, 0]);
    let x = [2.0f32];
    let i = 0;
    assert_eq!(
        panic.message,
        rust_panic_message(move || assert!(x[i] >= 0.0 && x[i] <= 1.0))
    );
}

#[kernel]
fn debug_only_value(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        let doubled = x[i] * 2.0;
        debug_assert!(doubled >= 0.0, "doubled {doubled}");
        debug_assert_eq!(x[i], x[i]);
        out[i] = x[i];
    }
}

#[kernel]
fn gather_2d(indices: &[u32], x: &[f32], out: &mut [f32]) {
    let i = (block_idx().y * grid_dim().x + block_idx().x) as usize * 64
        + (thread_idx().y * 32 + thread_idx().x) as usize;
    if i < out.len() {
        out[i] = x[indices[i] as usize];
    }
}

/// Index panics name the failing thread's block and thread too, in every dimension.
#[test]
fn index_panics_name_block_and_thread() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let n = 4 * 64;
    let mut host: Vec<u32> = (0..n as u32).map(|i| i % 10).collect();
    // Block (1, 1): linear block 3; thread (5, 1): 37 in the block.
    host[3 * 64 + 37] = 10;
    let indices = DeviceBuffer::from_host(&stream, &host).unwrap();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32; 10]).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, n).unwrap();
    let config = LaunchConfig::new(Grid::xy(2, 2), Block::xy(32, 2)).checked(true);
    gather_2d::launch(&stream, config, &indices, &x, &mut out).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!(panic.line, line_of("out[i] = x[indices[i] as usize];"));
    assert_eq!((panic.block, panic.thread), ([1, 1, 0], [5, 1, 0]));
    assert_eq!(
        panic.message,
        "index out of bounds: the len is 10 but the index is 10"
    );
}

#[kernel]
fn bounded<T: Number>(x: &[T], limit: T, out: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        assert!(x[i] <= limit, "x[{}] = {:?} exceeds {:?}", i, x[i], limit);
        out[i] = x[i];
    }
}

/// A generic kernel's assertion records values of its type parameter.
#[test]
fn assertions_in_generic_kernels() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let mut host: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    host[77] = 1.0e6;
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    bounded::launch::<f32>(&stream, LaunchConfig::for_len(100, 64), &x, 60.0, &mut out).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!(panic.kernel, "bounded::<f32>");
    assert_eq!((panic.block, panic.thread), ([1, 0, 0], [13, 0, 0]));
    assert_eq!(
        panic.message,
        format!("x[{}] = {:?} exceeds {:?}", 77usize, 1.0e6f32, 60.0f32)
    );

    let host: Vec<i64> = (0..100).map(|i| i - 50).collect();
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, host.len()).unwrap();
    bounded::launch::<i64>(&stream, LaunchConfig::for_len(100, 64), &x, 48, &mut out).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!(panic.thread, [35, 0, 0]);
    assert_eq!(
        panic.message,
        format!("x[{}] = {:?} exceeds {:?}", 99usize, 49i64, 48i64)
    );
}

#[kernel]
fn block_sums(x: &[u32], out: &mut [u32]) {
    let tile = shared_array::<u32, 64>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    tile[t] = x[i];
    assert_ne!(x[i], 0u32, "zero at {}", i);
    sync_threads();
    if t == 0 {
        let mut sum = 0u32;
        for j in 0..64 {
            sum += tile[j];
        }
        out[block_idx().x as usize] = sum;
    }
}

/// A thread that fails before a barrier ends there; the others pass the barrier without it.
#[test]
fn failed_threads_leave_barriers() {
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    let mut host = vec![1u32; 256];
    host[130] = 0;
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut out = DeviceBuffer::zeroed(&stream, 4).unwrap();
    block_sums::launch(&stream, LaunchConfig::for_len(256, 64), &x, &mut out).unwrap();
    let panic = panic_of(stream.synchronize());
    assert_eq!((panic.block, panic.thread), ([2, 0, 0], [2, 0, 0]));
    let (a, b) = (0u32, 0u32);
    assert_eq!(
        panic.message,
        rust_panic_message(move || assert_ne!(a, b, "zero at {}", 130usize))
    );
    // Blocks without the failing thread are whole; block 2 summed what was in shared memory.
    let sums = out.to_host(&stream).unwrap();
    assert_eq!([sums[0], sums[1], sums[3]], [64, 64, 64]);
}

#[kernel]
fn print_values(a: i32, b: u32, c: u64, x: f32, y: f64, flag: bool) {
    if global_idx().x == 0 {
        println!("diag-print ints {} {} {} {:?}", a, b, c, a);
        println!("diag-print hex {:x} {:X} {:#x} {:08x}", b, b, b, a);
        println!(
            "diag-print widths [{:5}] [{:<5}] [{:>6}] [{:+}] [{:04}]",
            a, b, c, a, b
        );
        println!("diag-print floats {:.3} {:.0} {:8.2} {:<8.1}|", x, y, x, y);
        println!(
            "diag-print bools {} {:?} [{:6}] [{:>6}]",
            flag, !flag, flag, flag
        );
        println!("diag-print braces {{{}}} 100%", a);
        print!("diag-print no newline {}", b);
        println!();
        println!("diag-print captured {a} {b:>6} {0} {a:x}", c);
        println!("diag-print shortest {} {:?} {:e}", x, y, y);
    }
}

/// The lines `print_values` prints, as Rust formats them; `exact` leaves out those the GPU's
/// printf words differently (shortest float digits and exponents, see docs/LANGUAGE.md).
fn expected_print(exact: bool) -> Vec<String> {
    let (a, b, c, x, y, flag) = (-42i32, 3054u32, 1u64 << 40, 2.34567f32, 1.61803f64, true);
    let mut lines = vec![
        format!("diag-print ints {} {} {} {:?}", a, b, c, a),
        format!("diag-print hex {:x} {:X} {:#x} {:08x}", b, b, b, a),
        format!(
            "diag-print widths [{:5}] [{:<5}] [{:>6}] [{:+}] [{:04}]",
            a, b, c, a, b
        ),
        format!("diag-print floats {:.3} {:.0} {:8.2} {:<8.1}|", x, y, x, y),
        format!(
            "diag-print bools {} {:?} [{:6}] [{:>6}]",
            flag, !flag, flag, flag
        ),
        format!("diag-print braces {{{}}} 100%", a),
        format!("diag-print no newline {}", b),
        format!("diag-print captured {a} {b:>6} {0} {a:x}", c),
    ];
    if !exact {
        lines.push(format!("diag-print shortest {} {:?} {:e}", x, y, y));
    }
    lines
}

/// Run as a child process by `println_prints_what_rust_prints` (stdout cannot be captured
/// in-process from the CPU backend's worker threads); does nothing otherwise.
#[test]
fn print_child() {
    if std::env::var_os("GPU_DIAG_PRINT_CHILD").is_none() {
        return;
    }
    let (_lock, gpu) = exclusive_device();
    let stream = gpu.new_stream().unwrap();
    print_values::launch(
        &stream,
        LaunchConfig::for_len(1, 1),
        -42,
        3054,
        1 << 40,
        2.34567,
        1.61803,
        true,
    )
    .unwrap();
    stream.synchronize().unwrap();
}

/// What `print_child` prints on `backend` (`None`: the default device), its marked lines.
fn printed_by_child(backend: Option<&str>) -> Vec<String> {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "print_child", "--nocapture", "--test-threads=1"])
        .env("GPU_DIAG_PRINT_CHILD", "1");
    if let Some(backend) = backend {
        command.env("GPU_BACKEND", backend);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The harness's own `test print_child ... ` may share the first printed line.
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.find("diag-print").map(|at| l[at..].to_string()))
        .collect()
}

/// `println!`/`print!` print Rust's text on the CPU backend, and on a GPU the same text for
/// every format but the shortest float forms.
#[test]
fn println_prints_what_rust_prints() {
    assert_eq!(printed_by_child(Some("cpu")), expected_print(false));
    if test_device().backend() == Backend::Cuda {
        let printed = printed_by_child(None);
        let exact = expected_print(true);
        assert_eq!(&printed[..exact.len()], &exact[..]);
    }
}

#[test]
fn compiles_with_nvrtc() {
    common::assert_compiles_with_nvrtc(&[
        (&row_lengths::KERNEL, &[]),
        (&pairs::KERNEL, &[]),
        (&in_range::KERNEL, &[]),
        (&gather_2d::KERNEL, &[]),
        (&print_values::KERNEL, &[]),
        (&non_empty::KERNEL, &[]),
        (&debug_only_value::KERNEL, &[]),
        (&bounded::KERNEL, &[TemplateArg::of::<f32>()]),
        (&bounded::KERNEL, &[TemplateArg::of::<u32>()]),
        (&block_sums::KERNEL, &[]),
    ]);
}
