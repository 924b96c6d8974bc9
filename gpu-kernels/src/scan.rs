//! Prefix sums (and prefix min/max) in one pass: decoupled look-back, the algorithm CUB uses.
//!
//! Each block takes the next tile from an atomic counter, so it only ever waits on tiles that
//! started before it. It scans its tile in registers, publishes the tile's aggregate, then
//! walks back over its predecessors' published values until it meets an inclusive prefix, and
//! publishes its own. Every element is read once and written once.

use gpu_macros::kernel;
use gpu_runtime::{DeviceBuffer, Number, Result, Stream};

/// Threads per block.
const THREADS: usize = 512;
/// Elements per thread, moved as four `load4`s and `store4`s (16 bytes each for 4-byte types).
const ITEMS: usize = 16;
/// Elements per tile.
pub const TILE: usize = THREADS * ITEMS;

/// The associative operation of a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanOp {
    /// Sums (integers wrap, as in release Rust).
    Sum,
    /// Running minimum.
    Min,
    /// Running maximum.
    Max,
}

/// Whether each output includes its own element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// `y[i] = x[0] op ... op x[i]`.
    Inclusive,
    /// `y[i] = identity op x[0] op ... op x[i - 1]`.
    Exclusive,
}

// `combine(a, b)` below is written out as `if OP == 0 { a + b } else if (OP == 1) == (b < a) { b }
// else { a }`: sum, min (OP 1) or max (OP 2); `OP` is a template parameter, so only one arm is
// compiled. With the right identity, combine(identity, x) = x, which keeps the scan free of
// first-element special cases.
//
// Layout: each thread owns 16 consecutive elements, read and written as four vector accesses. A
// warp's four accesses together cover its 2 KiB, so they are served from the same cache lines and
// DRAM sees each byte once; no shared-memory transpose or extra block barrier is needed. Each
// thread scans its 16 in registers, then one shuffle scan covers the warp. Keep that warp scan a
// single straight-line run of shuffles: a striped layout that needed one warp scan per group of
// four let NVRTC split the code on `lane == 0` and duplicate the `shfl_sync`s into both paths,
// which hung or faulted (illegal instruction) on an H100. Larger tiles pay the per-tile ticket,
// barriers and look-back fewer times. Measured on an H100 (f32 sum, 2^28, × device copy):
// 256 threads × 8 items 0.42, 256 × 16 0.56, 512 × 16 0.64 (this one), 1024 × 16 0.60,
// 256 × 32 0.53 (register pressure), 512 × 8 0.55.
#[kernel]
fn scan_tiles<T: Number, const OP: usize>(
    identity: T,
    exclusive: bool,
    epoch: u32,
    first_ticket: u64,
    x: &[T],
    y: &mut [T],
    aggregates: &mut [T],
    prefixes: &mut [T],
    flags: &mut [u32],
    counter: &mut [u64],
) {
    const WARPS: usize = 16;
    const ITEMS: usize = 16;
    const TILE: usize = 8192;
    let warp_totals = shared_array::<T, 16>();
    let tile_prefix = shared_array::<T, 1>();
    let tile_id = shared_array::<u64, 1>();
    let t = thread_idx().x as usize;
    if t == 0 {
        // Tickets keep counting across scans: this scan's first one is `first_ticket`.
        tile_id[0] = counter.atomic_add(0, 1) - first_ticket;
    }
    sync_threads();
    let tile = tile_id[0] as usize;
    let start = tile * TILE + t * ITEMS;
    let n = x.len();
    // Only the last tile can be partial; it takes guarded scalar accesses.
    let full = tile * TILE + TILE <= n;

    // Array lengths must be literals: 16 is ITEMS.
    let mut items = [identity; 16];
    if full {
        for j in 0..ITEMS / 4 {
            let v = x.load4(start + j * 4);
            for e in 0..4 {
                items[j * 4 + e] = v[e];
            }
        }
    } else {
        for k in 0..ITEMS {
            if start + k < n {
                items[k] = x[start + k];
            }
        }
    }
    for k in 1..ITEMS {
        let a = items[k - 1];
        let b = items[k];
        items[k] = if OP == 0 {
            a + b
        } else if (OP == 1) == (b < a) {
            b
        } else {
            a
        };
    }

    // Inclusive scan of the thread totals across the warp, then the 16 warp totals.
    let lane = lane_id();
    let warp = t / 32;
    let mut inclusive = items[ITEMS - 1];
    let mut offset = 1u32;
    while offset < 32 {
        let up = shfl_up_sync(0xffff_ffff, inclusive, offset);
        let other = if lane >= offset { up } else { identity };
        inclusive = if OP == 0 {
            other + inclusive
        } else if (OP == 1) == (inclusive < other) {
            inclusive
        } else {
            other
        };
        offset *= 2;
    }
    let up = shfl_up_sync(0xffff_ffff, inclusive, 1);
    let lanes_before = if lane > 0 { up } else { identity };
    if lane == 31 {
        warp_totals[warp] = inclusive;
    }
    sync_threads();
    // Every thread folds the 16 warp totals itself (broadcast reads): no second barrier.
    let mut warps_before = identity;
    let mut aggregate = identity;
    for w in 0..WARPS {
        if w == warp {
            warps_before = aggregate;
        }
        let v = warp_totals[w];
        aggregate = if OP == 0 {
            aggregate + v
        } else if (OP == 1) == (v < aggregate) {
            v
        } else {
            aggregate
        };
    }

    // Publish the tile's aggregate, look back to the nearest inclusive prefix, publish ours.
    // A flag is `epoch << 2 | state` (state 1: aggregate, 2: inclusive prefix); a flag from an
    // earlier scan has another epoch and reads as "nothing yet", so flags are never cleared.
    if warp == 0 {
        if lane == 0 {
            if tile == 0 {
                prefixes[0] = aggregate;
                thread_fence();
                flags.atomic_exchange(0, epoch << 2 | 2);
            } else {
                aggregates[tile] = aggregate;
                thread_fence();
                flags.atomic_exchange(tile, epoch << 2 | 1);
            }
        }
        // The first warp looks back 32 tiles at a time: lane k reads tile `end - 1 - k`. Once
        // every lane sees a published value, the nearest inclusive prefix ends the walk and the
        // values up to it are folded (the operations are commutative). Values are read with
        // atomics so they come from L2, where the other blocks wrote them.
        let mut prefix = identity;
        if tile > 0 {
            let mut end = tile;
            loop {
                let before_start = lane as usize >= end;
                let j = if before_start {
                    0
                } else {
                    end - 1 - lane as usize
                };
                let word = if before_start {
                    epoch << 2 | 2
                } else {
                    flags.atomic_or(j, 0)
                };
                let state = if word >> 2 == epoch { word & 3 } else { 0 };
                if !all_sync(0xffff_ffff, state != 0) {
                    continue;
                }
                thread_fence();
                let prefix_lanes = ballot_sync(0xffff_ffff, state == 2);
                let stop = prefix_lanes.trailing_zeros();
                let value = if before_start {
                    identity
                } else if state == 2 {
                    prefixes.atomic_compare_exchange(j, identity, identity)
                } else {
                    aggregates.atomic_compare_exchange(j, identity, identity)
                };
                let mut window = if lane <= stop { value } else { identity };
                let mut step = 16u32;
                while step > 0 {
                    let other = shfl_xor_sync(0xffff_ffff, window, step);
                    window = if OP == 0 {
                        window + other
                    } else if (OP == 1) == (other < window) {
                        other
                    } else {
                        window
                    };
                    step /= 2;
                }
                prefix = if OP == 0 {
                    window + prefix
                } else if (OP == 1) == (window < prefix) {
                    window
                } else {
                    prefix
                };
                if prefix_lanes != 0 {
                    break;
                }
                end -= 32;
            }
            if lane == 0 {
                let total = if OP == 0 {
                    prefix + aggregate
                } else if (OP == 1) == (aggregate < prefix) {
                    aggregate
                } else {
                    prefix
                };
                prefixes[tile] = total;
                thread_fence();
                flags.atomic_exchange(tile, epoch << 2 | 2);
            }
        }
        if lane == 0 {
            tile_prefix[0] = prefix;
        }
    }
    sync_threads();

    // This thread's starting value: the tile's prefix, then the earlier warps, then lanes.
    let p = tile_prefix[0];
    let before_warp = if OP == 0 {
        p + warps_before
    } else if (OP == 1) == (warps_before < p) {
        warps_before
    } else {
        p
    };
    let before = if OP == 0 {
        before_warp + lanes_before
    } else if (OP == 1) == (lanes_before < before_warp) {
        lanes_before
    } else {
        before_warp
    };
    let mut out = [identity; 16]; // 16 is ITEMS
    for k in 0..ITEMS {
        let v = items[k];
        let inclusive_item = if OP == 0 {
            before + v
        } else if (OP == 1) == (v < before) {
            v
        } else {
            before
        };
        // The exclusive value of element k is the inclusive one of element k - 1.
        let u = if k == 0 { identity } else { items[k - 1] };
        let exclusive_item = if k == 0 {
            before
        } else if OP == 0 {
            before + u
        } else if (OP == 1) == (u < before) {
            u
        } else {
            before
        };
        out[k] = if exclusive {
            exclusive_item
        } else {
            inclusive_item
        };
    }
    if full {
        for j in 0..ITEMS / 4 {
            let mut v = [identity; 4];
            for e in 0..4 {
                v[e] = out[j * 4 + e];
            }
            y.store4(start + j * 4, v);
        }
    } else {
        for k in 0..ITEMS {
            if start + k < n {
                y[start + k] = out[k];
            }
        }
    }
}

