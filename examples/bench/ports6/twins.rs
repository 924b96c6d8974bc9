//! The CUDA C twins of the sixth set of ports: the textbook code of each algorithm, with `int`
//! indices, `__restrict__` pointers, `__constant__` filter weights and `if` chains, each slice
//! passed as a pointer and an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, INT, IN_F32, IN_U32, OUT_F32, OUT_U32};

/// The Gaussian row pass, weights in `__constant__` memory, indices clamped with `min`/`max`.
pub(super) static GAUSS_ROWS_C: Kernel = twin(
    "gauss_rows_c",
    r#"
__constant__ float c_gauss[7] = {0.015625f, 0.09375f, 0.234375f, 0.3125f, 0.234375f, 0.09375f, 0.015625f};
extern "C" __global__ void gauss_rows_c(int width, int height, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < 7; k++) {
            int nx = min(max(x + k - 3, 0), width - 1);
            sum += c_gauss[k] * in[y * width + nx];
        }
        out[y * width + x] = sum;
    }
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// Collatz path lengths with a `while` loop and a conditional expression.
pub(super) static COLLATZ_C: Kernel = twin(
    "collatz_steps_c",
    r#"
extern "C" __global__ void collatz_steps_c(const unsigned int* __restrict__ start,
        unsigned long long len, unsigned int* __restrict__ steps, unsigned long long steps_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)len) {
        unsigned int v = max(start[i], 1u), n = 0;
        while (v != 1) {
            v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
            n++;
        }
        steps[i] = n;
    }
}
"#,
    &[IN_U32, OUT_U32],
);

/// The 1-D convolution, four outputs a thread in a register array, taps in `__constant__`.
pub(super) static CONV1D_C: Kernel = twin(
    "conv1d_blocked_c",
    r#"
__constant__ float c_taps[9] = {0.05f, 0.1f, 0.1f, 0.15f, 0.2f, 0.15f, 0.1f, 0.1f, 0.05f};
extern "C" __global__ void conv1d_blocked_c(const float* __restrict__ x, unsigned long long n,
        float* __restrict__ y, unsigned long long m) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (base + 4 <= (int)m && base + 4 + 8 <= (int)n) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < 9; k++) {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                acc[j] += c_taps[k] * x[base + j + k];
            }
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            y[base + j] = acc[j];
        }
    }
}
"#,
    &[IN_F32, OUT_F32],
);

/// The luminance histogram: an `if` chain for the bin, shared-memory counts.
pub(super) static TONE_HISTOGRAM_C: Kernel = twin(
    "tone_histogram_c",
    r#"
extern "C" __global__ void tone_histogram_c(const float* __restrict__ rgb,
        unsigned long long len, unsigned int* __restrict__ counts, unsigned long long counts_len) {
    __shared__ unsigned int bins[4];
    int t = threadIdx.x;
    if (t < 4) bins[t] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i * 3 + 2 < (int)len) {
        float lum = 0.2126f * rgb[i * 3] + 0.7152f * rgb[i * 3 + 1] + 0.0722f * rgb[i * 3 + 2];
        int bin;
        if (lum < 0.25f) bin = 0;
        else if (lum < 0.5f) bin = 1;
        else if (lum < 0.75f) bin = 2;
        else bin = 3;
        atomicAdd(&bins[bin], 1u);
    }
    __syncthreads();
    if (t < 4) atomicAdd(&counts[t], bins[t]);
}
"#,
    &[IN_F32, OUT_U32],
);
