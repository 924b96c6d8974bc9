//! Prefix sums (and prefix min/max) in one pass: decoupled look-back, the algorithm CUB uses.
//!
//! Each block takes the next tile from an atomic counter, so it only ever waits on tiles that
//! started before it. It scans its tile in shared memory, publishes the tile's aggregate, then
//! walks back over its predecessors' published values until it meets an inclusive prefix, and
//! publishes its own. Every element is read once and written once.

use gpu_macros::kernel;
use gpu_runtime::{DeviceBuffer, Number, Result, Stream};

/// Threads per block.
const THREADS: usize = 256;
/// Elements per thread.
const ITEMS: usize = 8;
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
// else { a }`: sum, min (OP 1) or max (OP 2). With the right identity, combine(identity, x) = x,
// which keeps the scan free of first-element special cases.
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
    const THREADS: usize = 256;
    const ITEMS: usize = 8;
    const TILE: usize = 2048;
    let buffer = shared_array::<T, TILE>();
    let warp_totals = shared_array::<T, 8>();
    let tile_prefix = shared_array::<T, 1>();
    let tile_id = shared_array::<u64, 1>();
    let t = thread_idx().x as usize;
    if t == 0 {
        // Tickets keep counting across scans: this scan's first one is `first_ticket`.
        tile_id[0] = counter.atomic_add(0, 1) - first_ticket;
    }
    sync_threads();
    let tile = tile_id[0] as usize;
    let base = tile * TILE;
    let n = x.len();

    // Coalesced load through shared memory; each thread then scans ITEMS consecutive elements.
    for k in 0..ITEMS {
        let i = base + k * THREADS + t;
        buffer[k * THREADS + t] = if i < n { x[i] } else { identity };
    }
    sync_threads();
    let mut items = [identity; 8];
    let mut running = identity;
    for k in 0..ITEMS {
        let v = buffer[t * ITEMS + k];
        running = if OP == 0 {
            running + v
        } else if (OP == 1) == (v < running) {
            v
        } else {
            running
        };
        items[k] = running;
    }

    // Inclusive scan of the thread totals across the warp, then across the block's 8 warps.
    let lane = lane_id();
    let warp = t / 32;
    let mut inclusive = running;
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
    if lane == 31 {
        warp_totals[warp] = inclusive;
    }
    sync_threads();
    if t == 0 {
        for w in 1..8 {
            let a = warp_totals[w - 1];
            let b = warp_totals[w];
            warp_totals[w] = if OP == 0 {
                a + b
            } else if (OP == 1) == (b < a) {
                b
            } else {
                a
            };
        }
    }
    sync_threads();
    let up = shfl_up_sync(0xffff_ffff, inclusive, 1);
    let lanes_before = if lane > 0 { up } else { identity };
    let warps_before = if warp > 0 {
        warp_totals[warp - 1]
    } else {
        identity
    };
    let aggregate = warp_totals[7];

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
    for k in 0..ITEMS {
        let inclusive_item = if OP == 0 {
            before + items[k]
        } else if (OP == 1) == (items[k] < before) {
            items[k]
        } else {
            before
        };
        let exclusive_item = if k == 0 {
            before
        } else if OP == 0 {
            before + items[k - 1]
        } else if (OP == 1) == (items[k - 1] < before) {
            items[k - 1]
        } else {
            before
        };
        buffer[t * ITEMS + k] = if exclusive {
            exclusive_item
        } else {
            inclusive_item
        };
    }
    sync_threads();
    for k in 0..ITEMS {
        let i = base + k * THREADS + t;
        if i < n {
            y[i] = buffer[k * THREADS + t];
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
