//! The twentieth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): Parboil's TPACF (a histogram of the angles between the points of a data
//! set and of random sets, a bin found by binary search over boundaries in shared memory and
//! counted with shared atomics), SHOC's MD (Lennard-Jones forces over a neighbour list, the
//! positions and forces as `#[device]` four-vectors), the CUDA samples' dwtHaar1D (a Haar
//! wavelet decomposition, a block per chunk of the signal, its levels in shared memory), and
//! Rodinia's particle filter's resampling (the weights normalised by a block-wide reduction and
//! their CDF, then each particle found by a linear search through the CDF).

use gpu_dsl::prelude::*;

/// Threads of a TPACF block, and the data points staged in shared memory at a time (Parboil's
/// `BLOCK_SIZE`).
pub const TPACF_THREADS: usize = 256;

/// Bins of the TPACF histogram, each between two neighbouring boundaries (Parboil's
/// `NUM_BINS`).
pub const TPACF_BINS: usize = 20;

/// A point of the sky as a unit vector (Parboil's `struct cartesian`).
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Cartesian {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Cartesian {
    /// The dot product, the cosine of the angle between two unit vectors.
    pub fn dot(self, o: Cartesian) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
}

/// Adds to `hist` the angular correlation of the data points with each random set, block `b`
/// taking the `b`-th set of `data.len()` points of `random` (Parboil's `gen_hists`): the data
/// points staged in shared memory a tile at a time, each thread taking every
/// `TPACF_THREADS`-th random point of its block's set, the bin of a pair's dot product found by
/// binary search over `bounds` (decreasing cosines, `TPACF_BINS + 1` of them, in shared memory),
/// counted in the block's histogram with shared atomics and added to `hist` at the end.
#[kernel]
pub fn tpacf_histogram(bounds: &[f32], data: &[Cartesian], random: &[Cartesian], hist: &mut [u32]) {
    let bins = shared_array::<f32, { TPACF_BINS + 1 }>();
    let counts = shared_array::<u32, TPACF_BINS>();
    let points = shared_array::<Cartesian, TPACF_THREADS>();
    let t = thread_idx().x as usize;
    let n = data.len();
    let set = block_idx().x as usize * n;
    if t <= TPACF_BINS {
        bins[t] = bounds[t];
    }
    if t < TPACF_BINS {
        counts[t] = 0;
    }
    sync_threads();
    for tile in (0..n).step_by(TPACF_THREADS) {
        if tile + t < n {
            points[t] = data[tile + t];
        }
        sync_threads();
        let in_tile = TPACF_THREADS.min(n - tile);
        for j in (t..n).step_by(TPACF_THREADS) {
            let r = random[set + j];
            for k in 0..in_tile {
                let d = points[k].dot(r);
                let (mut lo, mut hi) = (0, TPACF_BINS);
                while hi > lo + 1 {
                    let mid = (lo + hi) / 2;
                    if d >= bins[mid] {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                if d < bins[lo] && d >= bins[hi] {
                    counts.atomic_add(lo, 1);
                }
            }
        }
        sync_threads();
    }
    if t < TPACF_BINS {
        hist.atomic_add(t, counts[t]);
    }
}

/// TPACF's bin boundaries, Parboil's: five bins a decade of angle from 1 to 10,000 arcminutes,
/// as the cosines of those angles (so decreasing).
pub fn tpacf_bounds() -> Vec<f32> {
    (0..=TPACF_BINS)
        .map(|k| {
            let arcmin = 10f64.powf(k as f64 / 5.0);
            (arcmin / 60.0).to_radians().cos() as f32
        })
        .collect()
}

/// `n` points spread over the unit sphere from `noise` in [-1, 1), three numbers a point.
pub fn sphere_points(noise: &[f32], n: usize) -> Vec<Cartesian> {
    (0..n)
        .map(|i| {
            let (x, y, z) = (noise[3 * i], noise[3 * i + 1], noise[3 * i + 2] + 1e-3);
            let len = (x * x + y * y + z * z).sqrt();
            Cartesian {
                x: x / len,
                y: y / len,
                z: z / len,
            }
        })
        .collect()
}

/// Threads of an MD block (SHOC's default).
pub const MD_THREADS: u32 = 256;

/// A position or force, as CUDA's `float4` (16-byte aligned, so one load moves it).
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct Float4 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub w: f32,
}

/// The Lennard-Jones force on each atom from its neighbours within the cutoff (SHOC's
/// `compute_lj_force`), a thread per atom: `neighbors[j * n + i]` is atom `i`'s `j`-th
/// neighbour of `max_neighbors`, `n` the atom count.
#[kernel]
pub fn md_lj_force(
    positions: &[Float4],
    neighbors: &[i32],
    forces: &mut [Float4],
    max_neighbors: usize,
    cutsq: f32,
    lj1: f32,
    lj2: f32,
) {
    let n = positions.len();
    let i = global_idx().x;
    if i >= n {
        return;
    }
    let me = positions[i];
    let mut f = Float4::default();
    for j in 0..max_neighbors {
        let other = positions[neighbors[j * n + i] as usize];
        let dx = me.x - other.x;
        let dy = me.y - other.y;
        let dz = me.z - other.z;
        let r2 = dx * dx + dy * dy + dz * dz;
        if r2 < cutsq {
            let r2inv = 1.0 / r2;
            let r6inv = r2inv * r2inv * r2inv;
            let force = r2inv * r6inv * (lj1 * r6inv - lj2);
            f.x += dx * force;
            f.y += dy * force;
            f.z += dz * force;
        }
    }
    forces[i] = f;
}

/// The atoms of a jittered cubic lattice of `side`³ sites, spacing 1, from `noise` in [-1, 1)
/// (three numbers an atom; SHOC jitters a lattice too), and each atom's `max_neighbors`
/// (at most 130) neighbours in `neighbors[j * n + i]`, as SHOC's list of the nearest: the sites
/// of the 5 × 5 × 5 cube around it, then those 3 away along an axis, the lattice wrapping
/// around at its faces (so some neighbours lie far, past any cutoff; `side` at least 4, so
/// no atom is its own).
pub fn md_atoms(noise: &[f32], side: usize, max_neighbors: usize) -> (Vec<Float4>, Vec<i32>) {
    let n = side * side * side;
    let positions = (0..n)
        .map(|i| Float4 {
            x: (i % side) as f32 + 0.1 * noise[3 * i],
            y: (i / side % side) as f32 + 0.1 * noise[3 * i + 1],
            z: (i / (side * side)) as f32 + 0.1 * noise[3 * i + 2],
            w: 0.0,
        })
        .collect();
    let mut offsets: Vec<[i64; 3]> = Vec::new();
    for dz in -2..=2 {
        for dy in -2..=2 {
            for dx in -2..=2 {
                if [dx, dy, dz] != [0, 0, 0] {
                    offsets.push([dx, dy, dz]);
                }
            }
        }
    }
    for axis in 0..3 {
        for step in [3, -3] {
            let mut offset = [0; 3];
            offset[axis] = step;
            offsets.push(offset);
        }
    }
    let s = side as i64;
    let mut neighbors = vec![0i32; n * max_neighbors];
    for i in 0..n {
        let site = [i % side, i / side % side, i / (side * side)].map(|c| c as i64);
        for (j, offset) in offsets.iter().take(max_neighbors).enumerate() {
            let [x, y, z] = [0, 1, 2].map(|a| (site[a] + offset[a]).rem_euclid(s));
            neighbors[j * n + i] = (x + s * (y + s * z)) as i32;
        }
    }
    (positions, neighbors)
}

/// Threads of a Haar block at most (the CUDA sample's 512); each block decomposes twice as
/// many values.
pub const HAAR_THREADS: usize = 512;

/// Banks of shared memory, as a power of two: `i + (i >> LOG_NUM_BANKS)` skips a word every 16,
/// so the levels' strided reads spread over the banks.
pub const LOG_NUM_BANKS: usize = 4;

/// Where value `i` of a block's chunk lives in shared memory.
#[device]
fn conflict_free(i: usize) -> usize {
    i + (i >> LOG_NUM_BANKS)
}

/// `levels` levels of the Haar decomposition of each chunk of `2 * block_dim().x` values of
/// `signal` (the CUDA samples' `dwtHaar1D`), a thread per pair: each level's details go to
/// `details` where the whole decomposition of `signal` puts them (the first level's from
/// `half_len`, half the signal's length), and each block's last approximation to
/// `approx[block_idx().x]`, the signal of the next launch. Shared memory: `2 * block_dim().x`
/// floats.
///
/// Not yet as narrow as the sample's `unsigned int`s: `offset` and `first` double once a level
/// for `levels` levels, a launch argument, so the range analysis finds no bound and they stay
/// 64-bit (only the guard `tid < active`, where `active` halves to 0 within 10 levels, bounds
/// them where they are read); `start`, a block's first value, is partly 64-bit too, as the
/// grid's blocks times twice the block's threads may pass 32 bits. A few instructions a level.
#[kernel]
pub fn dwt_haar_1d(
    signal: &[f32],
    details: &mut [f32],
    approx: &mut [f32],
    levels: u32,
    half_len: usize,
) {
    let shared = dynamic_shared::<f32>();
    let bdim = block_dim().x as usize;
    let gdim = grid_dim().x as usize;
    let bid = block_idx().x as usize;
    let tid = thread_idx().x as usize;
    let start = bid * 2 * bdim + tid;
    shared[tid] = signal[start];
    shared[tid + bdim] = signal[start + bdim];
    sync_threads();
    // A two-way bank conflict, cheaper than any way around it (the sample's words).
    let data0 = shared[2 * tid];
    let data1 = shared[2 * tid + 1];
    sync_threads();
    details[half_len + bid * bdim + tid] = (data0 - data1) * core::f32::consts::FRAC_1_SQRT_2;
    shared[conflict_free(tid)] = (data0 + data1) * core::f32::consts::FRAC_1_SQRT_2;
    sync_threads();
    let mut active = bdim / 2;
    let mut offset = 1;
    let mut first = 2 * tid;
    for _ in 1..levels {
        if tid < active {
            let i0 = conflict_free(first);
            let i1 = conflict_free(first + offset);
            let out = active * gdim + bid * active + tid;
            details[out] = (shared[i0] - shared[i1]) * core::f32::consts::FRAC_1_SQRT_2;
            shared[i0] = (shared[i0] + shared[i1]) * core::f32::consts::FRAC_1_SQRT_2;
        }
        active >>= 1;
        offset <<= 1;
        first <<= 1;
        sync_threads();
    }
    if tid == 0 {
        approx[bid] = shared[0];
    }
}

/// The launches of the Haar decomposition of `signal` (a power of two long, at least 2): the details of
/// every level into `details[1..]` (level `l`'s from `len >> l` on), the blocks' approximations
/// of each launch into one of `scratch`, the next launch's signal; returns the index of the
/// scratch buffer whose element 0 is the final approximation.
pub fn dwt_haar(
    stream: &Stream,
    signal: &DeviceBuffer<f32>,
    details: &mut DeviceBuffer<f32>,
    scratch: &mut [DeviceBuffer<f32>; 2],
) -> gpu_dsl::Result<usize> {
    let mut len = signal.len();
    let mut last = None;
    while len > 1 {
        let (threads, levels) = haar_launch(len);
        let blocks = len / 2 / threads;
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32))
            .with_shared_mem((2 * threads * 4) as u32);
        let [a, b] = &mut *scratch;
        let (input, output, written) = match last {
            None => (signal, a, 0),
            Some(0) => (&*a, b, 1),
            Some(_) => (&*b, a, 0),
        };
        dwt_haar_1d::launch(stream, config, input, details, output, levels, len / 2)?;
        last = Some(written);
        len = blocks;
    }
    // A signal of two values or more takes a launch at least.
    Ok(last.unwrap_or(0))
}

