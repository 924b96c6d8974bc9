//! The CUDA C twins of the tenth set of ports: the textbook code of each algorithm, with `int`
//! indices, `__restrict__` pointers and a `__constant__` table, each slice passed as a pointer
//! and an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::{ElemType, Kernel, ParamKind, ScalarType};

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_U8, OUT_F32, OUT_U32};

/// A `&[i8]` parameter of a twin.
const IN_I8: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::I8),
    mutable: false,
};

/// Block-matching stereo disparity, scalar (the samples' version packs 4 bytes a word).
pub(super) static STEREO_C: Kernel = twin(
    "stereo_sad_c",
    r#"
#define R 4
#define MAX_DISPARITY 32
extern "C" __global__ void stereo_sad_c(int w, int h, const unsigned char* __restrict__ left,
        unsigned long long l_len, const unsigned char* __restrict__ right,
        unsigned long long r_len, unsigned int* __restrict__ disparity, unsigned long long d_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    unsigned int best = 0xffffffffu, best_d = 0;
    for (int d = 0; d < MAX_DISPARITY; d++) {
        unsigned int sad = 0;
        for (int dy = -R; dy <= R; dy++) {
            int row = min(max(y + dy, 0), h - 1) * w;
            for (int dx = -R; dx <= R; dx++) {
                int lx = min(max(x + dx, 0), w - 1);
                int rx = min(max(x + dx - d, 0), w - 1);
                sad += abs((int)left[row + lx] - (int)right[row + rx]);
            }
        }
        if (sad < best) { best = sad; best_d = d; }
    }
    disparity[y * w + x] = best_d;
}
"#,
    &[INT, INT, IN_U8, IN_U8, OUT_U32],
);

/// The 8x8 DCT through shared tiles, the cosines in `__constant__` memory.
pub(super) static DCT_C: Kernel = twin(
    "dct8x8_c",
    r#"
__constant__ float c_cos[64] = {0.35355339f, 0.35355339f, 0.35355339f, 0.35355339f, 0.35355339f, 0.35355339f, 0.35355339f, 0.35355339f, 0.49039264f, 0.41573481f, 0.27778512f, 0.09754516f, -0.09754516f, -0.27778512f, -0.41573481f, -0.49039264f, 0.46193977f, 0.19134172f, -0.19134172f, -0.46193977f, -0.46193977f, -0.19134172f, 0.19134172f, 0.46193977f, 0.41573481f, -0.09754516f, -0.49039264f, -0.27778512f, 0.27778512f, 0.49039264f, 0.09754516f, -0.41573481f, 0.35355339f, -0.35355339f, -0.35355339f, 0.35355339f, 0.35355339f, -0.35355339f, -0.35355339f, 0.35355339f, 0.27778512f, -0.49039264f, 0.09754516f, 0.41573481f, -0.41573481f, -0.09754516f, 0.49039264f, -0.27778512f, 0.19134172f, -0.46193977f, 0.46193977f, -0.19134172f, -0.19134172f, 0.46193977f, -0.46193977f, 0.19134172f, 0.09754516f, -0.27778512f, 0.41573481f, -0.49039264f, 0.49039264f, -0.41573481f, 0.27778512f, -0.09754516f};
extern "C" __global__ void dct8x8_c(int width, const float* __restrict__ src,
        unsigned long long s_len, float* __restrict__ dst, unsigned long long d_len) {
    __shared__ float tile[8][8];
    __shared__ float rows[8][8];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 8 + tx, y = blockIdx.y * 8 + ty;
    tile[ty][tx] = src[y * width + x];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 8; k++) sum += c_cos[tx * 8 + k] * tile[ty][k];
    rows[ty][tx] = sum;
    __syncthreads();
    sum = 0.0f;
    for (int k = 0; k < 8; k++) sum += c_cos[ty * 8 + k] * rows[k][tx];
    dst[y * width + x] = sum;
}
"#,
    &[INT, IN_F32, OUT_F32],
);

/// A warp per row of `i8` weights, `int` sums, shuffled together.
pub(super) static GEMV_I8_C: Kernel = twin(
    "gemv_i8_c",
    r#"
extern "C" __global__ void gemv_i8_c(int rows, int cols, const signed char* __restrict__ w,
        unsigned long long w_len, const signed char* __restrict__ x, unsigned long long x_len,
        float scale, float* __restrict__ y, unsigned long long y_len) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp < rows) {
        int acc = 0;
        for (int c = lane; c < cols; c += 32) acc += w[warp * cols + c] * x[c];
        for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) y[warp] = acc * scale;
    }
}
"#,
    &[INT, INT, IN_I8, IN_I8, FLOAT, OUT_F32],
);
