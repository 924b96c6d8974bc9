//! Values computed by statements, as Rust writes them: a block with `let`s before its value,
//! `if` and `match` arms that run statements, `loop { .. break v }`, `let x;` assigned later,
//! in `let`s, assignments, `return`s, device functions' final values and closures, on every
//! backend at hand, against the same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends};
use gpu_dsl::prelude::*;

/// The Collatz steps of `n` (at most 1000), through `loop { .. break v }`.
#[device]
fn collatz_steps(n: u32) -> u32 {
    let mut v = n.max(1);
    let mut steps = 0u32;
    loop {
        if v == 1 || steps == 1000 {
            break steps;
        }
        v = if v % 2 == 0 {
            v / 2
        } else {
            let up = v.wrapping_mul(3);
            up.wrapping_add(1)
        };
        steps += 1;
    }
}

/// A device function whose final `if` runs statements in both arms, and whose early
/// `return` is a block.
#[device]
fn shaped(x: i32) -> i32 {
    if x < -50 {
        return {
            let a = x.wrapping_mul(2);
            a - 1
        };
    }
    if x % 3 == 0 {
        let q = x / 3;
        q * q
    } else {
        let r = x % 3;
        let s = r + 7;
        s * x
    }
}

#[kernel]
fn value_blocks(x: &[i32], out: &mut [i32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    // An arm that leaves by a panic has no value to give.
    let v = if x[i] > -10_000 { x[i] } else { unreachable!() };
    // A block with statements before its value.
    let doubled = {
        let t = v.wrapping_mul(2);
        t + 1
    };
    // `match` arms running statements, one leaving by `panic!` (never reached: v % 4 < 4).
    let kind = match v.rem_euclid(4) {
        0 => {
            let h = v / 2;
            h + 10
        }
        1 | 2 => v - 3,
        3 => {
            let mut acc = 0i32;
            for k in 0..3 {
                acc += k * v;
            }
            acc
        }
        _ => panic!("a remainder by 4 is below 4"),
    };
    // `let x;` assigned on both paths, and an else-if chain with statements.
    let sign;
    if v < 0 {
        sign = -1;
    } else {
        sign = 1;
    }
    let band = if v < -20 {
        let t = v + 20;
        t * 2
    } else if v < 20 {
        v
    } else {
        let t = v - 20;
        t / 2
    };
    // A labelled `loop` left from an inner loop with its value.
    let first_multiple = 'search: loop {
        for k in 1..50i32 {
            if (v.wrapping_mul(k)).rem_euclid(7) == 3 {
                break 'search k;
            }
        }
        break 0;
    };
    // An assignment and a compound assignment whose values run statements.
    let mut total = 0i32;
    total += {
        let t = doubled ^ kind;
        t & 0xff
    };
    total = if total > 100 {
        let t = total - 100;
        t * 3
    } else {
        total
    };
    // A closure whose value is an `if` with statements.
    let clip = |a: i32| {
        if a > 1000 {
            let over = a - 1000;
            1000 + over / 10
        } else {
            a
        }
    };
    out[i] = clip(total)
        .wrapping_add(sign * band)
        .wrapping_add(first_multiple)
        .wrapping_add(shaped(v))
        .wrapping_add(collatz_steps(v.unsigned_abs()) as i32);
}

fn collatz_steps_host(n: u32) -> u32 {
    let mut v = n.max(1);
    let mut steps = 0u32;
    loop {
        if v == 1 || steps == 1000 {
            break steps;
        }
        v = if v.is_multiple_of(2) {
            v / 2
        } else {
            let up = v.wrapping_mul(3);
            up.wrapping_add(1)
        };
        steps += 1;
    }
}

fn shaped_host(x: i32) -> i32 {
    if x < -50 {
        return {
            let a = x.wrapping_mul(2);
            a - 1
        };
    }
    if x % 3 == 0 {
        let q = x / 3;
        q * q
    } else {
        let r = x % 3;
        let s = r + 7;
        s * x
    }
}

