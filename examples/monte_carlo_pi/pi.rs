//! The kernel of `monte_carlo_pi` and its host side, shared with `tests/monte_carlo_pi.rs`.
//!
//! Each thread draws `pairs` Philox4x32-10 blocks of four words, two points each, from its own
//! counter (thread, draw, batch) under a key made of the seed, and counts the points inside the
//! quarter circle. The test of a point is exact integer arithmetic, so the GPU, the CPU backend
//! and the host twin of Philox count the same hits for the same seed.

use gpu_dsl::kernels::reduce;
use gpu_dsl::prelude::*;

/// Threads per block of [`count_hits`].
pub const BLOCK: u32 = 256;

/// 1 when the point of two random words lies inside the quarter circle, else 0.
///
/// The coordinates are the top 24 bits of each word, taken at the middle of their cell:
/// `(2x + 1) / 2^25`. Comparing `(2x + 1)² + (2y + 1)²` with `2^50` in `u64` decides exactly,
/// where the float test `x² + y² < 1` could flip on the boundary between a GPU, which contracts
/// it to an FMA, and the CPU.
#[device]
pub fn inside(a: u32, b: u32) -> u32 {
    let x = ((a >> 8) as u64) * 2 + 1;
    let y = ((b >> 8) as u64) * 2 + 1;
    if x * x + y * y < (1u64 << 50) {
        1
    } else {
        0
    }
}

/// [`inside`] on the host: a `#[device]` function is callable from kernels only.
pub fn inside_host(a: u32, b: u32) -> u32 {
    let x = u64::from(a >> 8) * 2 + 1;
    let y = u64::from(b >> 8) * 2 + 1;
    u32::from(x * x + y * y < 1 << 50)
}

/// Counts, per thread, the hits among `2 * pairs` points of batch `batch`, into `hits[thread]`.
#[kernel]
pub fn count_hits(seed_lo: u32, seed_hi: u32, batch: u32, pairs: u32, hits: &mut [u32]) {
    let t = global_idx().x;
    if t < hits.len() {
        let mut count = 0u32;
        for i in 0..pairs {
            let r = philox4x32_10(t as u32, i, batch, 0, seed_lo, seed_hi);
            count += inside(r[0], r[1]) + inside(r[2], r[3]);
        }
        hits[t] = count;
    }
}

/// The shape of a run: `batches` launches of `threads` threads drawing `2 * pairs` points each.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Threads per launch.
    pub threads: usize,
    /// Philox blocks (two points each) per thread and launch.
    pub pairs: u32,
    /// Launches; each has its own counter range.
    pub batches: u32,
    /// The key of the generator.
    pub seed: u64,
}

impl Plan {
    /// Points drawn by one launch.
    pub fn points_per_batch(&self) -> u64 {
        self.threads as u64 * 2 * u64::from(self.pairs)
    }

    /// Points drawn by the whole run.
    pub fn points(&self) -> u64 {
        self.points_per_batch() * u64::from(self.batches)
    }
}

/// Runs the plan on `stream` and returns the hits of all batches together.
///
/// A batch's hits are summed in `u32` by the reduce kernel, so a batch holds fewer than 2^32
/// points (checked); the batches are added on the host in `u64`.
pub fn count(stream: &Stream, plan: &Plan) -> gpu_dsl::Result<u64> {
    if plan.points_per_batch() >= 1 << 32 {
        return Err(gpu_dsl::Error::InvalidLaunch(format!(
            "monte_carlo_pi: {} points per batch overflow the u32 sum; use fewer threads or pairs",
            plan.points_per_batch()
        )));
    }
    let mut hits = DeviceBuffer::<u32>::zeroed(stream, plan.threads)?;
    let config = LaunchConfig::for_len(plan.threads, BLOCK);
    let (lo, hi) = (plan.seed as u32, (plan.seed >> 32) as u32);
    let mut total = 0u64;
    for batch in 0..plan.batches {
        count_hits::launch(stream, config, lo, hi, batch, plan.pairs, &mut hits)?;
        total += u64::from(reduce::sum(stream, &hits)?);
    }
    Ok(total)
}

/// The hits of threads `threads` of batch `batch`, counted on the host with the host twin of
/// Philox: what the kernel must have written for them.
pub fn host_hits(plan: &Plan, batch: u32, threads: std::ops::Range<usize>) -> Vec<u32> {
    let key = [plan.seed as u32, (plan.seed >> 32) as u32];
    threads
        .map(|t| {
            (0..plan.pairs)
                .map(|i| {
                    let r = gpu_dsl::runtime::random::philox4x32_10([t as u32, i, batch, 0], key);
                    inside_host(r[0], r[1]) + inside_host(r[2], r[3])
                })
                .sum()
        })
        .collect()
}

/// π estimated from `hits` of `points`, and its standard error: 4 × the binomial proportion's.
pub fn estimate(hits: u64, points: u64) -> (f64, f64) {
    let p = hits as f64 / points as f64;
    (4.0 * p, 4.0 * (p * (1.0 - p) / points as f64).sqrt())
}
