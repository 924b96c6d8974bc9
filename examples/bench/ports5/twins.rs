//! The CUDA C twins of the fifth set of ports: the textbook or Rodinia code of each algorithm,
//! with `int` indices and `__restrict__` pointers where nothing aliases, each slice passed as a
//! pointer and an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::{ElemType, Kernel, ParamKind, ScalarType};

use crate::ports::{twin, INT, IN_F32, OUT_F32, OUT_U32};

const I32: ElemType = ElemType::Scalar(ScalarType::I32);
/// A `&[i32]` parameter of a twin.
const IN_I32: ParamKind = ParamKind::Slice {
    elem: I32,
    mutable: false,
};
/// A `&mut [i32]` parameter of a twin.
const OUT_I32: ParamKind = ParamKind::Slice {
    elem: I32,
    mutable: true,
};

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
