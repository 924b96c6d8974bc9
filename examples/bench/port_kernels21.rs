//! The twenty-first set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): PolyBench-GPU's correlation (column means, standard deviations, the
//! centred and scaled data, and the correlation matrix a thread per row of its upper triangle)
//! and fdtd-2d (the three field updates of a time step, a thread per element), Parboil's cutcp
//! (the cutoff Coulombic potential on a lattice, atoms binned and each neighbourhood bin staged
//! in shared memory, the bins' offsets in a `#[constant]` table), and the CUDA samples'
//! `mergeSortShared` (runs of 1024 key-value pairs sorted in shared memory by merging with
//! binary-search ranks).

use gpu_dsl::prelude::*;

/// PolyBench-GPU's `FLOAT_N`, the divisor of the means and variances.
pub const FLOAT_N: f32 = 3_214_212.0;

/// A standard deviation at or below this is taken as 1 (PolyBench's `EPS`).
pub const EPS: f32 = 0.005;

/// Threads of a block of the one-dimensional correlation kernels (PolyBench-GPU's
/// `DIM_THREAD_BLOCK_KERNEL_1_X`).
pub const CORR_THREADS: u32 = 256;

/// The blocks of the two-dimensional kernels, correlation's reduce and fdtd-2d's three
/// (PolyBench-GPU's `32 × 8`).
pub const BLOCK_2D: Block = Block::xy(32, 8);

/// A grid of `BLOCK_2D` blocks over `rows × columns` threads.
pub fn grid_2d(rows: usize, columns: usize) -> gpu_dsl::Result<LaunchConfig> {
    let grid = Grid::try_xy(columns.div_ceil(32), rows.div_ceil(8))?;
    Ok(LaunchConfig::new(grid, BLOCK_2D))
}

/// PolyBench's correlation of the `m` columns of the row-major `data`, whose values it
/// centres and scales in place, on the host's side: the four kernels one after the other.
pub fn correlation(
    stream: &Stream,
    m: usize,
    data: &mut DeviceBuffer<f32>,
    mean: &mut DeviceBuffer<f32>,
    std: &mut DeviceBuffer<f32>,
    symmat: &mut DeviceBuffer<f32>,
) -> gpu_dsl::Result<()> {
    let columns = LaunchConfig::try_for_len(m, CORR_THREADS)?;
    corr_mean::launch(stream, columns, data, mean)?;
    corr_std::launch(stream, columns, data, mean, std)?;
    corr_reduce::launch(stream, grid_2d(data.len() / m, m)?, mean, std, data)?;
    corr_corr::launch(stream, columns, data, m, symmat)
}

/// Each column's mean over the rows of the row-major `data` (`data.len() / mean.len()` rows of
/// `mean.len()` columns; PolyBench-GPU's `mean_kernel`), a thread per column.
#[kernel]
pub fn corr_mean(data: &[f32], mean: &mut [f32]) {
    let m = mean.len();
    let j = global_idx().x;
    if j < m {
        let n = data.len() / m;
        mean[j] = (0..n).map(|i| data[i * m + j]).sum::<f32>() / FLOAT_N;
    }
}

/// Each column's standard deviation, 1 where it is at most `EPS` (PolyBench-GPU's
/// `std_kernel`), a thread per column.
#[kernel]
pub fn corr_std(data: &[f32], mean: &[f32], std: &mut [f32]) {
    let m = mean.len();
    let j = global_idx().x;
    if j < m {
        let n = data.len() / m;
        let mu = mean[j];
        let variance = (0..n)
            .map(|i| {
                let d = data[i * m + j] - mu;
                d * d
            })
            .sum::<f32>()
            / FLOAT_N;
        let s = variance.sqrt();
        std[j] = if s <= EPS { 1.0 } else { s };
    }
}