/// The threads a block of a Haar launch over `len` values takes, and the levels it decomposes.
pub fn haar_launch(len: usize) -> (usize, u32) {
    let threads = (len / 2).min(HAAR_THREADS);
    (threads, (2 * threads).ilog2())
}

/// Threads of the particle filter's blocks (Rodinia's `threads_per_block`).
pub const PF_THREADS: usize = 512;

/// Each particle's new position (Rodinia's `find_index_kernel`), a thread per particle: the
/// first particle whose CDF reaches the particle's `u`, found by a linear search (the last
/// particle where none does).
#[kernel]
pub fn pf_find_index(
    array_x: &[f32],
    array_y: &[f32],
    cdf: &[f32],
    u: &[f32],
    xj: &mut [f32],
    yj: &mut [f32],
) {
    let i = global_idx().x;
    if i < xj.len() {
        let index = cdf.iter().position(|&c| c >= u[i]).unwrap_or(cdf.len() - 1);
        xj[i] = array_x[index];
        yj[i] = array_y[index];
    }
}

/// Normalises the particles' weights, one block of `PF_THREADS` (Rodinia's likelihood
/// kernel's block-wide sum and `normalize_weights_kernel`, whose grid of blocks each reads
/// weights the others are still dividing): each thread's share of the sum, a tree in shared
/// memory, the division, then the CDF by thread 0 alone, as Rodinia's `cdfCalc`, and the
/// systematic resampling's `u[i] = u1 + i / n` (Rodinia draws `u1` on the device from its own
/// generator; here it is an argument).
#[kernel]
pub fn pf_normalize_weights(weights: &mut [f32], cdf: &mut [f32], u: &mut [f32], u1: f32) {
    let partial = shared_array::<f32, PF_THREADS>();
    let t = thread_idx().x as usize;
    let n = weights.len();
    let mut sum = 0.0;
    for i in (t..n).step_by(PF_THREADS) {
        sum += weights[i];
    }
    partial[t] = sum;
    sync_threads();
    let mut s = PF_THREADS / 2;
    while s > 0 {
        if t < s {
            partial[t] += partial[t + s];
        }
        sync_threads();
        s /= 2;
    }
    let total = partial[0];
    for i in (t..n).step_by(PF_THREADS) {
        weights[i] /= total;
    }
    // Thread 0 reads every thread's quotients.
    sync_threads();
    if t == 0 {
        let mut acc = 0.0;
        for (c, w) in cdf.iter_mut().zip(weights.iter()) {
            acc += w;
            *c = acc;
        }
    }
    for i in (t..n).step_by(PF_THREADS) {
        u[i] = u1 + i as f32 / n as f32;
    }
}
