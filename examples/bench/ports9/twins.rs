//! The CUDA C twins of the ninth set of ports: the textbook code of each algorithm, with `int`
//! indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned long
//! long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_I32, OUT_F32, OUT_I32};

/// Rodinia's `needle_cuda_shared_1`.
pub(super) static NW_C: Kernel = twin(
    "nw_diagonal_c",
    r#"
#define BLOCK_SIZE 16
__device__ __forceinline__ int maximum(int a, int b, int c) {
    int k = a <= b ? b : a;
    return k <= c ? c : k;
}
extern "C" __global__ void nw_diagonal_c(const int* __restrict__ referrence,
        unsigned long long ref_len, int* __restrict__ matrix_cuda, unsigned long long m_len,
        int cols, int penalty, int i) {
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int b_index_x = bx;
    int b_index_y = i - 1 - bx;
    int index = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + (cols + 1);
    int index_n = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + (1);
    int index_w = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + (cols);
    int index_nw = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x;
    __shared__ int temp[BLOCK_SIZE + 1][BLOCK_SIZE + 1];
    __shared__ int ref[BLOCK_SIZE][BLOCK_SIZE];
    if (tx == 0) temp[tx][0] = matrix_cuda[index_nw];
    for (int ty = 0; ty < BLOCK_SIZE; ty++) ref[ty][tx] = referrence[index + cols * ty];
    __syncthreads();
    temp[tx + 1][0] = matrix_cuda[index_w + cols * tx];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[index_n];
    __syncthreads();
    for (int m = 0; m < BLOCK_SIZE; m++) {
        if (tx <= m) {
            int t_index_x = tx + 1;
            int t_index_y = m - tx + 1;
            temp[t_index_y][t_index_x] = maximum(temp[t_index_y - 1][t_index_x - 1] + ref[t_index_y - 1][t_index_x - 1],
                temp[t_index_y][t_index_x - 1] - penalty, temp[t_index_y - 1][t_index_x] - penalty);
        }
        __syncthreads();
    }
    for (int m = BLOCK_SIZE - 2; m >= 0; m--) {
        if (tx <= m) {
            int t_index_x = tx + BLOCK_SIZE - m;
            int t_index_y = BLOCK_SIZE - tx;
            temp[t_index_y][t_index_x] = maximum(temp[t_index_y - 1][t_index_x - 1] + ref[t_index_y - 1][t_index_x - 1],
                temp[t_index_y][t_index_x - 1] - penalty, temp[t_index_y - 1][t_index_x] - penalty);
        }
        __syncthreads();
    }
    for (int ty = 0; ty < BLOCK_SIZE; ty++) matrix_cuda[index + ty * cols] = temp[ty + 1][tx + 1];
}
"#,
    &[IN_I32, OUT_I32, INT, INT, INT],
);

/// Rodinia's `calculate_temp`, one iteration (its pyramid of `iteration` steps at 1).
pub(super) static HOTSPOT_C: Kernel = twin(
    "hotspot_step_c",
    r#"
#define BLOCK_SIZE 16
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define CLAMP_RANGE(x, min, max) x = (x < (min)) ? min : ((x > (max)) ? max : x)
extern "C" __global__ void hotspot_step_c(const float* __restrict__ power, unsigned long long p_len,
        const float* __restrict__ temp_src, unsigned long long s_len,
        float* __restrict__ temp_dst, unsigned long long d_len, int grid_cols, int grid_rows,
        float Cap, float Rx, float Ry, float Rz) {
    __shared__ float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    float amb_temp = 80.0f;
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int small_block_rows = BLOCK_SIZE - 2, small_block_cols = BLOCK_SIZE - 2;
    int blkY = small_block_rows * by - 1;
    int blkX = small_block_cols * bx - 1;
    int blkYmax = blkY + BLOCK_SIZE - 1;
    int blkXmax = blkX + BLOCK_SIZE - 1;
    int yidx = blkY + ty;
    int xidx = blkX + tx;
    int loadYidx = yidx, loadXidx = xidx;
    int index = grid_cols * loadYidx + loadXidx;
    if (IN_RANGE(loadYidx, 0, grid_rows - 1) && IN_RANGE(loadXidx, 0, grid_cols - 1))
        temp_on_cuda[ty][tx] = temp_src[index];
    __syncthreads();
    int validYmin = (blkY < 0) ? -blkY : 0;
    int validYmax = (blkYmax > grid_rows - 1) ? BLOCK_SIZE - 1 - (blkYmax - grid_rows + 1) : BLOCK_SIZE - 1;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > grid_cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - grid_cols + 1) : BLOCK_SIZE - 1;
    int N = ty - 1, S = ty + 1, W = tx - 1, E = tx + 1;
    N = (N < validYmin) ? validYmin : N;
    S = (S > validYmax) ? validYmax : S;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;
    if (IN_RANGE(tx, 1, BLOCK_SIZE - 2) && IN_RANGE(ty, 1, BLOCK_SIZE - 2) &&
        IN_RANGE(tx, validXmin, validXmax) && IN_RANGE(ty, validYmin, validYmax)) {
        float here = temp_on_cuda[ty][tx];
        temp_dst[index] = here + Cap * (power[index] +
            (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * here) * Ry +
            (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] - 2.0f * here) * Rx +
            (amb_temp - here) * Rz);
    }
}
"#,
    &[
        IN_F32, IN_F32, OUT_F32, INT, INT, FLOAT, FLOAT, FLOAT, FLOAT,
    ],
);

/// The bilateral filter: a Gaussian of the offset (a table) times one of the difference.
pub(super) static BILATERAL_C: Kernel = twin(
    "bilateral_c",
    r#"
#define R 3
extern "C" __global__ void bilateral_c(int w, int h, const float* __restrict__ gaussian,
        unsigned long long g_len, float inv_2r2, const float* __restrict__ src,
        unsigned long long s_len, float* __restrict__ dst, unsigned long long d_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float center = src[y * w + x];
        float sum = 0.0f, total = 0.0f;
        for (int dy = -R; dy <= R; dy++) {
            int sy = min(max(y + dy, 0), h - 1);
            for (int dx = -R; dx <= R; dx++) {
                int sx = min(max(x + dx, 0), w - 1);
                float v = src[sy * w + sx];
                float d = v - center;
                float factor = gaussian[dy + R] * gaussian[dx + R] * expf(-d * d * inv_2r2);
                sum += factor * v;
                total += factor;
            }
        }
        dst[y * w + x] = sum / total;
    }
}
"#,
    &[INT, INT, IN_F32, FLOAT, IN_F32, OUT_F32],
);
