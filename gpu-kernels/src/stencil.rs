//! Stencils over row-major `f32` data: 1D and 2D convolution with a user-given weight matrix
//! (blur, sharpen, edge detection), and the 5-point Jacobi step.
//!
//! Every output is a weighted sum of its neighbours, summed in a fixed order (row by row, left
//! to right), so a CPU computation in the same order reproduces it: exactly on the CPU backend,
//! to the last bits on a GPU, where the compiler contracts `acc + w * x` into one FMA.
//! Neighbours outside the data follow a [`Boundary`] policy. The weights are applied as written
//! (a correlation, as image libraries' `filter2D` does): `out[y][x] = Σ w[dy][dx] · in[y + dy -
//! r][x + dx - r]`; a symmetric matrix gives the same result as a mathematical convolution.
//!
//! ```no_run
//! use gpu_dsl_kernels::stencil::{convolve2d, Boundary, Weights};
//! use gpu_dsl_runtime::{DeviceBuffer, Gpu};
//!
//! fn main() -> gpu_dsl_runtime::Result<()> {
//!     let gpu = Gpu::best()?;
//!     let stream = gpu.default_stream();
//!     let (width, height) = (640, 480);
//!     let image = DeviceBuffer::from_host(&stream, &vec![1.0f32; width * height])?;
//!     let mut blurred = DeviceBuffer::zeroed(&stream, width * height)?;
//!     let gaussian = Weights::gaussian_blur5().upload(&stream)?;
//!     convolve2d(&stream, &image, width, height, &gaussian, Boundary::Clamp, &mut blurred)?;
//!     Ok(())
//! }
//! ```

use gpu_dsl_macros::{device, kernel};
use gpu_dsl_runtime::{Block, DeviceBuffer, Error, Grid, LaunchConfig, Result, Stream};

use crate::map::same_len;

/// Outputs per block of the 2D convolution, along x and along y; the kernel repeats them.
const CONV_TILE: usize = 32;
/// Threads along y in a 2D convolution block: each computes `CONV_TILE / CONV_ROWS` rows.
const CONV_ROWS: usize = 8;
/// Threads per block of the 1D convolution, one output each; the kernel repeats it.
const CONV1D_BLOCK: usize = 256;
/// Threads (along x, along y) of a 16-byte Jacobi block; warps lie along rows, so accesses are
/// coalesced. The best of the shapes tried on an H100 at 8192² (`tests/stencil.rs` benchmark).
const JACOBI_VEC4_BLOCK: (usize, usize) = (64, 4);
/// Threads of a scalar Jacobi block (widths not a multiple of 4), chosen the same way.
const JACOBI_BLOCK: (usize, usize) = (64, 2);
/// Rows each thread of the scalar Jacobi kernel walks down.
const JACOBI_ROWS: usize = 4;

/// How a stencil reads neighbours that fall outside the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Repeats the edge: a coordinate outside is clamped to the nearest one inside.
    Clamp,
    /// Reads 0 outside the data.
    Zero,
}

impl Boundary {
    /// The kernels' flag: reads outside the data are zero.
    fn zero(self) -> bool {
        self == Boundary::Zero
    }
}

/// A square (2r+1)×(2r+1) matrix of 2D stencil weights, r = 1 or 2, row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    radius: usize,
    values: Vec<f32>,
}

impl Weights {
    /// The largest radius [`convolve2d`] supports (a 5×5 matrix).
    pub const MAX_RADIUS: usize = 2;

    /// Weights from 9 (3×3) or 25 (5×5) finite values, row by row.
    pub fn new(values: &[f32]) -> Result<Weights> {
        let radius = match values.len() {
            9 => 1,
            25 => 2,
            n => {
                return Err(Error::InvalidLaunch(format!(
                    "stencil weights: {n} values do not form a 3×3 or 5×5 matrix; pass 9 or 25, \
                     row by row"
                )))
            }
        };
        check_finite("stencil weights", values)?;
        Ok(Weights {
            radius,
            values: values.to_vec(),
        })
    }

    /// The 3×3 mean: every output is the average of its neighbourhood.
    pub fn box_blur3() -> Weights {
        Weights::exact(1, vec![1.0 / 9.0; 9])
    }

