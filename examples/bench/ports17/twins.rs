//! The CUDA C twins of the seventeenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, INT, IN_F32, OUT_F32, OUT_U32, UINT};

/// Bias and an activation picked by a code, in a `switch`.
pub(super) static BIAS_ACTIVATION_C: Kernel = twin(
    "bias_activation_c",
    r#"
extern "C" __global__ void bias_activation_c(unsigned int act, const float* __restrict__ x,
        unsigned long long x_len, const float* __restrict__ bias, unsigned long long bias_len,
        float* __restrict__ y, unsigned long long y_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)y_len) {
        float v = x[i] + bias[i % (int)bias_len];
        float r;
        switch (act) {
            case 0: r = fmaxf(v, 0.0f); break;
            case 1: r = tanhf(v); break;
            case 2: r = 1.0f / (1.0f + expf(-v)); break;
            default: r = 0.5f * v * (1.0f + tanhf(0.7978846f * (v + 0.044715f * v * v * v))); break;
        }
        y[i] = r;
    }
}
"#,
    &[UINT, IN_F32, IN_F32, OUT_F32],
);

/// In-place transpose by swaps above the diagonal.
pub(super) static TRANSPOSE_IN_PLACE_C: Kernel = twin(
    "transpose_in_place_c",
    r#"
extern "C" __global__ void transpose_in_place_c(int n, float* __restrict__ a,
        unsigned long long a_len) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n && col > row) {
        float t = a[row * n + col];
        a[row * n + col] = a[col * n + row];
        a[col * n + row] = t;
    }
}
"#,
    &[INT, OUT_F32],
);

/// The programming guide's warp-aggregated atomic, compacting positive values.
pub(super) static COMPACT_WARP_C: Kernel = twin(
    "compact_warp_aggregated_c",
    r#"
extern "C" __global__ void compact_warp_aggregated_c(const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len,
        unsigned int* __restrict__ count, unsigned long long count_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x & 31;
    float v = i < (int)in_len ? in[i] : 0.0f;
    bool keep = v > 0.0f;
    unsigned int votes = __ballot_sync(0xffffffff, keep);
    unsigned int base = 0;
    if (lane == 0 && votes != 0) base = atomicAdd(count, __popc(votes));
    base = __shfl_sync(0xffffffff, base, 0);
    if (keep) out[base + __popc(votes & ((1u << lane) - 1))] = v;
}
"#,
    &[IN_F32, OUT_F32, OUT_U32],
);