/// Centres each element on its column's mean and scales it by `sqrt(FLOAT_N)` times the
/// column's deviation (PolyBench-GPU's `reduce_kernel`), a thread per element of a 2-D grid.
#[kernel]
pub fn corr_reduce(mean: &[f32], std: &[f32], data: &mut [f32]) {
    let m = mean.len();
    let j = global_idx().x;
    let i = global_idx().y;
    if i < data.len() / m && j < m {
        data[i * m + j] -= mean[j];
        data[i * m + j] /= FLOAT_N.sqrt() * std[j];
    }
}

/// The `m × m` correlation matrix of the reduced `data` (PolyBench-GPU's `corr_kernel`): the
/// thread of row `j1` writes its diagonal and, for every `j2 > j1`, the dot product of columns
/// `j1` and `j2` on both sides of the diagonal.
#[kernel]
pub fn corr_corr(data: &[f32], m: usize, symmat: &mut [f32]) {
    let j1 = global_idx().x;
    if j1 < m {
        let n = data.len() / m;
        symmat[j1 * m + j1] = 1.0;
        for j2 in j1 + 1..m {
            let s: f32 = (0..n).map(|i| data[i * m + j1] * data[i * m + j2]).sum();
            symmat[j1 * m + j2] = s;
            symmat[j2 * m + j1] = s;
        }
    }
}

/// fdtd-2d's update of `ey` (`(nx + 1) × ny`) from `hz` (`nx × ny`) at time step `t`
/// (PolyBench-GPU's `fdtd_step1_kernel`): row 0 takes the source `fict[t]`. Its index
/// products compute in 64 bits (as `fdtd_ex`'s do, where the twins' are `int`): a product or
/// two per thread is not worth the 32-bit body the launch would pick (see
/// `Ranges::gains_at_launch`); `fdtd_hz`, with four, has one.
#[kernel]
pub fn fdtd_ey(fict: &[f32], t: usize, hz: &[f32], ey: &mut [f32], nx: usize, ny: usize) {
    let j = global_idx().x;
    let i = global_idx().y;
    if i < nx && j < ny {
        ey[i * ny + j] = if i == 0 {
            fict[t]
        } else {
            ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j])
        };
    }
}

/// fdtd-2d's update of `ex` (`nx × (ny + 1)`) from `hz`, column 0 left alone
/// (PolyBench-GPU's `fdtd_step2_kernel`).
#[kernel]
pub fn fdtd_ex(hz: &[f32], ex: &mut [f32], nx: usize, ny: usize) {
    let j = global_idx().x;
    let i = global_idx().y;
    if i < nx && j < ny && j > 0 {
        ex[i * (ny + 1) + j] -= 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
    }
}

/// fdtd-2d's update of `hz` from the curl of `ex` and `ey` (PolyBench-GPU's
/// `fdtd_step3_kernel`).
#[kernel]
pub fn fdtd_hz(ex: &[f32], ey: &[f32], hz: &mut [f32], nx: usize, ny: usize) {
    let j = global_idx().x;
    let i = global_idx().y;
    if i < nx && j < ny {
        hz[i * ny + j] -= 0.7
            * (ex[i * (ny + 1) + j + 1] - ex[i * (ny + 1) + j] + ey[(i + 1) * ny + j]
                - ey[i * ny + j]);
    }
}

/// fdtd-2d's fields: `ex` is `nx × (ny + 1)`, `ey` `(nx + 1) × ny`, `hz` `nx × ny`.
pub struct Fields {
    pub ex: DeviceBuffer<f32>,
    pub ey: DeviceBuffer<f32>,
    pub hz: DeviceBuffer<f32>,
}

