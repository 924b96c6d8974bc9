//! The eighteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): Rodinia's blocked LU decomposition (diagonal, perimeter and internal
//! kernels over 16 × 16 shared tiles), the CUDA samples' recursiveGaussian (a Deriche filter, a
//! thread per column, on RGBA pixels held in a `#[device]` struct with operators), the CUDA
//! samples' MonteCarlo option pricing (a block per option, a per-thread xorshift generator
//! as a `#[device]` struct with `&mut self` methods, a tree reduction of a shared array of
//! structs), and the local split of a 4-bit radix sort (four 1-bit splits, each a block-wide
//! scan in shared memory, and the block's digit counts).

use gpu_dsl::prelude::*;

/// The side of LUD's square tiles (Rodinia's `BLOCK_SIZE`).
pub const LUD_BLOCK: usize = 16;

/// Threads of a Monte Carlo block (the CUDA sample's `THREAD_N`).
pub const MC_THREADS: usize = 256;

/// Keys a radix-split block sorts, one a thread.
pub const SPLIT_BLOCK: usize = 256;

/// Digits of the 4-bit radix split.
pub const RADIX: usize = 16;

/// Factors out the `LUD_BLOCK × LUD_BLOCK` diagonal tile at `(offset, offset)` of the row-major
/// `n × n` matrix `a` in place (Doolittle, no pivoting: a unit lower and an upper triangle),
/// one block of `LUD_BLOCK` threads.
#[kernel]
pub fn lud_diagonal(a: &mut [f32], n: usize, offset: usize) {
    let tile = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let t = thread_idx().x as usize;
    for i in 0..LUD_BLOCK {
        tile[i][t] = a[(offset + i) * n + offset + t];
    }
    sync_threads();
    for i in 0..LUD_BLOCK - 1 {
        // Column i of L below the diagonal, then row i + 1 of U from it.
        if t > i {
            for j in 0..i {
                tile[t][i] -= tile[t][j] * tile[j][i];
            }
            tile[t][i] /= tile[i][i];
        }
        sync_threads();
        if t > i {
            for j in 0..=i {
                tile[i + 1][t] -= tile[i + 1][j] * tile[j][t];
            }
        }
        sync_threads();
    }
    // Row 0 of U is row 0 of the tile, unchanged.
    for i in 1..LUD_BLOCK {
        a[(offset + i) * n + offset + t] = tile[i][t];
    }
}

/// Solves the tiles right of and below the diagonal tile at `(offset, offset)` against its
/// factors: `2 * LUD_BLOCK` threads a block, block `b` taking the `b + 1`-th tile of each;
/// the first half computes a tile of U (column by column), the second a tile of L (row by row).
#[kernel]
pub fn lud_perimeter(a: &mut [f32], n: usize, offset: usize) {
    let dia = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let row_tile = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let col_tile = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let t = thread_idx().x as usize;
    let start = offset + (block_idx().x as usize + 1) * LUD_BLOCK;
    if t < LUD_BLOCK {
        for i in 0..LUD_BLOCK / 2 {
            dia[i][t] = a[(offset + i) * n + offset + t];
        }
        for i in 0..LUD_BLOCK {
            row_tile[i][t] = a[(offset + i) * n + start + t];
        }
    } else {
        let c = t - LUD_BLOCK;
        for i in LUD_BLOCK / 2..LUD_BLOCK {
            dia[i][c] = a[(offset + i) * n + offset + c];
        }
        for i in 0..LUD_BLOCK {
            col_tile[i][c] = a[(start + i) * n + offset + c];
        }
    }
    sync_threads();
    if t < LUD_BLOCK {
        for i in 1..LUD_BLOCK {
            for j in 0..i {
                row_tile[i][t] -= dia[i][j] * row_tile[j][t];
            }
        }
    } else {
        let r = t - LUD_BLOCK;
        for i in 0..LUD_BLOCK {
            for j in 0..i {
                col_tile[r][i] -= col_tile[r][j] * dia[j][i];
            }
            col_tile[r][i] /= dia[i][i];
        }
    }
    // Each thread of the second half solved a row; the stores go by columns, coalesced.
    sync_threads();
    if t < LUD_BLOCK {
        for i in 1..LUD_BLOCK {
            a[(offset + i) * n + start + t] = row_tile[i][t];
        }
    } else {
        let c = t - LUD_BLOCK;
        for i in 0..LUD_BLOCK {
            a[(start + i) * n + offset + c] = col_tile[i][c];
        }
    }
}