    /// The 5×5 Gaussian blur: the outer product of 1-4-6-4-1 with itself, over 256.
    pub fn gaussian_blur5() -> Weights {
        let binomial = [1.0f32, 4.0, 6.0, 4.0, 1.0];
        let values = binomial
            .iter()
            .flat_map(|a| binomial.iter().map(move |b| a * b / 256.0))
            .collect();
        Weights::exact(2, values)
    }

    /// The 3×3 sharpen filter: 5 at the centre, −1 at the four direct neighbours.
    pub fn sharpen3() -> Weights {
        Weights::exact(1, vec![0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0])
    }

    /// The 3×3 Laplacian for edge detection: −4 at the centre, 1 at the four direct neighbours.
    pub fn laplacian3() -> Weights {
        Weights::exact(1, vec![0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0])
    }

    /// The 3×3 Sobel gradient along x: positive where values grow to the right.
    pub fn sobel_x3() -> Weights {
        Weights::exact(1, vec![-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0])
    }

    /// The 3×3 Sobel gradient along y: positive where values grow downwards (rows increase).
    pub fn sobel_y3() -> Weights {
        Weights::exact(1, vec![-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0])
    }

    /// Built-in weights, valid by construction.
    fn exact(radius: usize, values: Vec<f32>) -> Weights {
        Weights { radius, values }
    }

    /// The radius r: the matrix is (2r+1)×(2r+1).
    pub fn radius(&self) -> usize {
        self.radius
    }

    /// The side of the matrix, 2r+1.
    pub fn side(&self) -> usize {
        2 * self.radius + 1
    }

    /// The weights, row by row.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Copies the weights to the stream's device, once, for any number of [`convolve2d`] calls.
    pub fn upload(&self, stream: &Stream) -> Result<DeviceWeights> {
        Ok(DeviceWeights {
            radius: self.radius,
            values: DeviceBuffer::from_host(stream, &self.values)?,
        })
    }
}

impl TryFrom<[[f32; 3]; 3]> for Weights {
    type Error = Error;

    /// A 3×3 matrix, row by row; fails on a non-finite weight.
    fn try_from(rows: [[f32; 3]; 3]) -> Result<Weights> {
        Weights::new(rows.as_flattened())
    }
}

impl TryFrom<[[f32; 5]; 5]> for Weights {
    type Error = Error;

    /// A 5×5 matrix, row by row; fails on a non-finite weight.
    fn try_from(rows: [[f32; 5]; 5]) -> Result<Weights> {
        Weights::new(rows.as_flattened())
    }
}

/// [`Weights`] on a device, as [`convolve2d`] reads them.
pub struct DeviceWeights {
    radius: usize,
    values: DeviceBuffer<f32>,
}

impl DeviceWeights {
    /// The radius r of the (2r+1)×(2r+1) matrix.
    pub fn radius(&self) -> usize {
        self.radius
    }
}

/// 2r+1 weights of a 1D stencil, r from 0 to [`Weights1d::MAX_RADIUS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Weights1d {
    values: Vec<f32>,
}

impl Weights1d {
    /// The largest radius [`convolve1d`] supports (17 weights).
    pub const MAX_RADIUS: usize = 8;

    /// Weights from an odd number (1 to 17) of finite values, the centre one in the middle.
    pub fn new(values: &[f32]) -> Result<Weights1d> {
        let n = values.len();
        if n.is_multiple_of(2) || n > 2 * Weights1d::MAX_RADIUS + 1 {
            return Err(Error::InvalidLaunch(format!(
                "1D stencil weights: {n} values; pass an odd number from 1 to {}, the centre \
                 weight in the middle",
                2 * Weights1d::MAX_RADIUS + 1
            )));
        }
        check_finite("1D stencil weights", values)?;
        Ok(Weights1d {
            values: values.to_vec(),
        })
    }

    /// The radius r: there are 2r+1 weights.
    pub fn radius(&self) -> usize {
        self.values.len() / 2
    }

    /// The weights, from the leftmost neighbour to the rightmost.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Copies the weights to the stream's device, once, for any number of [`convolve1d`] calls.
    pub fn upload(&self, stream: &Stream) -> Result<DeviceWeights1d> {
        Ok(DeviceWeights1d {
            radius: self.radius(),
            values: DeviceBuffer::from_host(stream, &self.values)?,
        })
    }
}