/// Time step `t` of fdtd-2d over an `nx × ny` grid: PolyBench-GPU's three kernels in turn.
pub fn fdtd_step(
    stream: &Stream,
    fict: &DeviceBuffer<f32>,
    t: usize,
    fields: &mut Fields,
    nx: usize,
    ny: usize,
) -> gpu_dsl::Result<()> {
    let config = grid_2d(nx, ny)?;
    fdtd_ey::launch(stream, config, fict, t, &fields.hz, &mut fields.ey, nx, ny)?;
    fdtd_ex::launch(stream, config, &fields.hz, &mut fields.ex, nx, ny)?;
    fdtd_hz::launch(
        stream,
        config,
        &fields.ex,
        &fields.ey,
        &mut fields.hz,
        nx,
        ny,
    )
}

/// Atoms a cutcp bin holds at most (Parboil's `BIN_DEPTH`); a charge of 0 ends a bin early.
pub const BIN_DEPTH: usize = 8;

/// Floats of a bin: `x, y, z, q` of each atom (Parboil's `BIN_SIZE`).
pub const BIN_SIZE: usize = 4 * BIN_DEPTH;

/// Bins a block stages in shared memory at once (Parboil's `BIN_CACHE_MAXLEN`).
pub const BIN_CACHE_MAXLEN: usize = 32;

/// The side of a bin in Ångström (Parboil's `BIN_LENGTH`).
pub const BIN_LENGTH: f32 = 4.0;

/// Lattice points of a region, a block's `8 × 8 × 8` (Parboil's `REGION_SIZE`).
pub const REGION_SIZE: usize = 512;

/// The most neighbourhood bins: the `5³` around a bin, enough for a cutoff of two bin lengths
/// (Parboil reserves `11³`, which a kernel's 4 KiB of parameters cannot hold).
pub const NBRLIST_MAXLEN: usize = 125;

/// The cutoff potential at the lattice points of the block's region (Parboil's
/// `cuda_cutoff_potential_lattice6overlap`): a block of `8 × 2 × 8` threads per region of
/// `8³` points spaced `h` apart, a thread computing the four points `y, y + 2h, y + 4h, y + 6h`.
/// The block walks the neighbourhood bins of its region's centre (offsets `nbr_list[..nbr_len]`
/// of the bin grid `bin_dim_x × bin_dim_y × ..`, whose outer `pad` layers surround the lattice),
/// 32 at a time staged in shared memory by half-warps, and each thread sums `q / r · (1 -
/// r² / cutoff²)²` over the atoms within the cutoff. Regions are stored one after the other,
/// `[z][y][x]` inside. Parboil launches a grid per plane of regions; here `block_idx().z` is the
/// plane.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn cutcp_lattice(
    #[constant] nbr_list: &[[i32; 3]; NBRLIST_MAXLEN],
    nbr_len: usize,
    bin_dim_x: usize,
    bin_dim_y: usize,
    pad: i32,
    bins: &[f32],
    h: f32,
    cutoff2: f32,
    inv_cutoff2: f32,
    regions: &mut [f32],
) {
    let cache = shared_array::<f32, { BIN_CACHE_MAXLEN * BIN_SIZE }>();
    let (tx, ty, tz) = (
        thread_idx().x as usize,
        thread_idx().y as usize,
        thread_idx().z as usize,
    );
    let tid = (tz * 2 + ty) * 8 + tx;
    let (rx, ry, rz) = (
        block_idx().x as usize,
        block_idx().y as usize,
        block_idx().z as usize,
    );
    let region = ((rz * grid_dim().y as usize + ry) * grid_dim().x as usize + rx) * REGION_SIZE;
    let x = (8 * rx + tx) as f32 * h;
    let y = (8 * ry + ty) as f32 * h;
    let z = (8 * rz + tz) as f32 * h;
    // The bin holding the region's centre, in the padded grid.
    let centre = |r: usize| ((8 * r + 4) as f32 * h / BIN_LENGTH).floor() as i32 + pad;
    let (bx, by, bz) = (centre(rx), centre(ry), centre(rz));
    let half_warp = tid / 16;
    let lane = tid % 16;
    let mut energy = [0.0f32; 4];
    for first in (0..nbr_len).step_by(BIN_CACHE_MAXLEN) {
        // Each half-warp stages up to 4 bins, 32 floats each.
        for k in 0..4 {
            let slot = half_warp + 8 * k;
            if first + slot >= nbr_len {
                break;
            }
            let [dx, dy, dz] = nbr_list[first + slot];
            let bin = ((bz + dz) as usize * bin_dim_y + (by + dy) as usize) * bin_dim_x
                + (bx + dx) as usize;
            cache[slot * BIN_SIZE + lane] = bins[bin * BIN_SIZE + lane];
            cache[slot * BIN_SIZE + lane + 16] = bins[bin * BIN_SIZE + lane + 16];
        }
        sync_threads();
        let cached = (nbr_len - first).min(BIN_CACHE_MAXLEN);
        for bin in cache[..cached * BIN_SIZE].chunks_exact(BIN_SIZE) {
            for atom in bin.chunks_exact(4) {
                let q = atom[3];
                if q == 0.0 {
                    break;
                }
                let dx = atom[0] - x;
                let dz = atom[2] - z;
                let dxdz2 = dx * dx + dz * dz;
                let mut dy = atom[1] - y;
                #[unroll]
                for e in energy.iter_mut() {
                    let r2 = dy * dy + dxdz2;
                    if r2 < cutoff2 {
                        let s = 1.0 - r2 * inv_cutoff2;
                        *e += q * r2.rsqrt() * s * s;
                    }
                    dy -= 2.0 * h;
                }
            }
        }
        sync_threads();
    }
    for (k, e) in energy.iter().enumerate() {
        regions[region + tid / 16 * 64 + tid % 16 + 16 * k] = *e;
    }
}