/// Subtracts from each tile below and right of the perimeter the product of its row's L tile
/// and its column's U tile: a `LUD_BLOCK × LUD_BLOCK` block a tile, a thread an element.
#[kernel]
pub fn lud_internal(a: &mut [f32], n: usize, offset: usize) {
    let row_tile = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let col_tile = shared_array::<[f32; LUD_BLOCK], LUD_BLOCK>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = offset + (block_idx().y as usize + 1) * LUD_BLOCK;
    let col = offset + (block_idx().x as usize + 1) * LUD_BLOCK;
    row_tile[ty][tx] = a[(offset + ty) * n + col + tx];
    col_tile[ty][tx] = a[(row + ty) * n + offset + tx];
    sync_threads();
    let sum: f32 = (0..LUD_BLOCK)
        .map(|k| col_tile[ty][k] * row_tile[k][tx])
        .sum();
    a[(row + ty) * n + col + tx] -= sum;
}

/// The LU decomposition of the `n × n` matrix `a` in place (`n` a multiple of `LUD_BLOCK`),
/// Rodinia's host loop: per step of `LUD_BLOCK`, the diagonal tile, its perimeter, the rest.
pub fn lud(stream: &Stream, n: usize, a: &mut DeviceBuffer<f32>) -> gpu_dsl::Result<()> {
    let tiles = |offset: usize| ((n - offset) / LUD_BLOCK - 1) as u32;
    let diagonal = LaunchConfig::new(Grid::x(1), Block::x(LUD_BLOCK as u32));
    let mut offset = 0;
    while offset + LUD_BLOCK < n {
        lud_diagonal::launch(stream, diagonal, a, n, offset)?;
        let perimeter = LaunchConfig::new(Grid::x(tiles(offset)), Block::x(2 * LUD_BLOCK as u32));
        lud_perimeter::launch(stream, perimeter, a, n, offset)?;
        let internal = LaunchConfig::new(
            Grid::xy(tiles(offset), tiles(offset)),
            Block::xy(LUD_BLOCK as u32, LUD_BLOCK as u32),
        );
        lud_internal::launch(stream, internal, a, n, offset)?;
        offset += LUD_BLOCK;
    }
    lud_diagonal::launch(stream, diagonal, a, n, offset)
}

/// A pixel's four channels in [0, 1].
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Rgba {
    pub r: f32,
    pub g: f32,
    pub b: f32,
    pub a: f32,
}

/// `1 / 255`, so that unpacking multiplies.
const INV_255: f32 = 1.0 / 255.0;

#[device]
impl Rgba {
    /// The channels of a pixel packed as bytes `r, g, b, a` from the lowest.
    pub fn unpack(c: u32) -> Rgba {
        let [r, g, b, a] = c.to_le_bytes();
        Rgba {
            r: f32::from(r) * INV_255,
            g: f32::from(g) * INV_255,
            b: f32::from(b) * INV_255,
            a: f32::from(a) * INV_255,
        }
    }

    /// The pixel packed back, each channel's magnitude saturated to [0, 1].
    pub fn pack(self) -> u32 {
        u32::from_le_bytes([
            channel(self.r),
            channel(self.g),
            channel(self.b),
            channel(self.a),
        ])
    }
}

/// A channel as a byte, as the sample's `__saturatef(fabs(x)) * 255` truncates it.
#[device]
fn channel(v: f32) -> u8 {
    (v.abs().min(1.0) * 255.0) as u8
}

#[device]
impl core::ops::Add for Rgba {
    type Output = Rgba;
    fn add(self, o: Rgba) -> Rgba {
        Rgba {
            r: self.r + o.r,
            g: self.g + o.g,
            b: self.b + o.b,
            a: self.a + o.a,
        }
    }
}

#[device]
impl core::ops::Sub for Rgba {
    type Output = Rgba;
    fn sub(self, o: Rgba) -> Rgba {
        Rgba {
            r: self.r - o.r,
            g: self.g - o.g,
            b: self.b - o.b,
            a: self.a - o.a,
        }
    }
}

