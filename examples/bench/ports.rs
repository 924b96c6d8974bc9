//! Rows for classic CUDA programs ported to `#[kernel]` (`port_kernels.rs`), each timed
//! against its CUDA C twin: the same algorithm as a CUDA programmer writes it, with `int`
//! indices and `__restrict__` inputs, compiled in the same run by the same NVRTC with the same
//! options (NVRTC is nvcc's device compiler: `-O3` is its default). Each row also checks that
//! the two agree.

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{ElemType, Kernel, KernelArg, ParamKind, ScalarType, Value};

use crate::port_kernels::{self as ports, BLOCK, BODIES_PER_TILE, TILE, TRANSPOSE_ROWS};
use crate::{median_ms, Only, Row};

pub(crate) const F32: ElemType = ElemType::Scalar(ScalarType::F32);
pub(crate) const IN_F32: ParamKind = ParamKind::Slice {
    elem: F32,
    mutable: false,
};
pub(crate) const OUT_F32: ParamKind = ParamKind::Slice {
    elem: F32,
    mutable: true,
};
pub(crate) const INT: ParamKind = ParamKind::Scalar(ScalarType::I32);
/// A `&[u8]` parameter of a twin.
pub(crate) const IN_U8: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::U8),
    mutable: false,
};
/// A `&mut [u8]` parameter of a twin.
pub(crate) const OUT_U8: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::U8),
    mutable: true,
};
/// An `f32` scalar parameter of a twin.
pub(crate) const FLOAT: ParamKind = ParamKind::Scalar(ScalarType::F32);
/// A `u32` scalar parameter of a twin.
pub(crate) const UINT: ParamKind = ParamKind::Scalar(ScalarType::U32);
/// A `&[u32]` parameter of a twin.
pub(crate) const IN_U32: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::U32),
    mutable: false,
};
/// A `&mut [u32]` parameter of a twin.
pub(crate) const OUT_U32: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::U32),
    mutable: true,
};
/// A `&[i32]` parameter of a twin.
pub(crate) const IN_I32: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::I32),
    mutable: false,
};
/// A `&mut [i32]` parameter of a twin.
pub(crate) const OUT_I32: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::I32),
    mutable: true,
};

/// A CUDA C twin: `source` defines `extern "C" __global__ void name(...)`, slices passed as a
/// pointer and an `unsigned long long` length, as every kernel of ours is.
pub(crate) const fn twin(
    name: &'static str,
    source: &'static str,
    params: &'static [ParamKind],
) -> Kernel {
    Kernel::__generated_v2(name, name, source, params, "", false)
}