/// Parboil's neighbourhood of a bin for a region of one bin's size: the offsets within
/// `ceil(cutoff / BIN_LENGTH)` bins in each direction whose centres lie closer than `cutoff`
/// plus a bin's diagonal, `x` fastest.
pub fn cutcp_neighbours(cutoff: f32) -> Vec<[i32; 3]> {
    let c = (cutoff / BIN_LENGTH).ceil() as i32;
    let reach = cutoff + 3f32.sqrt() * BIN_LENGTH;
    let mut list = Vec::new();
    for k in -c..=c {
        for j in -c..=c {
            for i in -c..=c {
                if ((i * i + j * j + k * k) as f32) * BIN_LENGTH * BIN_LENGTH < reach * reach {
                    list.push([i, j, k]);
                }
            }
        }
    }
    list
}

/// The table `cutcp_lattice` takes: `list` padded with zeros.
pub fn cutcp_table(list: &[[i32; 3]]) -> [[i32; 3]; NBRLIST_MAXLEN] {
    let mut table = [[0; 3]; NBRLIST_MAXLEN];
    table[..list.len()].copy_from_slice(list);
    table
}

/// A grid of atom bins around a lattice of `dims` points spaced `h` apart, `pad` bins on each
/// side beyond it, as Parboil's host code bins its atoms.
#[derive(Clone, Debug, PartialEq)]
pub struct Bins {
    /// Bins along x, y and z, the padding included.
    pub dims: [usize; 3],
    /// Layers of bins around the lattice's bins.
    pub pad: usize,
    /// `x, y, z, q` of up to `BIN_DEPTH` atoms a bin, x fastest; unused slots are zero.
    pub words: Vec<f32>,
    /// The atoms that found a place, as `[x, y, z, q]`.
    pub kept: Vec<[f32; 4]>,
}

