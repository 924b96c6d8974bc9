//! The CUDA C twins of the fifth set of ports: the textbook or Rodinia code of each algorithm,
//! with `int` indices and `__restrict__` pointers where nothing aliases, each slice passed as a
//! pointer and an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_I32, IN_U32, OUT_F32, OUT_I32, OUT_U32, UINT};

/// The box filter with `int` offsets from `-2` to `2`.
pub(super) static BOX_FILTER_C: Kernel = twin(
    "box_filter_c",
    r#"
extern "C" __global__ void box_filter_c(int width, int height, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    const int R = 2;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float sum = 0.0f;
        unsigned int count = 0;
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int nx = x + dx, ny = y + dy;
                if (nx >= 0 && nx < width && ny >= 0 && ny < height) {
                    sum += in[ny * width + nx];
                    count++;
                }
            }
        }
        out[y * width + x] = sum / (float)count;
    }
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// Floyd-Warshall's step for vertex `k`, a thread per `(i, j)`.
pub(super) static FLOYD_STEP_C: Kernel = twin(
    "floyd_step_c",
    r#"
extern "C" __global__ void floyd_step_c(int n, int k, int* dist, unsigned long long dist_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        int via = dist[i * n + k] + dist[k * n + j];
        if (via < dist[i * n + j]) dist[i * n + j] = via;
    }
}
"#,
    &[INT, INT, OUT_I32],
);

/// A row of Rodinia's pathfinder, the neighbours clamped at the edges.
pub(super) static PATH_ROW_C: Kernel = twin(
    "path_row_c",
    r#"
extern "C" __global__ void path_row_c(int width, int row, const int* __restrict__ wall,
        unsigned long long wall_len, const int* __restrict__ prev, unsigned long long prev_len,
        int* __restrict__ next, unsigned long long next_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < width) {
        int left = max(j - 1, 0);
        int right = min(j + 1, width - 1);
        int best = min(min(prev[left], prev[j]), prev[right]);
        next[j] = wall[row * width + j] + best;
    }
}
"#,
    &[INT, INT, IN_I32, IN_I32, OUT_I32],
);

/// Stream compaction with warp-aggregated atomics.
pub(super) static COMPACT_C: Kernel = twin(
    "compact_positive_c",
    r#"
extern "C" __global__ void compact_positive_c(const float* __restrict__ in, unsigned long long n,
        float* __restrict__ out, unsigned long long out_len, unsigned int* count,
        unsigned long long count_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x & 31;
    float v = i < (int)n ? in[i] : 0.0f;
    bool keep = i < (int)n && v > 0.0f;
    unsigned int votes = __ballot_sync(0xffffffffu, keep);
    int leader = votes ? __ffs(votes) - 1 : 0;
    unsigned int base = 0;
    if (votes && lane == leader) base = atomicAdd(count, __popc(votes));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (keep) out[base + __popc(votes & ((1u << lane) - 1))] = v;
}
"#,
    &[IN_F32, OUT_F32, OUT_U32],
);

/// The naive matrix-vector product, a thread per row.
pub(super) static GEMV_ROWS_C: Kernel = twin(
    "gemv_rows_c",
    r#"
extern "C" __global__ void gemv_rows_c(int n, const float* __restrict__ a, unsigned long long a_len,
        const float* __restrict__ x, unsigned long long x_len, float* __restrict__ y,
        unsigned long long rows) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)rows) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++) sum += a[i * n + j] * x[j];
        y[i] = sum;
    }
}
"#,
    &[INT, IN_F32, IN_F32, OUT_F32],
);

/// The 1-D heat step on a ring, neighbours wrapped with `%`.
pub(super) static HEAT_RING_C: Kernel = twin(
    "heat_ring_c",
    r#"
extern "C" __global__ void heat_ring_c(float alpha, const float* __restrict__ u,
        unsigned long long len, float* __restrict__ next, unsigned long long next_len) {
    int n = (int)len;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int left = (i - 1 + n) % n;
        int right = (i + 1) % n;
        next[i] = u[i] + alpha * (u[left] - 2.0f * u[i] + u[right]);
    }
}
"#,
    &[FLOAT, IN_F32, OUT_F32],
);

/// MurmurHash3's 32-bit mix.
pub(super) static MURMUR_C: Kernel = twin(
    "murmur_mix_c",
    r#"
__device__ __forceinline__ unsigned int rotl32(unsigned int x, int r) { return (x << r) | (x >> (32 - r)); }
extern "C" __global__ void murmur_mix_c(unsigned int seed, const unsigned int* __restrict__ keys,
        unsigned long long n, unsigned int* __restrict__ hashes, unsigned long long hashes_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)n) {
        unsigned int k = keys[i] * 0xcc9e2d51u;
        k = rotl32(k, 15) * 0x1b873593u;
        unsigned int h = seed ^ k;
        h = rotl32(h, 13) * 5u + 0xe6546b64u;
        h ^= 4u;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        hashes[i] = h ^ (h >> 16);
    }
}
"#,
    &[UINT, IN_U32, OUT_U32],
);