/// Scratch memory for [`scan`]: tile flags and values and the tile counter, reused across calls
/// of up to `capacity` elements.
pub struct ScanScratch<T: Number> {
    aggregates: DeviceBuffer<T>,
    prefixes: DeviceBuffer<T>,
    flags: DeviceBuffer<u32>,
    counter: DeviceBuffer<u64>,
    /// The last scan's epoch: each scan's flags carry a new one, so none need clearing.
    epoch: u32,
    /// Tile tickets handed out so far: the counter is never reset either.
    tickets: u64,
}

impl<T: Number> ScanScratch<T> {
    /// Scratch for scans of up to `capacity` elements.
    pub fn new(stream: &Stream, capacity: usize) -> Result<Self> {
        let tiles = capacity.div_ceil(TILE).max(1);
        Ok(ScanScratch {
            aggregates: DeviceBuffer::zeroed(stream, tiles)?,
            prefixes: DeviceBuffer::zeroed(stream, tiles)?,
            flags: DeviceBuffer::zeroed(stream, tiles)?,
            counter: DeviceBuffer::zeroed(stream, 1)?,
            epoch: 0,
            tickets: 0,
        })
    }
}

/// The identity of `op` for `T`: what `combine(identity, x) = x` needs.
pub trait ScanIdentity: Number {
    /// The identity element of `op`.
    fn identity(op: ScanOp) -> Self;
}