static MATMUL_C: Kernel = twin(
    "matmul_tiled_c",
    r#"
#define TILE 32
extern "C" __global__ void matmul_tiled_c(int n, const float* __restrict__ a, unsigned long long a_len,
        const float* __restrict__ b, unsigned long long b_len, float* __restrict__ c, unsigned long long c_len) {
    __shared__ float tile_a[TILE * TILE];
    __shared__ float tile_b[TILE * TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        tile_a[ty * TILE + tx] = a[row * n + t * TILE + tx];
        tile_b[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        __syncthreads();
    }
    c[row * n + col] = sum;
}
"#,
    &[INT, IN_F32, IN_F32, OUT_F32],
);

static MATMUL_GENERAL_C: Kernel = twin(
    "matmul_general_c",
    r#"
#define TILE 32
extern "C" __global__ void matmul_general_c(int m, int n, int k, const float* __restrict__ a,
        unsigned long long a_len, const float* __restrict__ b, unsigned long long b_len,
        float* __restrict__ c, unsigned long long c_len) {
    __shared__ float tile_a[TILE][TILE];
    __shared__ float tile_b[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + tx, b_row = t * TILE + ty;
        tile_a[ty][tx] = row < m && a_col < k ? a[row * k + a_col] : 0.0f;
        tile_b[ty][tx] = b_row < k && col < n ? b[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += tile_a[ty][i] * tile_b[i][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}
"#,
    &[INT, INT, INT, IN_F32, IN_F32, OUT_F32],
);

static TRANSPOSE_C: Kernel = twin(
    "transpose_tiled_c",
    r#"
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose_tiled_c(int width, int height, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

static HISTOGRAM_C: Kernel = twin(
    "histogram256_c",
    r#"
extern "C" __global__ void histogram256_c(const unsigned char* __restrict__ data, unsigned long long n,
        unsigned int* __restrict__ bins, unsigned long long bins_len) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (int)n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    if (local[threadIdx.x] != 0) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
"#,
    &[
        ParamKind::Slice {
            elem: ElemType::Scalar(ScalarType::U8),
            mutable: false,
        },
        ParamKind::Slice {
            elem: ElemType::Scalar(ScalarType::U32),
            mutable: true,
        },
    ],
);

static REDUCE_C: Kernel = twin(
    "reduce_sum_c",
    r#"
extern "C" __global__ void reduce_sum_c(const float* __restrict__ x, unsigned long long n,
        float* __restrict__ total, unsigned long long total_len) {
    __shared__ float partial[256];
    int t = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < (int)n; i += gridDim.x * blockDim.x) sum += x[i];
    partial[t] = sum;
    __syncthreads();
    for (int stride = 128; stride >= 32; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) {
        float v = partial[t];
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0) atomicAdd(total, v);
    }
}
"#,
    &[IN_F32, OUT_F32],
);

static HEAT_C: Kernel = twin(
    "heat_step_c",
    r#"
extern "C" __global__ void heat_step_c(int width, int height, float k, const float* __restrict__ u,
        unsigned long long u_len, float* __restrict__ next, unsigned long long next_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x + 1 < width && y + 1 < height) {
        int i = y * width + x;
        float laplacian = u[i - 1] + u[i + 1] + u[i - width] + u[i + width] - 4.0f * u[i];
        next[i] = u[i] + k * laplacian;
    }
}
"#,
    &[
        INT,
        INT,
        ParamKind::Scalar(ScalarType::F32),
        IN_F32,
        OUT_F32,
    ],
);

const BODY: ElemType = <[f32; 4] as Value>::ELEM;
static NBODY_C: Kernel = twin(
    "nbody_accel_c",
    r#"
extern "C" __global__ void nbody_accel_c(const float4* __restrict__ pos, unsigned long long n,
        float4* __restrict__ acc, unsigned long long acc_len) {
    __shared__ float4 tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < (int)n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int start = 0; start < (int)n; start += 256) {
        tile[threadIdx.x] = start + threadIdx.x < n ? pos[start + threadIdx.x] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
        for (int j = 0; j < 256; ++j) {
            float4 other = tile[j];
            float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
            float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
            float inv = 1.0f / sqrtf(r2);
            float s = other.w * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        __syncthreads();
    }
    if (i < (int)n) acc[i] = make_float4(ax, ay, az, 0.f);
}
"#,
    &[
        ParamKind::Slice {
            elem: BODY,
            mutable: false,
        },
        ParamKind::Slice {
            elem: BODY,
            mutable: true,
        },
    ],
);

/// Deterministic values in [-1, 1).
pub(crate) fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i + seed) * 7919) % 2001) as f32 * 1e-3 - 1.0)
        .collect()
}

/// The largest difference between `ours` and `theirs`, relative to the largest `|theirs|`.
fn relative_diff(ours: &[f32], theirs: &[f32]) -> f32 {
    let scale = theirs.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-30);
    let diff = ours
        .iter()
        .zip(theirs)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    diff / scale
}

/// Warns when a port and its twin disagree beyond `tolerance` (relative).
pub(crate) fn agree(name: &str, ours: &[f32], theirs: &[f32], tolerance: f32) {
    let diff = relative_diff(ours, theirs);
    // NaN differences count as disagreement.
    if diff.is_nan() || diff > tolerance {
        eprintln!("warning: {name} differs from its CUDA C twin by {diff:e} (relative)");
    }
}

/// Warns when a port's integer output differs from its twin's in more than `allowed` places.
pub(crate) fn agree_exact<T: PartialEq>(name: &str, ours: &[T], theirs: &[T], allowed: usize) {
    let differing = ours.iter().zip(theirs).filter(|(a, b)| a != b).count();
    if differing > allowed || ours.len() != theirs.len() {
        eprintln!("warning: {name} differs from its CUDA C twin in {differing} elements");
    }
}

/// A row of a port against its twin; `work` is the row's amount of work per run in `unit`s.
pub(crate) fn row(
    workload: &str,
    size: String,
    ms: f64,
    twin_ms: f64,
    work: f64,
    unit: &'static str,
) -> Row {
    Row {
        workload: workload.into(),
        size,
        ms,
        rate: work / (ms * 1e-3),
        unit,
        reference: "CUDA C twin",
        reference_rate: Some(work / (twin_ms * 1e-3)),
    }
}

