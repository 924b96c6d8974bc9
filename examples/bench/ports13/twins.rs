//! The CUDA C twins of the thirteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, OUT_F32};

/// The SGEMM tutorials' 2-D block tiling: 128x128 tiles of C, 8x8 of them a thread.
pub(super) static SGEMM_BLOCKED_C: Kernel = twin(
    "sgemm_blocked_c",
    r#"
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void sgemm_blocked_c(int M, int N, int K, const float* __restrict__ A,
        unsigned long long a_len, const float* __restrict__ B, unsigned long long b_len,
        float* __restrict__ C, unsigned long long c_len) {
    const int cRow = blockIdx.y, cCol = blockIdx.x;
    const int threadCol = threadIdx.x % (BN / TN);
    const int threadRow = threadIdx.x / (BN / TN);
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A += cRow * BM * K;
    B += cCol * BN;
    C += cRow * BM * N + cCol * BN;
    const int innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK;
    const int strideA = blockDim.x / BK;
    const int innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN;
    const int strideB = blockDim.x / BN;
    float threadResults[TM * TN] = {0.0f};
    float regM[TM] = {0.0f};
    float regN[TN] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
        for (int loadOffset = 0; loadOffset < BM; loadOffset += strideA)
            As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];
        for (int loadOffset = 0; loadOffset < BK; loadOffset += strideB)
            Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
            for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
            for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
                for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
                    threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
        __syncthreads();
    }
    for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
            if (cRow * BM + threadRow * TM + resIdxM < M)
                C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =
                    threadResults[resIdxM * TN + resIdxN];
}
"#,
    &[INT, INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// A radix-2 Stockham pass, complex numbers as `float2`.
pub(super) static FFT_RADIX2_C: Kernel = twin(
    "fft_radix2_c",
    r#"
extern "C" __global__ void fft_radix2_c(int span, const float* __restrict__ in_words,
        unsigned long long in_len, float* __restrict__ out_words, unsigned long long out_len) {
    const float2* in = reinterpret_cast<const float2*>(in_words);
    float2* out = reinterpret_cast<float2*>(out_words);
    int n = (int)(in_len / 2);
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n / 2) {
        int k = j % span;
        float angle = -2.0f * 3.14159265358979f * k / (2 * span);
        float s, c;
        sincosf(angle, &s, &c);
        float2 a = in[j];
        float2 v = in[j + n / 2];
        float2 b = make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
        int o = (j / span) * span * 2 + k;
        out[o] = make_float2(a.x + b.x, a.y + b.y);
        out[o + span] = make_float2(a.x - b.x, a.y - b.y);
    }
}
"#,
    &[INT, IN_F32, OUT_F32],
);

/// Layer normalization, a warp per row, shuffle sums.
pub(super) static LAYER_NORM_C: Kernel = twin(
    "layer_norm_c",
    r#"
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}
extern "C" __global__ void layer_norm_c(int cols, float eps, const float* __restrict__ x,
        unsigned long long x_len, const float* __restrict__ gamma, unsigned long long g_len,
        const float* __restrict__ beta, unsigned long long b_len, float* __restrict__ y,
        unsigned long long y_len) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    int rows = (int)(x_len / cols);
    if (row < rows) {
        const float* xs = x + row * cols;
        float sum = 0.0f;
        for (int j = lane; j < cols; j += 32) sum += xs[j];
        float mean = warp_sum(sum) / cols;
        float squares = 0.0f;
        for (int j = lane; j < cols; j += 32) {
            float d = xs[j] - mean;
            squares += d * d;
        }
        float inv = 1.0f / sqrtf(warp_sum(squares) / cols + eps);
        float* ys = y + row * cols;
        for (int j = lane; j < cols; j += 32) ys[j] = (xs[j] - mean) * inv * gamma[j] + beta[j];
    }
}
"#,
    &[INT, FLOAT, IN_F32, IN_F32, IN_F32, OUT_F32],
);
