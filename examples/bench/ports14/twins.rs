//! The CUDA C twins of the fourteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, INT, IN_F32, OUT_F32, OUT_I32};

/// The CUDA samples' `MatrixMulCUDA<32>`.
pub(super) static MATRIX_MUL_C: Kernel = twin(
    "matrix_mul_c",
    r#"
#define BLOCK_SIZE 32
extern "C" __global__ void matrix_mul_c(int wA, int wB, const float* __restrict__ A,
        unsigned long long a_len, const float* __restrict__ B, unsigned long long b_len,
        float* __restrict__ C, unsigned long long c_len) {
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by;
    int aEnd = aBegin + wA - 1;
    int aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx;
    int bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}
"#,
    &[INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// PMPP's `merge_basic_kernel` with its `co_rank` and `merge_sequential`.
pub(super) static MERGE_BASIC_C: Kernel = twin(
    "merge_basic_c",
    r#"
__device__ int co_rank(int k, const float* A, int m, const float* B, int n) {
    int i = k < m ? k : m;
    int j = k - i;
    int i_low = 0 > (k - n) ? 0 : k - n;
    int j_low = 0 > (k - m) ? 0 : k - m;
    int delta;
    bool active = true;
    while (active) {
        if (i > 0 && j < n && A[i - 1] > B[j]) {
            delta = ((i - i_low + 1) >> 1);
            j_low = j;
            j = j + delta;
            i = i - delta;
        } else if (j > 0 && i < m && B[j - 1] >= A[i]) {
            delta = ((j - j_low + 1) >> 1);
            i_low = i;
            i = i + delta;
            j = j - delta;
        } else {
            active = false;
        }
    }
    return i;
}
__device__ void merge_sequential(const float* A, int m, const float* B, int n, float* C) {
    int i = 0, j = 0, k = 0;
    while (i < m && j < n) {
        if (A[i] <= B[j]) C[k++] = A[i++];
        else C[k++] = B[j++];
    }
    if (i == m) { while (j < n) C[k++] = B[j++]; }
    else { while (i < m) C[k++] = A[i++]; }
}
extern "C" __global__ void merge_basic_c(const float* __restrict__ A, unsigned long long a_len,
        const float* __restrict__ B, unsigned long long b_len, float* __restrict__ C,
        unsigned long long c_len) {
    int m = (int)a_len, n = (int)b_len;
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int threads = blockDim.x * gridDim.x;
    int per_thread = (m + n + threads - 1) / threads;
    int k_curr = min(tid * per_thread, m + n);
    int k_next = min((tid + 1) * per_thread, m + n);
    int i_curr = co_rank(k_curr, A, m, B, n);
    int i_next = co_rank(k_next, A, m, B, n);
    int j_curr = k_curr - i_curr;
    int j_next = k_next - i_next;
    merge_sequential(&A[i_curr], i_next - i_curr, &B[j_curr], j_next - j_curr, &C[k_curr]);
}
"#,
    &[IN_F32, IN_F32, OUT_F32],
);

/// The CUDA samples' `shfl_scan_test`.
pub(super) static SHFL_SCAN_C: Kernel = twin(
    "shfl_scan_c",
    r#"
extern "C" __global__ void shfl_scan_c(int* __restrict__ data, unsigned long long data_len,
        int* __restrict__ partial_sums, unsigned long long sums_len) {
    extern __shared__ int sums[];
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    int lane_id = id % warpSize;
    int warp_id = threadIdx.x / warpSize;
    int value = data[id];
#pragma unroll
    for (int i = 1; i <= 16; i *= 2) {
        int n = __shfl_up_sync(0xffffffff, value, i, 32);
        if (lane_id >= i) value += n;
    }
    if (threadIdx.x % warpSize == warpSize - 1) sums[warp_id] = value;
    __syncthreads();
    int warps = blockDim.x / warpSize;
    if (warp_id == 0) {
        int warp_sum = lane_id < warps ? sums[lane_id] : 0;
        for (int i = 1; i < warps; i *= 2) {
            int n = __shfl_up_sync(0xffffffff, warp_sum, i, 32);
            if (lane_id >= i) warp_sum += n;
        }
        if (lane_id < warps) sums[lane_id] = warp_sum;
    }
    __syncthreads();
    int blockSum = 0;
    if (warp_id > 0) blockSum = sums[warp_id - 1];
    value += blockSum;
    data[id] = value;
    if (threadIdx.x == blockDim.x - 1) partial_sums[blockIdx.x] = value;
}
"#,
    &[OUT_I32, OUT_I32],
);