#[allow(clippy::never_loop)]
fn value_blocks_host(v: i32) -> i32 {
    let doubled = {
        let t = v.wrapping_mul(2);
        t + 1
    };
    let kind = match v.rem_euclid(4) {
        0 => {
            let h = v / 2;
            h + 10
        }
        1 | 2 => v - 3,
        3 => {
            let mut acc = 0i32;
            for k in 0..3 {
                acc += k * v;
            }
            acc
        }
        _ => panic!("a remainder by 4 is below 4"),
    };
    let sign = if v < 0 { -1 } else { 1 };
    let band = if v < -20 {
        let t = v + 20;
        t * 2
    } else if v < 20 {
        v
    } else {
        let t = v - 20;
        t / 2
    };
    let first_multiple = 'search: loop {
        for k in 1..50i32 {
            if (v.wrapping_mul(k)).rem_euclid(7) == 3 {
                break 'search k;
            }
        }
        break 0;
    };
    let mut total = 0i32;
    total += {
        let t = doubled ^ kind;
        t & 0xff
    };
    total = if total > 100 {
        let t = total - 100;
        t * 3
    } else {
        total
    };
    let clip = |a: i32| {
        if a > 1000 {
            let over = a - 1000;
            1000 + over / 10
        } else {
            a
        }
    };
    clip(total)
        .wrapping_add(sign * band)
        .wrapping_add(first_multiple)
        .wrapping_add(shaped_host(v))
        .wrapping_add(collatz_steps_host(v.unsigned_abs()) as i32)
}

#[test]
fn values_computed_by_statements_match_rust() {
    let x: Vec<i32> = (-300..300).map(|v| v * 7 % 389).collect();
    let expected: Vec<i32> = x.iter().map(|&v| value_blocks_host(v)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, x.len()).unwrap();
        value_blocks::launch(&stream, LaunchConfig::for_len(x.len(), 128), &dx, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// Struct and tuple values computed by statements, and `mem::swap`.
#[device]
#[derive(Clone, Copy)]
#[repr(C)]
struct Span2 {
    lo: f32,
    hi: f32,
}

#[kernel]
fn struct_and_tuple_values(x: &[f32], out: &mut [f32]) {
    let i = thread_idx().x as usize;
    let s = if x[i] < 0.0 {
        let m = -x[i];
        Span2 { lo: x[i], hi: m }
    } else {
        let m = x[i] * 0.5;
        Span2 { lo: m, hi: x[i] }
    };
    let (mut a, mut b) = {
        let w = s.hi - s.lo;
        (w, w * w)
    };
    if a > b {
        core::mem::swap(&mut a, &mut b);
    }
    out[i] = a + 2.0 * b;
}

#[test]
fn struct_and_tuple_values_match_rust() {
    let x: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) * 0.25).collect();
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| {
            let (lo, hi) = if v < 0.0 { (v, -v) } else { (v * 0.5, v) };
            let w = hi - lo;
            let (a, b) = if w > w * w { (w * w, w) } else { (w, w * w) };
            a + 2.0 * b
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 64).unwrap();
        struct_and_tuple_values::launch(&stream, LaunchConfig::for_len(64, 64), &dx, &mut out)
            .unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

#[test]
fn value_blocks_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&value_blocks::KERNEL, &[]),
        (&struct_and_tuple_values::KERNEL, &[]),
        (&guarded_matches::KERNEL, &[]),
    ]);
}

const LIMIT: i32 = 40;

/// `match` arms that bind the value and carry guards, as a value and as a statement.
#[kernel]
fn guarded_matches(x: &[i32], out: &mut [i32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let class = match v {
        n if n < -LIMIT => -n * 2,
        0 => 1,
        small @ 1..=9 => small + 100,
        LIMIT => 7,
        n if n % 2 == 0 => {
            let half = n / 2;
            half + 1000
        }
        n => n - 3,
    };
    let mut extra = 0i32;
    match v.rem_euclid(5) {
        0 | 1 => extra += 1,
        r if r == 3 => {
            extra += r * 10;
        }
        other => extra -= other,
    }
    out[i] = class + extra;
}

fn guarded_matches_host(v: i32) -> i32 {
    let class = match v {
        n if n < -LIMIT => -n * 2,
        0 => 1,
        small @ 1..=9 => small + 100,
        LIMIT => 7,
        n if n % 2 == 0 => {
            let half = n / 2;
            half + 1000
        }
        n => n - 3,
    };
    let mut extra = 0i32;
    match v.rem_euclid(5) {
        0 | 1 => extra += 1,
        r if r == 3 => {
            extra += r * 10;
        }
        other => extra -= other,
    }
    class + extra
}

#[test]
fn guarded_matches_match_rust() {
    let x: Vec<i32> = (-120..120).collect();
    let expected: Vec<i32> = x.iter().map(|&v| guarded_matches_host(v)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, x.len()).unwrap();
        guarded_matches::launch(&stream, LaunchConfig::for_len(x.len(), 64), &dx, &mut out)
            .unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
}

/// Shadowing, leaving a value-computing `if` by `return`, a labelled `while` left from inside
/// a `loop` value, `let x;` assigned once inside a loop, nested guarded matches reusing a
/// binding's name, and a compound assignment of a guarded match.
#[kernel]
fn value_edges(x: &[i32], out: &mut [i32]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let s = v;
    let s = {
        let s = s + 1;
        s * 2
    };
    let skip = if v % 7 == 3 {
        out[i] = -1;
        return;
    } else {
        v % 5
    };
    let mut found = 0i32;
    let mut rounds = 0i32;
    'rounds: while rounds < 3 {
        rounds += 1;
        let step = loop {
            if v < -50 {
                break 'rounds;
            }
            break rounds * 2;
        };
        found += step;
    }
    let first_even;
    let mut k = 0i32;
    loop {
        if (v + k) % 2 == 0 {
            first_even = v + k;
            break;
        }
        k += 1;
    }
    let mut acc = s + skip + found + first_even;
    acc += match v {
        n if n < 0 => match n {
            n if n < -40 => n * 3,
            n => n - 1,
        },
        n => n / 2,
    };
    out[i] = acc;
}