#[device]
impl core::ops::Mul<f32> for Rgba {
    type Output = Rgba;
    fn mul(self, s: f32) -> Rgba {
        Rgba {
            r: self.r * s,
            g: self.g * s,
            b: self.b * s,
            a: self.a * s,
        }
    }
}

/// The coefficients of a Deriche recursive filter approximating a Gaussian.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Deriche {
    pub a0: f32,
    pub a1: f32,
    pub a2: f32,
    pub a3: f32,
    pub b1: f32,
    pub b2: f32,
    /// The forward pass's response to a constant edge, so the image reads as clamped.
    pub coefp: f32,
    /// The same for the backward pass.
    pub coefn: f32,
}

impl Deriche {
    /// The smoothing (order 0) filter of deviation `sigma`, as the sample computes it.
    pub fn gaussian(sigma: f32) -> Deriche {
        let alpha = 1.695 / sigma.max(0.1);
        let ema = (-alpha).exp();
        let ema2 = (-2.0 * alpha).exp();
        let (b1, b2) = (-2.0 * ema, ema2);
        let k = (1.0 - ema) * (1.0 - ema) / (1.0 + 2.0 * alpha * ema - ema2);
        let (a0, a1, a2, a3) = (
            k,
            k * (alpha - 1.0) * ema,
            k * (alpha + 1.0) * ema,
            -k * ema2,
        );
        Deriche {
            a0,
            a1,
            a2,
            a3,
            b1,
            b2,
            coefp: (a0 + a1) / (1.0 + b1 + b2),
            coefn: (a2 + a3) / (1.0 + b1 + b2),
        }
    }
}

/// Filters each column of a `width × height` RGBA image with `f` (the CUDA samples'
/// `d_recursiveGaussian_rgba`, clamped to the edge): a thread per column runs the causal pass
/// down it into `output`, then the anti-causal pass up it, adding its response.
#[kernel]
pub fn recursive_gaussian_rgba(
    input: &[u32],
    output: &mut [u32],
    width: usize,
    height: usize,
    f: Deriche,
) {
    let x = global_idx().x;
    if x >= width {
        return;
    }
    let mut xp = Rgba::unpack(input[x]);
    let mut yb = xp * f.coefp;
    let mut yp = yb;
    for y in 0..height {
        let i = y * width + x;
        let xc = Rgba::unpack(input[i]);
        let yc = xc * f.a0 + xp * f.a1 - yp * f.b1 - yb * f.b2;
        output[i] = yc.pack();
        (xp, yb, yp) = (xc, yp, yc);
    }
    let mut xn = Rgba::unpack(input[(height - 1) * width + x]);
    let mut xa = xn;
    let mut yn = xn * f.coefn;
    let mut ya = yn;
    for y in (0..height).rev() {
        let i = y * width + x;
        let xc = Rgba::unpack(input[i]);
        let yc = xn * f.a2 + xa * f.a3 - yn * f.b1 - ya * f.b2;
        (xa, xn, ya, yn) = (xn, xc, yn, yc);
        output[i] = (Rgba::unpack(output[i]) + yc).pack();
    }
}

/// A European option: spot price, strike, years to expiry, riskless rate and volatility.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct OptionData {
    pub s: f32,
    pub x: f32,
    pub t: f32,
    pub r: f32,
    pub v: f32,
}

/// A block's sums over its paths of the call's payoff and of its square.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct PayoffSums {
    pub sum: f32,
    pub sum_sq: f32,
}

#[device]
impl core::ops::AddAssign for PayoffSums {
    fn add_assign(&mut self, o: PayoffSums) {
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }
}

/// Marsaglia's xorshift32 generator.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct XorShift {
    pub state: u32,
}

#[device]
impl XorShift {
    /// A generator for `stream` of `seed`: both hashed (Wang's hash) so that neighbouring
    /// streams start far apart, and never the all-zero state xorshift cannot leave.
    pub fn new(seed: u32, stream: u32) -> XorShift {
        let mut h = seed ^ stream.wrapping_mul(0x9E37_79B9);
        h = (h ^ 61) ^ (h >> 16);
        h = h.wrapping_mul(9);
        h ^= h >> 4;
        h = h.wrapping_mul(0x27D4_EB2D);
        h ^= h >> 15;
        XorShift { state: h | 1 }
    }