/// Bins `atoms` (`[x, y, z, q]`, in the lattice's coordinates) for a lattice of `dims` points
/// spaced `h` apart and `cutoff`; atoms outside the padded grid, of charge 0 or in a full bin
/// are left out (Parboil sums a full bin's extra atoms on the CPU).
pub fn cutcp_bins(atoms: &[[f32; 4]], dims: [usize; 3], h: f32, cutoff: f32) -> Bins {
    let pad = (cutoff / BIN_LENGTH).ceil() as usize;
    let bin_dims = dims.map(|d| (d as f32 * h / BIN_LENGTH).ceil() as usize + 2 * pad);
    let mut words = vec![0.0; bin_dims.iter().product::<usize>() * BIN_SIZE];
    let mut counts = vec![0usize; bin_dims.iter().product()];
    let mut kept = Vec::new();
    for atom in atoms {
        let cell: [i64; 3] =
            std::array::from_fn(|d| (atom[d] / BIN_LENGTH).floor() as i64 + pad as i64);
        let inside = cell
            .iter()
            .zip(&bin_dims)
            .all(|(&c, &n)| c >= 0 && c < n as i64);
        if !inside || atom[3] == 0.0 {
            continue;
        }
        let bin =
            ((cell[2] as usize * bin_dims[1]) + cell[1] as usize) * bin_dims[0] + cell[0] as usize;
        if counts[bin] < BIN_DEPTH {
            let at = bin * BIN_SIZE + 4 * counts[bin];
            words[at..at + 4].copy_from_slice(atom);
            counts[bin] += 1;
            kept.push(*atom);
        }
    }
    Bins {
        dims: bin_dims,
        pad,
        words,
        kept,
    }
}

/// The threads of a cutcp block: `8 × 2 × 8`, four lattice points each.
pub const CUTCP_BLOCK: Block = Block::xyz(8, 2, 8);

/// The cutoff potential of a lattice of `dims` points (multiples of 8) spaced `h` apart into
/// `regions` (`dims` points, region after region), from `bins` made by `cutcp_bins` for the
/// same `cutoff` and the neighbourhood `table` of `cutcp_table`, whose first `nbr_len` rows
/// count.
#[allow(clippy::too_many_arguments)]
pub fn cutcp(
    stream: &Stream,
    table: &[[i32; 3]; NBRLIST_MAXLEN],
    nbr_len: usize,
    bins: &Bins,
    bin_words: &DeviceBuffer<f32>,
    dims: [usize; 3],
    h: f32,
    cutoff: f32,
    regions: &mut DeviceBuffer<f32>,
) -> gpu_dsl::Result<()> {
    let grid = Grid::try_xyz(dims[0] / 8, dims[1] / 8, dims[2] / 8)?;
    let cutoff2 = cutoff * cutoff;
    cutcp_lattice::launch(
        stream,
        LaunchConfig::new(grid, CUTCP_BLOCK),
        table,
        nbr_len,
        bins.dims[0],
        bins.dims[1],
        bins.pad as i32,
        bin_words,
        h,
        cutoff2,
        1.0 / cutoff2,
        regions,
    )
}

/// Keys a `merge_sort_shared` block sorts (the CUDA samples' `SHARED_SIZE_LIMIT`), two a
/// thread.
pub const SHARED_SIZE_LIMIT: usize = 1024;

/// How many of the sorted `data` come before `val` (the CUDA samples'
/// `binarySearchExclusive`): the elements below it, or above it when sorting down. `stride`
/// is a power of two at least `data.len()`.
#[device]
pub fn binary_search_exclusive<const ASCENDING: bool>(
    val: u32,
    data: &[u32],
    mut stride: usize,
) -> usize {
    if data.len() == 0 {
        return 0;
    }
    let mut pos = 0;
    while stride > 0 {
        let new_pos = (pos + stride).min(data.len());
        if (ASCENDING && data[new_pos - 1] < val) || (!ASCENDING && data[new_pos - 1] > val) {
            pos = new_pos;
        }
        stride >>= 1;
    }
    pos
}

