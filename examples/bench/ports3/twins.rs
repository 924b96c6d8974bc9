//! The CUDA C twins of the third set of ports: the textbook or CUDA-sample code of each
//! algorithm, with `int` indices and `__restrict__` pointers, each slice passed as a pointer and
//! an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, INT, IN_F32, IN_U8, OUT_F32, OUT_U8};

/// The first matrix product of the CUDA programming guide: a thread per element, `int`
/// indices, every operand from global memory.
pub(super) static MATMUL_NAIVE_C: Kernel = twin(
    "matmul_naive_c",
    r#"
extern "C" __global__ void matmul_naive_c(int n, const float* __restrict__ a, unsigned long long a_len,
        const float* __restrict__ b, unsigned long long b_len, float* __restrict__ c,
        unsigned long long c_len) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++) sum += a[row * n + k] * b[k * n + col];
        c[row * n + col] = sum;
    }
}
"#,
    &[INT, IN_F32, IN_F32, OUT_F32],
);

/// Conway's game of life on a torus of byte cells, neighbours found with `%`.
pub(super) static LIFE_C: Kernel = twin(
    "life_step_c",
    r#"
extern "C" __global__ void life_step_c(int width, int height, const unsigned char* __restrict__ cells,
        unsigned long long cells_len, unsigned char* __restrict__ next, unsigned long long next_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        int left = (x + width - 1) % width, right = (x + 1) % width;
        int up = (y + height - 1) % height, down = (y + 1) % height;
        int alive = cells[up * width + left] + cells[up * width + x] + cells[up * width + right]
            + cells[y * width + left] + cells[y * width + right]
            + cells[down * width + left] + cells[down * width + x] + cells[down * width + right];
        unsigned char me = cells[y * width + x];
        next[y * width + x] = (alive == 3 || (alive == 2 && me == 1)) ? 1 : 0;
    }
}
"#,
    &[INT, INT, IN_U8, OUT_U8],
);

/// RGBA to grayscale, a pixel's four bytes in one `uchar4` load.
pub(super) static GRAY_C: Kernel = twin(
    "rgba_to_gray_c",
    r#"
extern "C" __global__ void rgba_to_gray_c(const uchar4* __restrict__ rgba, unsigned long long rgba_len,
        unsigned char* __restrict__ gray, unsigned long long gray_len) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < (int)gray_len) {
        uchar4 px = rgba[p];
        float luma = 0.299f * px.x + 0.587f * px.y + 0.114f * px.z;
        gray[p] = (unsigned char)luma;
    }
}
"#,
    &[IN_U8, OUT_U8],
);

/// The CUDA sample `reduce3`: the first add on the load, then a shared-memory tree with an
/// `unsigned int` stride halved each step.
pub(super) static REDUCE_TREE_C: Kernel = twin(
    "reduce_tree_c",
    r#"
extern "C" __global__ void reduce_tree_c(const float* __restrict__ g_idata, unsigned long long n_len,
        float* __restrict__ g_odata, unsigned long long out_len) {
    __shared__ float sdata[256];
    unsigned int n = (unsigned int)n_len;
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float mySum = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"#,
    &[IN_F32, OUT_F32],
);