    /// The next word.
    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state = x;
        x
    }

    /// A uniform float in (0, 1], from the word's top 24 bits.
    pub fn uniform(&mut self) -> f32 {
        ((self.next_u32() >> 8) + 1) as f32 * (1.0 / 16_777_216.0)
    }

    /// Two independent standard normal samples (Box–Muller).
    pub fn normal_pair(&mut self) -> (f32, f32) {
        let radius = (-2.0 * self.uniform().ln()).sqrt();
        let (s, c) = (core::f32::consts::TAU * self.uniform()).sin_cos();
        (radius * c, radius * s)
    }
}

/// Prices option `block_idx().x` by `path_n` paths of its stock (`path_n` even; the CUDA
/// samples' MonteCarlo, one block an option): each of `MC_THREADS` threads draws normal pairs
/// from its own generator and sums the call's payoff at expiry, and the block adds the
/// threads' sums up a tree in shared memory. The host discounts: price = e^(-rT) sum / path_n.
#[kernel]
pub fn monte_carlo_call(seed: u32, path_n: usize, options: &[OptionData], sums: &mut [PayoffSums]) {
    let partial = shared_array::<PayoffSums, MC_THREADS>();
    let t = thread_idx().x as usize;
    let o = block_idx().x as usize;
    let opt = options[o];
    let mu_by_t = (opt.r - 0.5 * opt.v * opt.v) * opt.t;
    let v_by_sqrt_t = opt.v * opt.t.sqrt();
    let mut rng = XorShift::new(seed, (o * MC_THREADS + t) as u32);
    let mut acc = PayoffSums::default();
    for _ in (t..path_n / 2).step_by(MC_THREADS) {
        let (z0, z1) = rng.normal_pair();
        for z in [z0, z1] {
            let payoff = (opt.s * (mu_by_t + v_by_sqrt_t * z).exp() - opt.x).max(0.0);
            acc += PayoffSums {
                sum: payoff,
                sum_sq: payoff * payoff,
            };
        }
    }
    partial[t] = acc;
    sync_threads();
    let mut stride = MC_THREADS / 2;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        sums[o] = partial[0];
    }
}

/// Sorts each `SPLIT_BLOCK`-key chunk of `keys` by the 4-bit digit at bit `shift` (stably)
/// into `sorted`, and counts the chunk's keys of each digit into `counts[digit * chunks +
/// chunk]`, the layout whose exclusive scan gives every chunk's digit its global offset (the
/// local pass of the CUDA samples' radixSort; `keys.len()` a multiple of `SPLIT_BLOCK`).
/// Each bit is a stable split: ones after zeros, a one's place its count of ones before it,
/// from a block-wide Hillis–Steele scan in shared memory.
#[kernel]
pub fn radix_split_4bit(shift: u32, keys: &[u32], sorted: &mut [u32], counts: &mut [u32]) {
    let tile = shared_array::<u32, SPLIT_BLOCK>();
    let scan = shared_array::<u32, SPLIT_BLOCK>();
    let digits = shared_array::<u32, RADIX>();
    let t = thread_idx().x as usize;
    let chunk = block_idx().x as usize;
    let chunks = keys.len() / SPLIT_BLOCK;
    let mut key = keys[chunk * SPLIT_BLOCK + t];
    for bit in shift..shift + 4 {
        let one = (key >> bit) & 1;
        scan[t] = one;
        sync_threads();
        let mut offset = 1;
        while offset < SPLIT_BLOCK {
            let before = if t >= offset { scan[t - offset] } else { 0 };
            sync_threads();
            scan[t] += before;
            sync_threads();
            offset *= 2;
        }
        let ones_before = scan[t] - one;
        let zeros = SPLIT_BLOCK as u32 - scan[SPLIT_BLOCK - 1];
        let dest = if one == 1 {
            zeros + ones_before
        } else {
            t as u32 - ones_before
        };
        tile[dest as usize] = key;
        sync_threads();
        key = tile[t];
    }
    sorted[chunk * SPLIT_BLOCK + t] = key;
    if t < RADIX {
        digits[t] = 0;
    }
    sync_threads();
    digits.atomic_add(((key >> shift) & 15) as usize, 1);
    sync_threads();
    if t < RADIX {
        counts[t * chunks + chunk] = digits[t];
    }
}