/// Every port's row (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port matmul (tiled)") {
        rows.push(matmul(stream, 2048)?);
    }
    if only.wants("port matmul (general)") {
        rows.push(matmul_general(stream, 2048, 2048, 2048)?);
        rows.push(matmul_general(stream, 1000, 3000, 700)?);
    }
    if only.wants("port transpose") {
        rows.push(transpose(stream, 8192, 8192)?);
    }
    if only.wants("port histogram") {
        rows.push(histogram(stream, 1 << 28)?);
    }
    if only.wants("port reduce") {
        rows.push(reduce(stream, 1 << 26)?);
    }
    if only.wants("port heat") {
        rows.push(heat(stream, 8192, 8192)?);
    }
    if only.wants("port nbody") {
        rows.push(nbody(stream, 1 << 15)?);
    }
    Ok(rows)
}

fn matmul(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(n * n, 1))?;
    let b = DeviceBuffer::from_host(stream, &values(n * n, 2))?;
    let mut c = DeviceBuffer::zeroed(stream, n * n)?;
    let mut c_twin = DeviceBuffer::zeroed(stream, n * n)?;
    let tiles = (n / TILE) as u32;
    let config = LaunchConfig::new(Grid::xy(tiles, tiles), Block::xy(32, 32));
    let ms = median_ms(stream, || {
        ports::matmul_tiled::launch(stream, config, n, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MATMUL_C,
            config,
            &[
                KernelArg::scalar(n as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree(
        "matmul",
        &c.to_host(stream)?,
        &c_twin.to_host(stream)?,
        1e-5,
    );
    let flops = 2.0 * (n as f64).powi(3) / 1e12;
    Ok(row(
        "port matmul (tiled)",
        format!("{n}^3"),
        ms,
        twin_ms,
        flops,
        "TFLOP/s",
    ))
}

fn matmul_general(stream: &Stream, m: usize, n: usize, k: usize) -> gpu_dsl::Result<Row> {
    let a = DeviceBuffer::from_host(stream, &values(m * k, 1))?;
    let b = DeviceBuffer::from_host(stream, &values(k * n, 2))?;
    let mut c = DeviceBuffer::zeroed(stream, m * n)?;
    let mut c_twin = DeviceBuffer::zeroed(stream, m * n)?;
    let grid = Grid::xy(n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 32));
    let ms = median_ms(stream, || {
        ports::matmul_general::launch(stream, config, m, n, k, &a, &b, &mut c)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MATMUL_GENERAL_C,
            config,
            &[
                KernelArg::scalar(m as i32),
                KernelArg::scalar(n as i32),
                KernelArg::scalar(k as i32),
                KernelArg::slice(&a),
                KernelArg::slice(&b),
                KernelArg::slice_mut(&mut c_twin),
            ],
        )
    })?;
    agree(
        "matmul (general)",
        &c.to_host(stream)?,
        &c_twin.to_host(stream)?,
        1e-5,
    );
    let flops = 2.0 * (m * n * k) as f64 / 1e12;
    let size = if m == n && n == k {
        format!("{n}^3")
    } else {
        format!("{m}x{n}x{k}")
    };
    Ok(row(
        "port matmul (general)",
        size,
        ms,
        twin_ms,
        flops,
        "TFLOP/s",
    ))
}

fn transpose(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let input = DeviceBuffer::from_host(stream, &values(width * height, 3))?;
    let mut out = DeviceBuffer::zeroed(stream, width * height)?;
    let mut out_twin = DeviceBuffer::zeroed(stream, width * height)?;
    let grid = Grid::xy(width.div_ceil(TILE) as u32, height.div_ceil(TILE) as u32);
    let config = LaunchConfig::new(grid, Block::xy(TILE as u32, TRANSPOSE_ROWS as u32));
    let ms = median_ms(stream, || {
        ports::transpose_tiled::launch(stream, config, width, height, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &TRANSPOSE_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "transpose",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0.0,
    );
    let gb = 8.0 * (width * height) as f64 / 1e9;
    Ok(row(
        "port transpose",
        format!("{width}x{height}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn histogram(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u8> = (0..n).map(|i| ((i * 7919) >> 3) as u8).collect();
    let data = DeviceBuffer::from_host(stream, &host)?;
    let mut bins = DeviceBuffer::<u32>::zeroed(stream, 256)?;
    let mut bins_twin = DeviceBuffer::<u32>::zeroed(stream, 256)?;
    let config = LaunchConfig::new(Grid::x(4 * 132), Block::x(BLOCK as u32));
    let ms = median_ms(stream, || {
        ports::histogram256::launch(stream, config, &data, &mut bins)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HISTOGRAM_C,
            config,
            &[
                KernelArg::slice(&data),
                KernelArg::slice_mut(&mut bins_twin),
            ],
        )
    })?;
    let (ours, theirs) = (bins.to_host(stream)?, bins_twin.to_host(stream)?);
    if ours != theirs {
        eprintln!("warning: histogram differs from its CUDA C twin");
    }
    let gb = n as f64 / 1e9;
    Ok(row(
        "port histogram",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn reduce(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let x = DeviceBuffer::from_host(stream, &values(n, 4))?;
    let mut total = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let mut total_twin = DeviceBuffer::<f32>::zeroed(stream, 1)?;
    let config = LaunchConfig::new(Grid::x(8 * 132), Block::x(BLOCK as u32));
    let ms = median_ms(stream, || {
        ports::reduce_sum::launch(stream, config, &x, &mut total)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &REDUCE_C,
            config,
            &[KernelArg::slice(&x), KernelArg::slice_mut(&mut total_twin)],
        )
    })?;
    // Both summed the same number of times (30 runs).
    agree(
        "reduce",
        &total.to_host(stream)?,
        &total_twin.to_host(stream)?,
        1e-3,
    );
    let gb = 4.0 * n as f64 / 1e9;
    Ok(row(
        "port reduce",
        format!("2^{}", n.trailing_zeros()),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn heat(stream: &Stream, width: usize, height: usize) -> gpu_dsl::Result<Row> {
    let u = DeviceBuffer::from_host(stream, &values(width * height, 5))?;
    let mut next = DeviceBuffer::zeroed(stream, width * height)?;
    let mut next_twin = DeviceBuffer::zeroed(stream, width * height)?;
    let grid = Grid::xy(width.div_ceil(32) as u32, height.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let k = 0.1f32;
    let ms = median_ms(stream, || {
        ports::heat_step::launch(stream, config, width, height, k, &u, &mut next)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HEAT_C,
            config,
            &[
                KernelArg::scalar(width as i32),
                KernelArg::scalar(height as i32),
                KernelArg::scalar(k),
                KernelArg::slice(&u),
                KernelArg::slice_mut(&mut next_twin),
            ],
        )
    })?;
    agree(
        "heat",
        &next.to_host(stream)?,
        &next_twin.to_host(stream)?,
        1e-6,
    );
    let gb = 8.0 * (width * height) as f64 / 1e9;
    Ok(row(
        "port heat",
        format!("{width}x{height}"),
        ms,
        twin_ms,
        gb,
        "GB/s",
    ))
}

fn nbody(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let v = values(4 * n, 6);
    let bodies: Vec<[f32; 4]> = v
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3].abs() + 0.1])
        .collect();
    let pos = DeviceBuffer::from_host(stream, &bodies)?;
    let mut acc = DeviceBuffer::<[f32; 4]>::zeroed(stream, n)?;
    let mut acc_twin = DeviceBuffer::<[f32; 4]>::zeroed(stream, n)?;
    let config = LaunchConfig::new(
        Grid::x(n.div_ceil(BODIES_PER_TILE) as u32),
        Block::x(BODIES_PER_TILE as u32),
    );
    let ms = median_ms(stream, || {
        ports::nbody_accel::launch(stream, config, &pos, &mut acc)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &NBODY_C,
            config,
            &[KernelArg::slice(&pos), KernelArg::slice_mut(&mut acc_twin)],
        )
    })?;
    let flat = |v: Vec<[f32; 4]>| v.into_iter().flatten().collect::<Vec<f32>>();
    agree(
        "nbody",
        &flat(acc.to_host(stream)?),
        &flat(acc_twin.to_host(stream)?),
        1e-4,
    );
    // 20 floating-point operations per interaction, as GPU Gems counts them.
    let interactions = (n * n) as f64 * 20.0 / 1e12;
    Ok(row(
        "port nbody",
        format!("{n} bodies"),
        ms,
        twin_ms,
        interactions,
        "TFLOP/s",
    ))
}