/// [`Weights1d`] on a device, as [`convolve1d`] reads them.
pub struct DeviceWeights1d {
    radius: usize,
    values: DeviceBuffer<f32>,
}

impl DeviceWeights1d {
    /// The radius r of the 2r+1 weights.
    pub fn radius(&self) -> usize {
        self.radius
    }
}

/// Fails on a NaN or infinite weight: it would turn every output it touches into NaN.
fn check_finite(what: &str, values: &[f32]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::InvalidLaunch(format!(
            "{what}: weight {i} is {}; weights must be finite",
            values[i]
        ))),
    }
}

/// `in[y][x]`, or what the boundary policy reads there when (x, y) is outside the image. The
/// load is unconditional (at the clamped coordinate), so a caller's unrolled loop can issue
/// all its loads before the first one returns.
#[device]
fn read_pixel(input: &[f32], width: usize, height: usize, x: i64, y: i64, zero: bool) -> f32 {
    let inside = x >= 0 && y >= 0 && x < width as i64 && y < height as i64;
    let cx = x.clamp(0, width as i64 - 1) as usize;
    let cy = y.clamp(0, height as i64 - 1) as usize;
    let value = input[cy * width + cx];
    if inside || !zero {
        value
    } else {
        0.0
    }
}

/// One block's 32×32 outputs of a radius-`radius` 2D stencil, from a halo tile in shared
/// memory. Called with a literal radius, so the inlined loops unroll and the taps stay in
/// registers.
#[device]
fn convolve_tile(
    input: &[f32],
    width: usize,
    height: usize,
    weights: &[f32],
    radius: usize,
    zero: bool,
    tile: &mut [f32],
    output: &mut [f32],
) {
    // The host's CONV_TILE and CONV_ROWS: kernels cannot read module constants.
    const TILE: usize = 32;
    const ROWS: usize = 8;
    let side = 2 * radius + 1;
    let span = TILE + 2 * radius;
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let x0 = block_idx().x as usize * TILE;
    let y0 = block_idx().y as usize * TILE;
    let mut taps = [0.0f32; 25];
    for i in 0..side * side {
        taps[i] = weights[i];
    }
    // The halo tile, (TILE + 2r)² values, row by row, spread over the block's threads in
    // order, so a warp reads row segments (coalesced). The trip count is a constant (the
    // radius is a literal here), so the loop unrolls; the loads are unconditional (clamped into
    // the image), so each thread's loads are in flight together, not one after another.
    let threads = TILE * ROWS;
    let count = span * span;
    let t = ty * TILE + tx;
    for pass in 0..(count + threads - 1) / threads {
        let i = t + pass * threads;
        let gx = (x0 + i % span) as i64 - radius as i64;
        let gy = (y0 + i / span) as i64 - radius as i64;
        let value = read_pixel(input, width, height, gx, gy, zero);
        if i < count {
            tile[i] = value;
        }
    }
    sync_threads();
    let x = x0 + tx;
    for oy in (ty..TILE).step_by(ROWS) {
        let y = y0 + oy;
        if x < width && y < height {
            let mut acc = 0.0f32;
            for dy in 0..side {
                for dx in 0..side {
                    acc += taps[dy * side + dx] * tile[(oy + dy) * span + tx + dx];
                }
            }
            output[y * width + x] = acc;
        }
    }
}

/// The 2D stencil with (2·radius+1)² weights, radius 1 or 2; blocks of 32×8 threads, each
/// block 32×32 outputs.
#[kernel]
fn convolve2d_f32(
    input: &[f32],
    width: usize,
    height: usize,
    weights: &[f32],
    radius: usize,
    zero: bool,
    output: &mut [f32],
) {
    // Sized for the largest radius, 2: (32 + 2·2)².
    let tile = shared_array::<f32, { 36 * 36 }>();
    // The radius is uniform across the block, so both sides of the branch reach the barrier
    // with every thread.
    if radius == 1 {
        convolve_tile(input, width, height, weights, 1, zero, tile, output);
    } else {
        convolve_tile(input, width, height, weights, 2, zero, tile, output);
    }
}