macro_rules! scan_identity {
    ($($t:ty => $zero:expr),*) => {$(
        impl ScanIdentity for $t {
            fn identity(op: ScanOp) -> Self {
                match op {
                    ScanOp::Sum => $zero,
                    ScanOp::Min => <$t>::MAX,
                    ScanOp::Max => <$t>::MIN,
                }
            }
        }
    )*};
}
scan_identity!(i32 => 0, u32 => 0, i64 => 0, u64 => 0, usize => 0);

impl ScanIdentity for f32 {
    fn identity(op: ScanOp) -> Self {
        match op {
            ScanOp::Sum => 0.0,
            ScanOp::Min => f32::INFINITY,
            ScanOp::Max => f32::NEG_INFINITY,
        }
    }
}

impl ScanIdentity for f64 {
    fn identity(op: ScanOp) -> Self {
        match op {
            ScanOp::Sum => 0.0,
            ScanOp::Min => f64::INFINITY,
            ScanOp::Max => f64::NEG_INFINITY,
        }
    }
}

/// Scans `x` into `y` (same length) with `op`, in one launch; `scratch` must hold `x.len()`.
pub fn scan<T: ScanIdentity>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<T>,
    op: ScanOp,
    kind: ScanKind,
    scratch: &mut ScanScratch<T>,
) -> Result<()> {
    crate::map::same_len("scan: x and y", y.len(), x.len())?;
    let tiles = x.len().div_ceil(TILE);
    if tiles == 0 {
        return Ok(());
    }
    if scratch.flags.len() < tiles {
        return Err(gpu_runtime::Error::LengthMismatch {
            what: "scan: scratch tiles (make it with ScanScratch::new(stream, x.len()))",
            expected: tiles,
            found: scratch.flags.len(),
        });
    }
    // Epochs run 1..2^30 (a zeroed flag is epoch 0), then wrap.
    scratch.epoch = scratch.epoch % ((1 << 30) - 1) + 1;
    let (epoch, first_ticket) = (scratch.epoch, scratch.tickets);
    scratch.tickets += tiles as u64;
    let config = gpu_runtime::LaunchConfig::for_len(tiles * THREADS, THREADS as u32);
    let launch = match op {
        ScanOp::Sum => launch_op::<T, 0>,
        ScanOp::Min => launch_op::<T, 1>,
        ScanOp::Max => launch_op::<T, 2>,
    };
    let tile_state = (epoch, first_ticket);
    launch(
        stream,
        config,
        T::identity(op),
        kind,
        tile_state,
        x,
        y,
        scratch,
    )
}

/// One instantiation of the scan kernel: `OP` selects the operation in the kernel.
#[allow(clippy::too_many_arguments)]
fn launch_op<T: ScanIdentity, const OP: usize>(
    stream: &Stream,
    config: gpu_runtime::LaunchConfig,
    identity: T,
    kind: ScanKind,
    (epoch, first_ticket): (u32, u64),
    x: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<T>,
    s: &mut ScanScratch<T>,
) -> Result<()> {
    scan_tiles::launch::<T, OP>(
        stream,
        config,
        identity,
        kind == ScanKind::Exclusive,
        epoch,
        first_ticket,
        x,
        y,
        &mut s.aggregates,
        &mut s.prefixes,
        &mut s.flags,
        &mut s.counter,
    )
}

/// The kernels of this module: generic, instantiated at launch with the element type and the
/// operation (`TemplateArg::Const`: 0 sum, 1 min, 2 max).
pub const KERNELS: &[&gpu_runtime::Kernel] = &[&scan_tiles::KERNEL];
