//! More classic CUDA programs written as a Rust user writes them (the second set beside
//! `port_kernels.rs`): irregular loads, math functions, scans and sorting networks in shared
//! memory, halo tiles, small integer types, data-dependent loops. `ports2.rs` times each against
//! its CUDA C twin; `tests/ports.rs` checks each against plain Rust.

use gpu_dsl::prelude::*;

/// Threads per block of the Black-Scholes kernel (the sample's `__launch_bounds__(128)`).
pub const OPTIONS_BLOCK: usize = 128;
/// Elements one block of the Blelloch scan scans (two per thread).
pub const SCAN_CHUNK: usize = 512;
/// log2 of the shared-memory banks, for the scan's conflict-free padding.
pub const LOG_NUM_BANKS: usize = 5;
/// Keys one block of the bitonic sort sorts in shared memory (two per thread).
pub const SORT_CHUNK: usize = 1024;
/// Half the taps of the row convolution's filter.
pub const KERNEL_RADIUS: usize = 8;
/// Taps of the row convolution's filter.
pub const KERNEL_LENGTH: usize = 2 * KERNEL_RADIUS + 1;
/// Threads per row of a row-convolution block.
pub const ROWS_BLOCKDIM_X: usize = 16;
/// Rows of a row-convolution block.
pub const ROWS_BLOCKDIM_Y: usize = 4;
/// Outputs per thread of the row convolution, `ROWS_BLOCKDIM_X` apart.
pub const ROWS_RESULT_STEPS: usize = 8;
/// Halo columns on each side of a row-convolution tile, in `ROWS_BLOCKDIM_X` steps.
pub const ROWS_HALO_STEPS: usize = 1;
/// Threads per block of the dot product.
pub const DOT_BLOCK: usize = 256;

/// `y = A · x` for a CSR matrix (`row_ptr`, `cols`, `vals`), one warp per row, its lanes
/// striding over the row's nonzeros and adding up with shuffles (Bell and Garland's "vector"
/// kernel).
#[kernel]
pub fn spmv_csr_vector(row_ptr: &[u32], cols: &[u32], vals: &[f32], x: &[f32], y: &mut [f32]) {
    let row = global_idx().x / 32;
    let lane = global_idx().x % 32;
    if row < y.len() {
        let start = row_ptr[row] as usize;
        let end = row_ptr[row + 1] as usize;
        let mut sum = 0.0f32;
        for j in (start + lane..end).step_by(32) {
            sum += vals[j] * x[cols[j] as usize];
        }
        let mut offset = 16u32;
        while offset > 0 {
            sum += shfl_down_sync(0xffff_ffff, sum, offset);
            offset /= 2;
        }
        if lane == 0 {
            y[row] = sum;
        }
    }
}

/// The cumulative normal distribution by the polynomial approximation of Abramowitz and Stegun
/// (26.2.17), as the CUDA sample computes it.
#[device]
pub fn cnd(d: f32) -> f32 {
    const A1: f32 = 0.319_381_53;
    const A2: f32 = -0.356_563_78;
    const A3: f32 = 1.781_477_9;
    const A4: f32 = -1.821_256;
    const A5: f32 = 1.330_274_4;
    const RSQRT2PI: f32 = 0.398_942_3;
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let cnd =
        RSQRT2PI * (-0.5 * d * d).exp() * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    if d > 0.0 {
        1.0 - cnd
    } else {
        cnd
    }
}

/// The call and put prices of a European option: stock price `s`, strike `x`, `t` years,
/// riskless rate `r`, volatility `v`.
#[device]
pub fn black_scholes_body(s: f32, x: f32, t: f32, r: f32, v: f32) -> (f32, f32) {
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
    let d2 = d1 - v * sqrt_t;
    let cnd_d1 = cnd(d1);
    let cnd_d2 = cnd(d2);
    let exp_rt = (-r * t).exp();
    let call = s * cnd_d1 - x * exp_rt * cnd_d2;
    let put = x * exp_rt * (1.0 - cnd_d2) - s * (1.0 - cnd_d1);
    (call, put)
}

