//! `#[device]` types as Rust programs use them: `#[derive(Default)]` and `T::default()` for an
//! accumulator (numbers, `bool`, arrays, a nested struct and a tuple struct), and associated
//! constants of the type's own type (`Bounds::EMPTY`), on every backend at hand, against the
//! same code run as plain Rust.

mod common;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;

/// A running minimum and maximum.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Bounds(pub f32, pub f32);

#[device]
impl Bounds {
    /// The bounds of nothing: every value lowers the first and raises the second.
    pub const EMPTY: Bounds = Bounds(f32::INFINITY, f32::NEG_INFINITY);
}

/// A histogram row's accumulator.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Stats {
    pub sum: f32,
    pub count: u32,
    pub bins: [u32; 4],
    pub seen_negative: bool,
    pub bounds: Bounds,
}

#[device]
impl Stats {
    /// Adds one value.
    pub fn add(&mut self, v: f32) {
        if self.count == 0 {
            self.bounds = Bounds(v, v);
        }
        self.sum += v;
        self.count += 1;
        self.bins[((v + 1.0) * 2.0).clamp(0.0, 3.0) as usize] += 1;
        self.seen_negative = self.seen_negative || v < 0.0;
        self.bounds = Bounds(self.bounds.0.min(v), self.bounds.1.max(v));
    }
}

/// Each thread's stats over a stride of `x`, from `Stats::default()`.
#[kernel]
fn strided_stats(x: &[f32], stride: usize, out: &mut [Stats]) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= out.len() {
        return;
    }
    let mut s = Stats::default();
    let empty = Bounds::default();
    let mut k = i;
    while k < x.len() {
        s.add(x[k]);
        k += stride;
    }
    if s.count == 0 {
        s.bounds = empty;
    }
    let none: Bounds = Bounds::EMPTY;
    s.sum += (none.0 > 1e30) as u32 as f32 - 0.25 * (none.1 < -1e30) as u32 as f32;
    out[i] = s;
}

fn strided_stats_host(x: &[f32], stride: usize, i: usize) -> Stats {
    let mut s = Stats::default();
    let empty = Bounds::default();
    let mut k = i;
    while k < x.len() {
        s.add(x[k]);
        k += stride;
    }
    if s.count == 0 {
        s.bounds = empty;
    }
    let none: Bounds = Bounds::EMPTY;
    s.sum += (none.0 > 1e30) as u32 as f32 - 0.25 * (none.1 < -1e30) as u32 as f32;
    s
}

#[test]
fn derived_defaults_match_rust() {
    let (n, threads) = (50, 64);
    let x = random_f32(n, 40);
    let expected: Vec<Stats> = (0..threads)
        .map(|i| strided_stats_host(&x, threads, i))
        .collect();
    // The last threads see no element: all but the constant's mark is the default.
    let last = expected[threads - 1];
    assert!(Stats { sum: 0.0, ..last } == Stats::default() && last.sum == 0.75);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut out = DeviceBuffer::<Stats>::from_host(
            &stream,
            &vec![
                Stats {
                    count: 7,
                    ..Stats::default()
                };
                threads
            ],
        )
        .unwrap();
        let config = LaunchConfig::for_len(threads, 32);
        strided_stats::launch(&stream, config, &dx, threads, &mut out).unwrap();
        let got = out.to_host(&stream).unwrap();
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(
                (g.count, g.bins, g.seen_negative),
                (e.count, e.bins, e.seen_negative)
            );
            close(
                &[g.sum, g.bounds.0, g.bounds.1],
                &[e.sum, e.bounds.0, e.bounds.1],
                1e-6,
            );
        }
    }
}

#[test]
fn user_type_idioms_compile_with_nvrtc() {
    assert_compiles_with_nvrtc(&[(&strided_stats::KERNEL, &[])]);
}

/// A running sum and count, added by `+=`.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Tally {
    pub sum: f32,
    pub count: u32,
}

#[device]
impl core::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.sum += o.sum;
        self.count += o.count;
    }
}

/// `+=` of a user type on elements of shared memory (a tree over a block) and of a slice.
#[kernel]
fn tally_tree(x: &[f32], totals: &mut [Tally]) {
    let partial = shared_array::<Tally, 64>();
    let t = thread_idx().x as usize;
    let i = global_idx().x;
    partial[t] = if i < x.len() {
        Tally {
            sum: x[i],
            count: 1,
        }
    } else {
        Tally::default()
    };
    sync_threads();
    let mut stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        totals[block_idx().x as usize] += partial[0];
    }
}

#[test]
fn operator_assignment_of_a_user_type_writes_elements_of_memory() {
    assert_compiles_with_nvrtc(&[(&tally_tree::KERNEL, &[])]);
    let n = 300usize;
    let x = random_f32(n, 41);
    let blocks = n.div_ceil(64);
    // Each block's total lands on a start of 1.0 and one count.
    let start = vec![Tally { sum: 1.0, count: 1 }; blocks];
    let expected: Vec<Tally> = x
        .chunks(64)
        .map(|c| Tally {
            sum: 1.0 + c.iter().sum::<f32>(),
            count: 1 + c.len() as u32,
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let xs = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut totals = DeviceBuffer::from_host(&stream, &start).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(64));
        tally_tree::launch(&stream, config, &xs, &mut totals).unwrap();
        let got = totals.to_host(&stream).unwrap();
        let counts: Vec<u32> = got.iter().map(|t| t.count).collect();
        let expected_counts: Vec<u32> = expected.iter().map(|t| t.count).collect();
        assert_eq!(counts, expected_counts, "{}", gpu.name());
        let sums: Vec<f32> = got.iter().map(|t| t.sum).collect();
        let expected_sums: Vec<f32> = expected.iter().map(|t| t.sum).collect();
        close(&sums, &expected_sums, 1e-5);
    }
}