#[allow(clippy::never_loop)]
fn value_edges_host(v: i32) -> i32 {
    let s = v;
    let s = {
        let s = s + 1;
        s * 2
    };
    let skip = if v % 7 == 3 {
        return -1;
    } else {
        v % 5
    };
    let mut found = 0i32;
    let mut rounds = 0i32;
    'rounds: while rounds < 3 {
        rounds += 1;
        let step = loop {
            if v < -50 {
                break 'rounds;
            }
            break rounds * 2;
        };
        found += step;
    }
    let first_even;
    let mut k = 0i32;
    loop {
        if (v + k) % 2 == 0 {
            first_even = v + k;
            break;
        }
        k += 1;
    }
    let mut acc = s + skip + found + first_even;
    acc += match v {
        n if n < 0 => match n {
            n if n < -40 => n * 3,
            n => n - 1,
        },
        n => n / 2,
    };
    acc
}

#[test]
fn value_edges_match_rust() {
    let x: Vec<i32> = (-100..100).collect();
    let expected: Vec<i32> = x.iter().map(|&v| value_edges_host(v)).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<i32>::zeroed(&stream, x.len()).unwrap();
        value_edges::launch(&stream, LaunchConfig::for_len(x.len(), 64), &dx, &mut out).unwrap();
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
    assert_compiles_with_nvrtc(&[(&value_edges::KERNEL, &[])]);
}

/// A tuple struct: built as `Pair(a, b)` and `Self(..)`, read and written as `.0`, `.1` (in a
/// slice's element too), and a local tuple's field written.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Pair(f32, u32);

#[device]
impl Pair {
    pub fn doubled(self) -> Pair {
        Self(self.0 * 2.0, self.1 + 1)
    }
}

#[kernel]
fn tuple_structs(x: &[f32], pairs: &mut [Pair], out: &mut [f32]) {
    let i = thread_idx().x as usize;
    if i < x.len() {
        let p = Pair(x[i], i as u32).doubled();
        pairs[i] = p;
        pairs[i].1 += 10;
        let mut local = Pair(0.0, 0);
        local.0 = p.0 * 0.5;
        let mut t = (1u32, 2u32);
        t.1 += local.1;
        local.1 = t.1 - 2;
        out[i] = pairs[i].0 * 0.5 + local.0 + pairs[i].1 as f32 + local.1 as f32;
    }
}

#[test]
fn tuple_structs_match_rust() {
    let x: Vec<f32> = (0..40).map(|i| i as f32 * 0.5).collect();
    let expected_pairs: Vec<Pair> = (0..40).map(|i| Pair(x[i] * 2.0, i as u32 + 11)).collect();
    let expected: Vec<f32> = expected_pairs.iter().map(|p| p.0 + p.1 as f32).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut pairs = DeviceBuffer::<Pair>::zeroed(&stream, 40).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&stream, 40).unwrap();
        tuple_structs::launch(
            &stream,
            LaunchConfig::for_len(40, 64),
            &dx,
            &mut pairs,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            pairs.to_host(&stream).unwrap(),
            expected_pairs,
            "{}",
            gpu.name()
        );
        assert_eq!(out.to_host(&stream).unwrap(), expected, "{}", gpu.name());
    }
    assert_compiles_with_nvrtc(&[(&tuple_structs::KERNEL, &[])]);
}