/// The 1D stencil with 2·radius+1 weights, radius up to 8; blocks of 256 threads, one output
/// each.
#[kernel]
fn convolve1d_f32(input: &[f32], weights: &[f32], radius: usize, zero: bool, output: &mut [f32]) {
    // The host's CONV1D_BLOCK. The 8s are Weights1d::MAX_RADIUS: a `const` read only in
    // shared-memory lengths is emitted as an unused C++ variable, which NVRTC warns about.
    const BLOCK: usize = 256;
    let tile = shared_array::<f32, { BLOCK + 2 * 8 }>();
    let taps = shared_array::<f32, { 2 * 8 + 1 }>();
    let n = input.len();
    let t = thread_idx().x as usize;
    let x0 = block_idx().x as usize * BLOCK;
    let side = 2 * radius + 1;
    if t < side {
        taps[t] = weights[t];
    }
    for i in (t..BLOCK + 2 * radius).step_by(BLOCK) {
        let gx = (x0 + i) as i64 - radius as i64;
        tile[i] = read_pixel(input, n, 1, gx, 0, zero);
    }
    sync_threads();
    let x = x0 + t;
    if x < n {
        let mut acc = 0.0f32;
        for k in 0..side {
            acc += taps[k] * tile[t + k];
        }
        output[x] = acc;
    }
}

/// One Jacobi step, `out = 0.25 · (N + S + E + W)`, for a width that is a multiple of 4: each
/// thread computes 4 adjacent outputs of one row with 16-byte loads and stores (scalar 4-byte
/// accesses reach only about 0.85 × copy bandwidth on an H100, 16-byte ones all of it). The
/// rows above and below, and the two scalar neighbours, are shared with adjacent threads and
/// blocks through L1 and L2, so DRAM sees about one read and one write per element.
#[kernel]
fn jacobi5_vec4_f32(input: &[f32], width: usize, height: usize, zero: bool, output: &mut [f32]) {
    let x = 4 * (block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize);
    let y = block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize;
    if x >= width || y >= height {
        return;
    }
    let here = y * width + x;
    let center = input.load4(here);
    // Outside the grid: 0 under Zero, the pixel itself under Clamp.
    let mut north = [0.0f32; 4];
    let mut south = [0.0f32; 4];
    if y > 0 {
        let above = input.load4(here - width);
        for j in 0..4 {
            north[j] = above[j];
        }
    } else if !zero {
        for j in 0..4 {
            north[j] = center[j];
        }
    }
    if y + 1 < height {
        let below = input.load4(here + width);
        for j in 0..4 {
            south[j] = below[j];
        }
    } else if !zero {
        for j in 0..4 {
            south[j] = center[j];
        }
    }
    let west = if x > 0 {
        input[here - 1]
    } else if zero {
        0.0
    } else {
        center[0]
    };
    let east = if x + 4 < width {
        input[here + 4]
    } else if zero {
        0.0
    } else {
        center[3]
    };
    let mut out = [0.0f32; 4];
    out[0] = 0.25 * (north[0] + south[0] + center[1] + west);
    out[1] = 0.25 * (north[1] + south[1] + center[2] + center[0]);
    out[2] = 0.25 * (north[2] + south[2] + center[3] + center[1]);
    out[3] = 0.25 * (north[3] + south[3] + east + center[2]);
    output.store4(here, out);
}

/// One Jacobi step for any width: each thread walks 4 rows of one column, keeping the column's
/// north and centre values in registers, so each row is read from memory once by it.
#[kernel]
fn jacobi5_f32(input: &[f32], width: usize, height: usize, zero: bool, output: &mut [f32]) {
    // The host's JACOBI_ROWS.
    const ROWS: usize = 4;
    let x = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    let y0 = (block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize) * ROWS;
    if x >= width || y0 >= height {
        return;
    }
    let mut center = input[y0 * width + x];
    let mut north = if y0 > 0 {
        input[(y0 - 1) * width + x]
    } else if zero {
        0.0
    } else {
        center
    };
    for k in 0..ROWS {
        let y = y0 + k;
        if y >= height {
            break;
        }
        let here = y * width + x;
        // Outside the grid: 0 under Zero, the pixel itself under Clamp.
        let edge = if zero { 0.0f32 } else { center };
        let south = if y + 1 < height {
            input[here + width]
        } else {
            edge
        };
        let east = if x + 1 < width { input[here + 1] } else { edge };
        let west = if x > 0 { input[here - 1] } else { edge };
        output[here] = 0.25 * (north + south + east + west);
        north = center;
        center = south;
    }
}