/// [`binary_search_exclusive`] counting the elements equal to `val` too (the CUDA samples'
/// `binarySearchInclusive`), so equal keys of the first run come before the second's.
#[device]
pub fn binary_search_inclusive<const ASCENDING: bool>(
    val: u32,
    data: &[u32],
    mut stride: usize,
) -> usize {
    if data.len() == 0 {
        return 0;
    }
    let mut pos = 0;
    while stride > 0 {
        let new_pos = (pos + stride).min(data.len());
        if (ASCENDING && data[new_pos - 1] <= val) || (!ASCENDING && data[new_pos - 1] >= val) {
            pos = new_pos;
        }
        stride >>= 1;
    }
    pos
}

/// Sorts each run of `SHARED_SIZE_LIMIT` key-value pairs in shared memory (the CUDA samples'
/// `mergeSortSharedKernel`), `SHARED_SIZE_LIMIT / 2` threads a block: at each stride, every
/// thread takes one element of each of a pair of sorted runs and writes it at its rank, its
/// place in its own run plus its binary-searched rank in the other; `array_length` (a power of
/// two up to `SHARED_SIZE_LIMIT`) is the length of the runs sorted.
///
/// Not yet as the sample's CUDA: the index arithmetic here computes in 64 bits where the
/// sample's is `uint`. The stride is bounded only by `array_length`, a parameter, and a
/// generic kernel with static shared memory is not compiled with a 32-bit body the launch
/// picks (its one entry would hold both bodies' shared arrays); and the binary searches'
/// `usize` parameters are unknown inside them, whatever their callers pass.
#[kernel]
pub fn merge_sort_shared<const ASCENDING: bool>(
    src_key: &[u32],
    src_val: &[u32],
    dst_key: &mut [u32],
    dst_val: &mut [u32],
    array_length: usize,
) {
    let s_key = shared_array::<u32, SHARED_SIZE_LIMIT>();
    let s_val = shared_array::<u32, SHARED_SIZE_LIMIT>();
    let t = thread_idx().x as usize;
    let first = block_idx().x as usize * SHARED_SIZE_LIMIT + t;
    const HALF: usize = SHARED_SIZE_LIMIT / 2;
    s_key[t] = src_key[first];
    s_val[t] = src_val[first];
    s_key[t + HALF] = src_key[first + HALF];
    s_val[t + HALF] = src_val[first + HALF];
    let mut stride = 1;
    while stride < array_length {
        let l_pos = t & (stride - 1);
        let base = 2 * (t - l_pos);
        sync_threads();
        let key_a = s_key[base + l_pos];
        let val_a = s_val[base + l_pos];
        let key_b = s_key[base + l_pos + stride];
        let val_b = s_val[base + l_pos + stride];
        let pos_a = binary_search_exclusive::<ASCENDING>(
            key_a,
            &s_key[base + stride..base + 2 * stride],
            stride,
        ) + l_pos;
        let pos_b =
            binary_search_inclusive::<ASCENDING>(key_b, &s_key[base..base + stride], stride)
                + l_pos;
        sync_threads();
        s_key[base + pos_a] = key_a;
        s_val[base + pos_a] = val_a;
        s_key[base + pos_b] = key_b;
        s_val[base + pos_b] = val_b;
        stride <<= 1;
    }
    sync_threads();
    dst_key[first] = s_key[t];
    dst_val[first] = s_val[t];
    dst_key[first + HALF] = s_key[t + HALF];
    dst_val[first + HALF] = s_val[t + HALF];
}

/// The launch of `merge_sort_shared` over `keys` (a multiple of `SHARED_SIZE_LIMIT` long), as
/// the sample's `mergeSortShared`: a block of `SHARED_SIZE_LIMIT / 2` threads a run.
pub fn merge_sort_config(keys: usize) -> gpu_dsl::Result<LaunchConfig> {
    let grid = Grid::try_xy(keys / SHARED_SIZE_LIMIT, 1)?;
    Ok(LaunchConfig::new(
        grid,
        Block::x(SHARED_SIZE_LIMIT as u32 / 2),
    ))
}
