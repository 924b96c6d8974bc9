//! Prefix sums (and prefix min/max) in one pass: decoupled look-back, the algorithm CUB uses.
//!
//! Block `b` scans tile `b` in registers, publishes the tile's aggregate, then walks back over
//! its predecessors' published values until it meets an inclusive prefix, and publishes its own.
//! Blocks start in index order, so a block only waits on tiles whose blocks are already running
//! (CUB relies on the same order). Every element is read once and written once.

use gpu_macros::kernel;
use gpu_runtime::{DeviceBuffer, Number, Result, Stream};

/// Threads per block.
const THREADS: usize = 256;
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
// Layout: each thread owns 16 consecutive elements, read as four vector loads. A warp's four
// loads together cover its 2 KiB, and L1 serves the second half of each 32-byte sector that the
// first load brought in, so L2 and DRAM see each byte once; stores go through shared memory (see
// there). Each thread scans its 16 in registers, then one shuffle scan covers the warp. Keep that
// warp scan a single straight-line run of shuffles: a striped layout that needed one warp scan
// per group of four let NVRTC split the code on `lane == 0` and duplicate the `shfl_sync`s into
// both paths, which hung or faulted (illegal instruction) on an H100.
//
// Publishing: a tile's state and value are one 64-bit word, `(epoch << 2 | state) << 32 | bits`
// (state 1: aggregate, 2: inclusive prefix), for 4-byte types (`PACKED`): one atomic exchange
// publishes both, one load reads both, with no fence on either side. 8-byte types keep a `u32`
// flag beside a value slot per state, ordered by fences. A flag from an earlier scan has another
// epoch and reads as "nothing yet", so nothing is ever cleared.
//
// What the H100 showed (f32 sum, 2^28, × device copy), one step at a time: tickets from an
// atomic counter, flags and values in separate words read with atomic read-modify-writes, 512
// threads: 0.64. Packed words: 0.76. The tile from the block index instead of a ticket (loads
// start before any barrier; 32 registers, so the SM is full): 0.79. Polls with loads instead of
// atomics: 0.82. 256-thread tiles (8 blocks per SM): 0.84. These launch bounds (without them
// NVRTC takes 39 registers, 6 blocks per SM) and a pause between polls: 0.85, with L2 93% busy
// (the copy: 78%) and DRAM at 71%. Stores through shared memory, whole sectors at a time:
// 1.06 (2970 GB/s; L2 81%, DRAM 89% busy; this copy reference reaches 85%). Loads through
// shared memory as well changed nothing. Wider look-back windows, 64 to 128 tiles per poll,
// lost (0.77 to 0.71 with atomic polls); 128-thread tiles did no better; the pause's length,
// 0 to 3000 cycles, moved nothing beyond noise. The bounds would cost 8-byte types spills
// (about 400 bytes a thread), so they run the same body under looser bounds.
macro_rules! scan_kernel {
    ($(#[$attr:meta])* $name:ident, $blocks:literal) => {
        $(#[$attr])*
        #[kernel(launch_bounds(256, $blocks))]
        fn $name<T: Number, const OP: usize, const PACKED: usize>(
            identity: T,
            exclusive: bool,
            epoch: u32,
            x: &[T],
            y: &mut [T],
            words: &mut [u64],
            flags: &mut [u32],
            values: &mut [T],
        ) {
            const WARPS: usize = 8;
            const ITEMS: usize = 16;
            const TILE: usize = 4096;
            // Cycles between polls of predecessors that have not published yet (CUB pauses too): each
            // poll is L2 traffic that the tiles' own loads and stores compete with.
            const BACKOFF: u64 = 1000;
            let warp_totals = shared_array::<T, 8>();
            let tile_prefix = shared_array::<T, 1>();
            // Each warp's 512 outputs, padded: 8 × 528.
            let staging = shared_array::<T, 4224>();
            let t = thread_idx().x as usize;
            let tile = block_idx().x as usize;
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

            // Inclusive scan of the thread totals across the warp, then the warp totals.
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
            // Every thread folds the warp totals itself (broadcast reads): no second barrier.
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

            // Publish the tile's aggregate (tile 0's is already its inclusive prefix), look back to the
            // nearest inclusive prefix, publish ours.
            if warp == 0 {
                if lane == 0 {
                    let state = if tile == 0 { 2u32 } else { 1u32 };
                    if PACKED != 0 {
                        let word = ((epoch << 2 | state) as u64) << 32 | aggregate.to_bits();
                        words.atomic_exchange(tile, word);
                    } else {
                        values[2 * tile + state as usize - 1] = aggregate;
                        thread_fence();
                        flags.atomic_exchange(tile, epoch << 2 | state);
                    }
                }
                // The first warp looks back 32 tiles at a time: lane k reads tile `end - 1 - k`. Once
                // every lane sees a published value, the nearest inclusive prefix ends the walk and the
                // values up to it are folded (the operations are commutative). Loads, not atomics: a
                // warp's 32 reads then travel to L2 as one request.
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
                        let mut state = 2u32;
                        let mut value = identity;
                        if !before_start {
                            let mut flag = 0u32;
                            if PACKED != 0 {
                                let word = words.atomic_load(j);
                                value = T::from_bits(word & 0xffff_ffff);
                                flag = (word >> 32) as u32;
                            } else {
                                flag = flags.atomic_load(j);
                            }
                            state = if flag >> 2 == epoch { flag & 3 } else { 0 };
                        }
                        if !all_sync(0xffff_ffff, state != 0) {
                            let since = clock64();
                            while clock64() - since < BACKOFF {}
                            continue;
                        }
                        if PACKED == 0 {
                            // Each value was written before its flag: read it only after the flag.
                            thread_fence();
                            if !before_start {
                                value = values.atomic_load(2 * j + state as usize - 1);
                            }
                        }
                        let prefix_lanes = ballot_sync(0xffff_ffff, state == 2);
                        let stop = prefix_lanes.trailing_zeros();
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
                        if PACKED != 0 {
                            words.atomic_exchange(tile, ((epoch << 2 | 2) as u64) << 32 | total.to_bits());
                        } else {
                            values[2 * tile + 1] = total;
                            thread_fence();
                            flags.atomic_exchange(tile, epoch << 2 | 2);
                        }
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
                // L1 does not merge stores as it serves loads: from the thread-owned layout, each 32-byte
                // sector would reach L2 as two 16-byte halves. The warp passes its 512 elements through
                // shared memory so that each `store4` covers 512 contiguous bytes. One padding element
                // per 32 keeps both sides free of bank conflicts.
                let base = warp * 528;
                for k in 0..ITEMS {
                    let i = lane as usize * ITEMS + k;
                    staging[base + i + i / 32] = out[k];
                }
                sync_warp();
                let warp_start = tile * TILE + warp * 512;
                for j in 0..ITEMS / 4 {
                    let mut v = [identity; 4];
                    for e in 0..4 {
                        let i = j * 128 + lane as usize * 4 + e;
                        v[e] = staging[base + i + i / 32];
                    }
                    y.store4(warp_start + j * 128 + lane as usize * 4, v);
                }
            } else {
                for k in 0..ITEMS {
                    if start + k < n {
                        y[start + k] = out[k];
                    }
                }
            }
        }
    };
}

scan_kernel!(
    /// The scan of 4-byte types: 32 registers, so 8 blocks fill a multiprocessor.
    scan_tiles,
    8
);
scan_kernel!(
    /// The scan of 8-byte types, with the registers they need (64: 4 blocks per
    /// multiprocessor); under the 4-byte kernel's bounds they would spill about 400 bytes a
    /// thread.
    scan_tiles_wide,
    4
);

/// Scratch memory for [`scan`]: the tiles' published states and values, reused across calls
/// of up to `capacity` elements.
pub struct ScanScratch<T: Number> {
    /// 4-byte types: one word per tile, state and value together.
    words: DeviceBuffer<u64>,
    /// 8-byte types: one flag per tile and two value slots (aggregate, inclusive prefix).
    flags: DeviceBuffer<u32>,
    values: DeviceBuffer<T>,
    /// The last scan's epoch: each scan's flags carry a new one, so none need clearing.
    epoch: u32,
}

impl<T: Number> ScanScratch<T> {
    /// Scratch for scans of up to `capacity` elements.
    pub fn new(stream: &Stream, capacity: usize) -> Result<Self> {
        let tiles = capacity.div_ceil(TILE).max(1);
        let (words, flags) = if packed::<T>() {
            (tiles, 0)
        } else {
            (0, tiles)
        };
        Ok(ScanScratch {
            words: DeviceBuffer::zeroed(stream, words)?,
            flags: DeviceBuffer::zeroed(stream, flags)?,
            values: DeviceBuffer::zeroed(stream, 2 * flags)?,
            epoch: 0,
        })
    }

    /// How many tiles the scratch has room for.
    fn tiles(&self) -> usize {
        self.words.len().max(self.flags.len())
    }
}

/// Whether `T`'s value fits beside its state in one 64-bit word.
fn packed<T: Number>() -> bool {
    std::mem::size_of::<T>() <= 4
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
    if scratch.tiles() < tiles {
        return Err(gpu_runtime::Error::LengthMismatch {
            what: "scan: scratch tiles (make it with ScanScratch::new(stream, x.len()))",
            expected: tiles,
            found: scratch.tiles(),
        });
    }
    // Epochs run 1..2^30 (a zeroed flag is epoch 0), then wrap.
    scratch.epoch = scratch.epoch % ((1 << 30) - 1) + 1;
    let config = gpu_runtime::LaunchConfig::try_for_len(tiles * THREADS, THREADS as u32)?;
    let launch = match (op, packed::<T>()) {
        (ScanOp::Sum, true) => launch_op::<T, 0, 1>,
        (ScanOp::Min, true) => launch_op::<T, 1, 1>,
        (ScanOp::Max, true) => launch_op::<T, 2, 1>,
        (ScanOp::Sum, false) => launch_op::<T, 0, 0>,
        (ScanOp::Min, false) => launch_op::<T, 1, 0>,
        (ScanOp::Max, false) => launch_op::<T, 2, 0>,
    };
    launch(stream, config, T::identity(op), kind, x, y, scratch)
}

/// One instantiation of the scan kernel: `OP` selects the operation in the kernel, `PACKED`
/// (1 for 4-byte types) the one-word tile states.
fn launch_op<T: ScanIdentity, const OP: usize, const PACKED: usize>(
    stream: &Stream,
    config: gpu_runtime::LaunchConfig,
    identity: T,
    kind: ScanKind,
    x: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<T>,
    s: &mut ScanScratch<T>,
) -> Result<()> {
    let exclusive = kind == ScanKind::Exclusive;
    let (words, flags, values) = (&mut s.words, &mut s.flags, &mut s.values);
    if PACKED != 0 {
        scan_tiles::launch::<T, OP, PACKED>(
            stream, config, identity, exclusive, s.epoch, x, y, words, flags, values,
        )
    } else {
        scan_tiles_wide::launch::<T, OP, PACKED>(
            stream, config, identity, exclusive, s.epoch, x, y, words, flags, values,
        )
    }
}

/// The kernels of this module: generic, instantiated at launch with the element type, the
/// operation (`TemplateArg::Const`: 0 sum, 1 min, 2 max) and whether tile states are packed
/// (`TemplateArg::Const(1)` for 4-byte types).
pub const KERNELS: &[&gpu_runtime::Kernel] = &[&scan_tiles::KERNEL, &scan_tiles_wide::KERNEL];
