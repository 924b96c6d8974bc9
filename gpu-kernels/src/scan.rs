//! Prefix sums (and prefix min/max) in one pass: decoupled look-back, the algorithm CUB uses.
//!
//! Block `b` scans tile `b` in registers, publishes the tile's aggregate, then walks back over
//! its predecessors' published values until it meets an inclusive prefix, and publishes its own.
//! Blocks start in index order, so a block only waits on tiles whose blocks are already running
//! (CUB relies on the same order). Every element is read once and written once.

use gpu_dsl_macros::kernel;
use gpu_dsl_runtime::{DeviceBuffer, Number, Result, Stream, TemplateArg};

/// Threads per block.
const THREADS: usize = 256;
/// Elements per tile: 16 per thread, moved as 16-byte `load4`s and `store4`s for 4-byte types
/// (two 16-byte accesses each for 8-byte types).
pub const TILE: usize = THREADS * 16;

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
// (state 1: aggregate, 2: inclusive prefix), for 4-byte types (`WORDS` = 1): one atomic exchange
// publishes both, one load reads both, with no fence on either side. 8-byte types (`WORDS` = 2)
// publish two such words, each with the state and half the value's bits; a reader takes the
// value only when both words carry the same state and epoch, so again no fence is needed. A
// state from an earlier scan has another epoch and reads as "nothing yet", so nothing is ever
// cleared.
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
//
// f64 sum, 2^28, × device copy: a `u32` flag beside value slots, ordered by fences: 0.72. The
// two-word states: 0.91. Loads through shared memory too, since L2 was 93% busy and L1 hit only
// 44% of the second halves of the 32-byte loads: 0.99. Also tried, with the two-word states:
// 8 elements a thread (2048-element tiles) at 6 blocks per SM, 0.93, at 7 or 8 (spills), 0.83;
// 12 a thread at 4, 5 or 6 blocks, 0.90, 0.95 and 0.88 (0.97 at 5 with staged loads).
macro_rules! scan_kernel {
    ($(#[$attr:meta])* $name:ident, blocks: $blocks:literal, staged_loads: $staged:literal) => {
        $(#[$attr])*
        #[kernel(launch_bounds(256, $blocks))]
        fn $name<T: Number, const OP: usize, const WORDS: usize>(
            identity: T,
            exclusive: bool,
            epoch: u32,
            x: &[T],
            y: &mut [T],
            words: &mut [u64],
        ) {
            const WARPS: usize = 8;
            const ITEMS: usize = 16;
            const TILE: usize = 4096;
            // Each warp's 512 elements in `staging`, padded by one per 32.
            const WARP_STRIDE: usize = 528;
            // Cycles between polls of predecessors that have not published yet (CUB pauses too): each
            // poll is L2 traffic that the tiles' own loads and stores compete with.
            const BACKOFF: u64 = 1000;
            let warp_totals = shared_array::<T, 8>();
            let tile_prefix = shared_array::<T, 1>();
            let staging = shared_array::<T, { 8 * 528 }>();
            let t = thread_idx().x as usize;
            let tile = block_idx().x as usize;
            let start = tile * TILE + t * ITEMS;
            let n = x.len();
            // Only the last tile can be partial; it takes guarded scalar accesses.
            let full = tile * TILE + TILE <= n;

            let mut items = [identity; 16]; // 16 is ITEMS
            let lane = lane_id();
            let warp = t / 32;
            if full && $staged {
                let base = warp * WARP_STRIDE;
                // Each load4 of the warp covers 128 contiguous elements; the thread-owned layout
                // is read back from shared memory.
                let warp_start = tile * TILE + warp * 512;
                for j in 0..ITEMS / 4 {
                    let v = x.load4(warp_start + j * 128 + lane as usize * 4);
                    for e in 0..4 {
                        let i = j * 128 + lane as usize * 4 + e;
                        staging[base + i + i / 32] = v[e];
                    }
                }
                sync_warp();
                for k in 0..ITEMS {
                    let i = lane as usize * ITEMS + k;
                    items[k] = staging[base + i + i / 32];
                }
            } else if full {
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
                    let tag = ((epoch << 2 | state) as u64) << 32;
                    let bits = aggregate.to_bits();
                    if WORDS == 1 {
                        words.atomic_exchange(tile, tag | bits);
                    } else {
                        words.atomic_exchange(2 * tile, tag | (bits & 0xffff_ffff));
                        words.atomic_exchange(2 * tile + 1, tag | (bits >> 32));
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
                            if WORDS == 1 {
                                let word = words.atomic_load(j);
                                value = T::from_bits(word & 0xffff_ffff);
                                flag = (word >> 32) as u32;
                            } else {
                                let low = words.atomic_load(2 * j);
                                let high = words.atomic_load(2 * j + 1);
                                value = T::from_bits((low & 0xffff_ffff) | (high << 32));
                                // Halves of two different states (or scans) are no value yet.
                                if low >> 32 == high >> 32 {
                                    flag = (low >> 32) as u32;
                                }
                            }
                            state = if flag >> 2 == epoch { flag & 3 } else { 0 };
                        }
                        if !all_sync(0xffff_ffff, state != 0) {
                            let since = clock64();
                            while clock64() - since < BACKOFF {}
                            continue;
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
                        let tag = ((epoch << 2 | 2) as u64) << 32;
                        let bits = total.to_bits();
                        if WORDS == 1 {
                            words.atomic_exchange(tile, tag | bits);
                        } else {
                            words.atomic_exchange(2 * tile, tag | (bits & 0xffff_ffff));
                            words.atomic_exchange(2 * tile + 1, tag | (bits >> 32));
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
                let base = warp * WARP_STRIDE;
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
    blocks: 8,
    staged_loads: false
);
scan_kernel!(
    /// The scan of 8-byte types, with the registers they need (64: 4 blocks per
    /// multiprocessor; under the 4-byte kernel's bounds they would spill about 400 bytes a
    /// thread), and loads through shared memory as well as stores.
    scan_tiles_wide,
    blocks: 4,
    staged_loads: true
);

/// Scratch memory for [`scan`]: the tiles' published states and values, reused across calls
/// of up to `capacity` elements.
pub struct ScanScratch<T: Number> {
    /// Per tile, [`words_per_tile`] words of state and value.
    words: DeviceBuffer<u64>,
    /// The last scan's epoch: each scan's states carry a new one, so none need clearing.
    epoch: u32,
    _elements: std::marker::PhantomData<T>,
}

impl<T: Number> ScanScratch<T> {
    /// Scratch for scans of up to `capacity` elements.
    pub fn new(stream: &Stream, capacity: usize) -> Result<Self> {
        let tiles = capacity.div_ceil(TILE).max(1);
        Ok(ScanScratch {
            words: DeviceBuffer::zeroed(stream, tiles * words_per_tile::<T>())?,
            epoch: 0,
            _elements: std::marker::PhantomData,
        })
    }

    /// How many tiles the scratch has room for.
    fn tiles(&self) -> usize {
        self.words.len() / words_per_tile::<T>()
    }
}

/// The 64-bit words of one tile's published state: one for 4-byte types (state and value),
/// two for 8-byte types (state and half the value in each).
fn words_per_tile<T: Number>() -> usize {
    if std::mem::size_of::<T>() <= 4 {
        1
    } else {
        2
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
    if scratch.tiles() < tiles {
        return Err(gpu_dsl_runtime::Error::LengthMismatch {
            what: "scan: scratch tiles (make it with ScanScratch::new(stream, x.len()))",
            expected: tiles,
            found: scratch.tiles(),
        });
    }
    // Epochs run 1..2^30 (a zeroed flag is epoch 0), then wrap.
    scratch.epoch = scratch.epoch % ((1 << 30) - 1) + 1;
    let config = gpu_dsl_runtime::LaunchConfig::try_for_len(tiles * THREADS, THREADS as u32)?;
    let exclusive = kind == ScanKind::Exclusive;
    let (identity, epoch, words) = (T::identity(op), scratch.epoch, &mut scratch.words);
    match (op, words_per_tile::<T>() == 1) {
        (ScanOp::Sum, true) => {
            scan_tiles::launch::<T, 0, 1>(stream, config, identity, exclusive, epoch, x, y, words)
        }
        (ScanOp::Min, true) => {
            scan_tiles::launch::<T, 1, 1>(stream, config, identity, exclusive, epoch, x, y, words)
        }
        (ScanOp::Max, true) => {
            scan_tiles::launch::<T, 2, 1>(stream, config, identity, exclusive, epoch, x, y, words)
        }
        (ScanOp::Sum, false) => scan_tiles_wide::launch::<T, 0, 2>(
            stream, config, identity, exclusive, epoch, x, y, words,
        ),
        (ScanOp::Min, false) => scan_tiles_wide::launch::<T, 1, 2>(
            stream, config, identity, exclusive, epoch, x, y, words,
        ),
        (ScanOp::Max, false) => scan_tiles_wide::launch::<T, 2, 2>(
            stream, config, identity, exclusive, epoch, x, y, words,
        ),
    }
}

/// The kernels of this module: generic, instantiated at launch with the element type, the
/// operation (`TemplateArg::Const`: 0 sum, 1 min, 2 max) and the words of a tile's state
/// (`TemplateArg::Const(1)` for 4-byte types, 2 for 8-byte types).
pub const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[&scan_tiles::KERNEL, &scan_tiles_wide::KERNEL];

/// Every instantiation [`scan`] launches: the 4-byte types on `scan_tiles` with one word per
/// tile, the 8-byte types on `scan_tiles_wide` with two, each for the three operations.
pub fn instantiations() -> Vec<(&'static gpu_dsl_runtime::Kernel, Vec<TemplateArg>)> {
    let narrow = [
        TemplateArg::of::<i32>(),
        TemplateArg::of::<u32>(),
        TemplateArg::of::<f32>(),
    ];
    let wide = [
        TemplateArg::of::<i64>(),
        TemplateArg::of::<u64>(),
        TemplateArg::of::<usize>(),
        TemplateArg::of::<f64>(),
    ];
    let mut all = Vec::new();
    for op in [ScanOp::Sum, ScanOp::Min, ScanOp::Max].map(|op| TemplateArg::Const(op as u64)) {
        for ty in narrow {
            all.push((&scan_tiles::KERNEL, vec![ty, op, TemplateArg::Const(1)]));
        }
        for ty in wide {
            all.push((
                &scan_tiles_wide::KERNEL,
                vec![ty, op, TemplateArg::Const(2)],
            ));
        }
    }
    all
}