/// Black-Scholes prices of every option, grid-stride, 128-thread blocks (the CUDA sample
/// BlackScholes).
#[kernel(launch_bounds(OPTIONS_BLOCK))]
pub fn black_scholes(
    call: &mut [f32],
    put: &mut [f32],
    price: &[f32],
    strike: &[f32],
    years: &[f32],
    riskfree: f32,
    volatility: f32,
) {
    for opt in (global_idx().x..price.len()).step_by(grid_size().x) {
        let (c, p) = black_scholes_body(price[opt], strike[opt], years[opt], riskfree, volatility);
        call[opt] = c;
        put[opt] = p;
    }
}

/// The padding that keeps the scan's tree accesses off each other's banks.
#[device]
pub fn conflict_free_offset(i: usize) -> usize {
    i >> (LOG_NUM_BANKS as u32)
}

/// Exclusive sums of each `2 · block_dim` elements of `input` into `output`, each block's
/// total into `block_sums`: the work-efficient (Blelloch) scan of GPU Gems 3, chapter 39, in
/// padded dynamic shared memory (`(n + n / 32) · 4` bytes for `n` elements per block).
#[kernel]
pub fn prescan_blocks(input: &[f32], output: &mut [f32], block_sums: &mut [f32]) {
    let temp = dynamic_shared::<f32>();
    let n = 2 * block_dim().x as usize;
    let base = block_idx().x as usize * n;
    let thid = thread_idx().x as usize;
    let ai = thid;
    let bi = thid + n / 2;
    let bank_offset_a = conflict_free_offset(ai);
    let bank_offset_b = conflict_free_offset(bi);
    temp[ai + bank_offset_a] = input[base + ai];
    temp[bi + bank_offset_b] = input[base + bi];
    let mut offset = 1;
    // Up-sweep: build the sums in place up the tree.
    let mut d = n >> 1;
    while d > 0 {
        sync_threads();
        if thid < d {
            let mut ai = offset * (2 * thid + 1) - 1;
            let mut bi = offset * (2 * thid + 2) - 1;
            ai += conflict_free_offset(ai);
            bi += conflict_free_offset(bi);
            temp[bi] += temp[ai];
        }
        offset *= 2;
        d >>= 1;
    }
    if thid == 0 {
        let last = n - 1 + conflict_free_offset(n - 1);
        block_sums[block_idx().x as usize] = temp[last];
        temp[last] = 0.0;
    }
    // Down-sweep: traverse back down, building the scan from the partial sums.
    let mut d = 1;
    while d < n {
        offset >>= 1;
        sync_threads();
        if thid < d {
            let mut ai = offset * (2 * thid + 1) - 1;
            let mut bi = offset * (2 * thid + 2) - 1;
            ai += conflict_free_offset(ai);
            bi += conflict_free_offset(bi);
            let t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
        d *= 2;
    }
    sync_threads();
    output[base + ai] = temp[ai + bank_offset_a];
    output[base + bi] = temp[bi + bank_offset_b];
}

/// Orders `keys[a]`, `keys[b]` (and their values alike): ascending when `dir`.
#[device]
pub fn comparator(keys: &mut [u32], vals: &mut [u32], a: usize, b: usize, dir: bool) {
    if (keys[a] > keys[b]) == dir {
        let key = keys[a];
        keys[a] = keys[b];
        keys[b] = key;
        let val = vals[a];
        vals[a] = vals[b];
        vals[b] = val;
    }
}

/// Sorts each 1024-key chunk of `src_key` (with `src_val`) into `dst_key` / `dst_val`, a
/// bitonic network in shared memory, 512 threads a block (the CUDA sample sortingNetworks'
/// `bitonicSortShared`).
#[kernel]
pub fn bitonic_sort_shared(
    dst_key: &mut [u32],
    dst_val: &mut [u32],
    src_key: &[u32],
    src_val: &[u32],
    ascending: bool,
) {
    let s_key = shared_array::<u32, SORT_CHUNK>();
    let s_val = shared_array::<u32, SORT_CHUNK>();
    let t = thread_idx().x as usize;
    let base = block_idx().x as usize * SORT_CHUNK;
    s_key[t] = src_key[base + t];
    s_val[t] = src_val[base + t];
    s_key[t + SORT_CHUNK / 2] = src_key[base + t + SORT_CHUNK / 2];
    s_val[t + SORT_CHUNK / 2] = src_val[base + t + SORT_CHUNK / 2];
    let mut size = 2;
    while size < SORT_CHUNK {
        // Bitonic merge: alternate directions make bitonic sequences of twice the size.
        let dir = ascending ^ ((t & (size / 2)) != 0);
        let mut stride = size / 2;
        while stride > 0 {
            sync_threads();
            let pos = 2 * t - (t & (stride - 1));
            comparator(s_key, s_val, pos, pos + stride, dir);
            stride >>= 1;
        }
        size <<= 1;
    }
    // The last merge runs the whole chunk in the requested direction.
    let mut stride = SORT_CHUNK / 2;
    while stride > 0 {
        sync_threads();
        let pos = 2 * t - (t & (stride - 1));
        comparator(s_key, s_val, pos, pos + stride, ascending);
        stride >>= 1;
    }
    sync_threads();
    dst_key[base + t] = s_key[t];
    dst_val[base + t] = s_val[t];
    dst_key[base + t + SORT_CHUNK / 2] = s_key[t + SORT_CHUNK / 2];
    dst_val[base + t + SORT_CHUNK / 2] = s_val[t + SORT_CHUNK / 2];
}

/// Convolves each row of a `width`-wide image with the 17 `taps`, zero outside the row: a
/// 16 × 4 block loads 8 result steps and a halo step each side into shared memory (the CUDA
/// sample convolutionSeparable's rows pass; `width` a multiple of 128, the height of 4).
#[kernel]
pub fn convolution_rows(#[constant] taps: &[f32; 17], width: usize, src: &[f32], dst: &mut [f32]) {
    let data = shared_array::<
        [f32; (ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X],
        ROWS_BLOCKDIM_Y,
    >();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    // The image column of this thread's first result. The tile starts a halo left of the
    // block's first result, so tile column `c` holds image column `first - tx + c - halo`.
    let first = block_idx().x as usize * ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X + tx;
    let y = block_idx().y as usize * ROWS_BLOCKDIM_Y + ty;
    let row = &src[y * width..(y + 1) * width];
    let halo = ROWS_HALO_STEPS * ROWS_BLOCKDIM_X;
    #[unroll]
    for i in ROWS_HALO_STEPS..ROWS_HALO_STEPS + ROWS_RESULT_STEPS {
        data[ty][tx + i * ROWS_BLOCKDIM_X] = row[first + i * ROWS_BLOCKDIM_X - halo];
    }
    #[unroll]
    for i in 0..ROWS_HALO_STEPS {
        let x = first + i * ROWS_BLOCKDIM_X;
        data[ty][tx + i * ROWS_BLOCKDIM_X] = if x >= halo { row[x - halo] } else { 0.0 };
    }
    #[unroll]
    for i in ROWS_HALO_STEPS + ROWS_RESULT_STEPS..ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS {
        let x = first + i * ROWS_BLOCKDIM_X - halo;
        data[ty][tx + i * ROWS_BLOCKDIM_X] = if x < width { row[x] } else { 0.0 };
    }
    sync_threads();
    let out = &mut dst[y * width..(y + 1) * width];
    #[unroll]
    for i in ROWS_HALO_STEPS..ROWS_HALO_STEPS + ROWS_RESULT_STEPS {
        let mut sum = 0.0f32;
        #[unroll]
        for j in 0..KERNEL_LENGTH {
            sum += taps[KERNEL_LENGTH - 1 - j]
                * data[ty][tx + i * ROWS_BLOCKDIM_X + j - KERNEL_RADIUS];
        }
        out[first + i * ROWS_BLOCKDIM_X - halo] = sum;
    }
}

/// The largest `v` of the warp, in every lane.
#[device]
pub fn warp_reduce_max(v: f32) -> f32 {
    let mut v = v;
    let mut mask = 16u32;
    while mask > 0 {
        v = v.max(shfl_xor_sync(0xffff_ffff, v, mask));
        mask /= 2;
    }
    v
}

/// The sum of `v` over the warp, in every lane.
#[device]
pub fn warp_reduce_sum(v: f32) -> f32 {
    let mut v = v;
    let mut mask = 16u32;
    while mask > 0 {
        v += shfl_xor_sync(0xffff_ffff, v, mask);
        mask /= 2;
    }
    v
}

/// `y` = the softmax of each `cols`-long row of `x`, a block per row: the row's maximum, the sum
/// of exponentials, then the outputs, each reduction through warp shuffles and one shared slot
/// per warp.
#[kernel]
pub fn softmax_rows(cols: usize, x: &[f32], y: &mut [f32]) {
    let partial = shared_array::<f32, 32>();
    let row = block_idx().x as usize;
    let t = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    let lane = t % 32;
    let warp = t / 32;
    let warps = threads / 32;
    let input = &x[row * cols..(row + 1) * cols];

    let mut max = f32::NEG_INFINITY;
    for i in (t..cols).step_by(threads) {
        max = max.max(input[i]);
    }
    max = warp_reduce_max(max);
    if lane == 0 {
        partial[warp] = max;
    }
    sync_threads();
    max = warp_reduce_max(if lane < warps {
        partial[lane]
    } else {
        f32::NEG_INFINITY
    });
    // Every warp has read the maxima before they are overwritten by the sums.
    sync_threads();

    let mut sum = 0.0f32;
    for i in (t..cols).step_by(threads) {
        sum += (input[i] - max).exp();
    }
    sum = warp_reduce_sum(sum);
    if lane == 0 {
        partial[warp] = sum;
    }
    sync_threads();
    sum = warp_reduce_sum(if lane < warps { partial[lane] } else { 0.0 });

    let inv = 1.0 / sum;
    let output = &mut y[row * cols..(row + 1) * cols];
    for i in (t..cols).step_by(threads) {
        output[i] = (input[i] - max).exp() * inv;
    }
}

/// The Sobel gradient magnitude of a pixel from its eight neighbours (upper-left, upper-middle,
/// ..., lower-right), scaled and clamped to a byte (the CUDA sample SobelFilter's
/// `ComputeSobel`).
#[device]
#[allow(clippy::too_many_arguments)]
pub fn compute_sobel(
    ul: u8,
    um: u8,
    ur: u8,
    ml: u8,
    mr: u8,
    ll: u8,
    lm: u8,
    lr: u8,
    scale: f32,
) -> u8 {
    let horz = ur as i16 + 2 * mr as i16 + lr as i16 - ul as i16 - 2 * ml as i16 - ll as i16;
    let vert = ul as i16 + 2 * um as i16 + ur as i16 - ll as i16 - 2 * lm as i16 - lr as i16;
    let sum = (scale * (horz.abs() as i32 + vert.abs() as i32) as f32) as i16;
    sum.clamp(0, 255) as u8
}

/// Sobel edges of an 8-bit `width × height` image, a thread per pixel, edges clamped as the
/// sample's texture reads clamp them.
#[kernel]
pub fn sobel(width: usize, height: usize, scale: f32, image: &[u8], edges: &mut [u8]) {
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x < width && y < height {
        let left = if x > 0 { x - 1 } else { 0 };
        let right = (x + 1).min(width - 1);
        let up = if y > 0 { y - 1 } else { 0 };
        let down = (y + 1).min(height - 1);
        let at = |px: usize, py: usize| image[py * width + px];
        edges[y * width + x] = compute_sobel(
            at(left, up),
            at(x, up),
            at(right, up),
            at(left, y),
            at(right, y),
            at(left, down),
            at(x, down),
            at(right, down),
            scale,
        );
    }
}

/// Escape-time iterations of each pixel of a `width × height` view of the Mandelbrot set whose
/// lower-left corner is (`x_min`, `y_min`), `step` apart, at most `max_iter`.
#[kernel]
pub fn mandelbrot(
    width: usize,
    height: usize,
    x_min: f32,
    y_min: f32,
    step: f32,
    max_iter: u32,
    iterations: &mut [u32],
) {
    let px = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let py = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if px < width && py < height {
        let cx = x_min + px as f32 * step;
        let cy = y_min + py as f32 * step;
        let mut x = 0.0f32;
        let mut y = 0.0f32;
        let mut i = 0;
        while i < max_iter && x * x + y * y <= 4.0 {
            let xt = x * x - y * y + cx;
            y = 2.0 * x * y + cy;
            x = xt;
            i += 1;
        }
        iterations[py * width + px] = i;
    }
}

/// `y = A · x` for a row-major `A` with `cols` columns, a warp per row, shuffles adding up.
#[kernel]
pub fn gemv_warp(cols: usize, a: &[f32], x: &[f32], y: &mut [f32]) {
    let row = global_idx().x / 32;
    let lane = thread_idx().x as usize % 32;
    if row < y.len() {
        let a_row = &a[row * cols..(row + 1) * cols];
        let mut sum = 0.0f32;
        for j in (lane..cols).step_by(32) {
            sum += a_row[j] * x[j];
        }
        sum = warp_reduce_sum(sum);
        if lane == 0 {
            y[row] = sum;
        }
    }
}

/// Adds `a · b` to `total[0]`: grid-stride products, a shared-memory tree halving each step,
/// one atomic per block (CUDA by Example, chapter 5, with an atomic for the last step).
#[kernel]
pub fn dot(a: &[f32], b: &[f32], total: &mut [f32]) {
    let cache = shared_array::<f32, DOT_BLOCK>();
    let t = thread_idx().x as usize;
    let mut temp = 0.0f32;
    for i in (global_idx().x..a.len()).step_by(grid_size().x) {
        temp += a[i] * b[i];
    }
    cache[t] = temp;
    sync_threads();
    let mut i = block_dim().x as usize / 2;
    while i != 0 {
        if t < i {
            cache[t] += cache[t + i];
        }
        sync_threads();
        i /= 2;
    }
    if t == 0 {
        total.atomic_add(0, cache[0]);
    }
}

/// The Walsh-Hadamard transform of each `2^log2n`-element chunk of `input` into `output`,
/// radix-4 butterflies in dynamic shared memory (`2^log2n · 4` bytes) and one radix-2 stage when
/// `log2n` is odd, `2^log2n / 4` threads a block (the CUDA sample fastWalshTransform's
/// `fwtBatch1Kernel`).
#[kernel]
pub fn fwt_batch1(output: &mut [f32], input: &[f32], log2n: u32) {
    let data = dynamic_shared::<f32>();
    let n = 1usize << log2n;
    let base = (block_idx().x as usize) << log2n;
    let t = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    for pos in (t..n).step_by(threads) {
        data[pos] = input[base + pos];
    }
    let mut stride = n >> 2;
    while stride > 0 {
        let lo = t & (stride - 1);
        let i0 = ((t - lo) << 2) + lo;
        let i1 = i0 + stride;
        let i2 = i1 + stride;
        let i3 = i2 + stride;
        sync_threads();
        let (d0, d1, d2, d3) = (data[i0], data[i1], data[i2], data[i3]);
        let (d0, d2) = (d0 + d2, d0 - d2);
        let (d1, d3) = (d1 + d3, d1 - d3);
        data[i0] = d0 + d1;
        data[i1] = d0 - d1;
        data[i2] = d2 + d3;
        data[i3] = d2 - d3;
        stride >>= 2;
    }
    if log2n & 1 != 0 {
        sync_threads();
        for pos in (t..n / 2).step_by(threads) {
            let i0 = pos << 1;
            let i1 = i0 + 1;
            let (d0, d1) = (data[i0], data[i1]);
            data[i0] = d0 + d1;
            data[i1] = d0 - d1;
        }
    }
    sync_threads();
    for pos in (t..n).step_by(threads) {
        output[base + pos] = data[pos];
    }
}