/// The kernels of this module.
pub(crate) const KERNELS: &[&gpu_dsl_runtime::Kernel] = &[
    &convolve2d_f32::KERNEL,
    &convolve1d_f32::KERNEL,
    &jacobi5_vec4_f32::KERNEL,
    &jacobi5_f32::KERNEL,
];

/// Checks that `input` and `output` hold a `width`×`height` image of at least one pixel.
fn check_image(
    what: &'static str,
    input: &DeviceBuffer<f32>,
    width: usize,
    height: usize,
    output: &DeviceBuffer<f32>,
) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::InvalidLaunch(format!(
            "{what}: the image is {width}×{height}; both sides must be at least 1"
        )));
    }
    let Some(pixels) = width.checked_mul(height) else {
        return Err(Error::InvalidLaunch(format!(
            "{what}: a {width}×{height} image overflows usize"
        )));
    };
    same_len(what, pixels, input.len())?;
    same_len(what, pixels, output.len())
}

/// Applies a 3×3 or 5×5 stencil to a row-major `width`×`height` image: `output[y][x] =
/// Σ w[dy][dx] · input[y + dy − r][x + dx − r]`, neighbours outside read per `boundary`.
pub fn convolve2d(
    stream: &Stream,
    input: &DeviceBuffer<f32>,
    width: usize,
    height: usize,
    weights: &DeviceWeights,
    boundary: Boundary,
    output: &mut DeviceBuffer<f32>,
) -> Result<()> {
    check_image("convolve2d: input and output", input, width, height, output)?;
    let grid = Grid::try_xy(width.div_ceil(CONV_TILE), height.div_ceil(CONV_TILE))?;
    let config = LaunchConfig::new(grid, Block::xy(CONV_TILE as u32, CONV_ROWS as u32));
    convolve2d_f32::launch(
        stream,
        config,
        input,
        width,
        height,
        &weights.values,
        weights.radius,
        boundary.zero(),
        output,
    )
}

/// Applies a 1D stencil of 2r+1 weights: `output[x] = Σ w[k] · input[x + k − r]`, neighbours
/// outside read per `boundary`.
pub fn convolve1d(
    stream: &Stream,
    input: &DeviceBuffer<f32>,
    weights: &DeviceWeights1d,
    boundary: Boundary,
    output: &mut DeviceBuffer<f32>,
) -> Result<()> {
    if input.is_empty() {
        return Err(Error::InvalidLaunch(
            "convolve1d: the input is empty; pass at least one value".to_string(),
        ));
    }
    same_len("convolve1d: output and input", input.len(), output.len())?;
    let grid = Grid::try_x(input.len().div_ceil(CONV1D_BLOCK))?;
    let config = LaunchConfig::new(grid, Block::x(CONV1D_BLOCK as u32));
    convolve1d_f32::launch(
        stream,
        config,
        input,
        &weights.values,
        weights.radius,
        boundary.zero(),
        output,
    )
}

/// One Jacobi step on a row-major `width`×`height` grid: `output = 0.25 · (N + S + E + W)`,
/// neighbours outside read per `boundary`; fastest where `width` is a multiple of 4.
pub fn jacobi5(
    stream: &Stream,
    input: &DeviceBuffer<f32>,
    width: usize,
    height: usize,
    boundary: Boundary,
    output: &mut DeviceBuffer<f32>,
) -> Result<()> {
    check_image("jacobi5: input and output", input, width, height, output)?;
    let zero = boundary.zero();
    if width.is_multiple_of(4) {
        // Every row starts on a 16-byte boundary: 4 outputs per thread, vector accesses.
        let (bx, by) = JACOBI_VEC4_BLOCK;
        let grid = Grid::try_xy((width / 4).div_ceil(bx), height.div_ceil(by))?;
        let config = LaunchConfig::new(grid, Block::xy(bx as u32, by as u32));
        return jacobi5_vec4_f32::launch(stream, config, input, width, height, zero, output);
    }
    let (bx, by) = JACOBI_BLOCK;
    let grid = Grid::try_xy(width.div_ceil(bx), height.div_ceil(by * JACOBI_ROWS))?;
    let config = LaunchConfig::new(grid, Block::xy(bx as u32, by as u32));
    jacobi5_f32::launch(stream, config, input, width, height, zero, output)
}
