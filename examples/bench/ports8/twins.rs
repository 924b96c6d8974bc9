//! The CUDA C twins of the eighth set of ports: the textbook code of each algorithm, with `int`
//! indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned long
//! long` length as our kernels receive it.

use gpu_dsl::runtime::{ElemType, Kernel, ParamKind, ScalarType};

use crate::ports::{twin, INT, IN_F32, IN_U32, OUT_F32, OUT_I32, OUT_U32};

/// A `&mut [bool]` parameter of a twin.
const OUT_BOOL: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::Bool),
    mutable: true,
};
/// A `&[bool]` parameter of a twin.
const IN_BOOL: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::Bool),
    mutable: false,
};

/// Rodinia's `bfs` kernel 1, its nodes as (starting, no_of_edges) pairs of `int`s.
pub(super) static BFS_C: Kernel = twin(
    "bfs_expand_c",
    r#"
struct Node { int starting; int no_of_edges; };
extern "C" __global__ void bfs_expand_c(const unsigned int* __restrict__ nodes_words,
        unsigned long long nodes_len, const unsigned int* __restrict__ g_graph_edges,
        unsigned long long edges_len, bool* __restrict__ g_graph_mask, unsigned long long mask_len,
        bool* __restrict__ g_updating_graph_mask, unsigned long long updating_len,
        const bool* __restrict__ g_graph_visited, unsigned long long visited_len,
        int* __restrict__ g_cost, unsigned long long cost_len, int no_of_nodes) {
    const Node* g_graph_nodes = reinterpret_cast<const Node*>(nodes_words);
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes && g_graph_mask[tid]) {
        g_graph_mask[tid] = false;
        for (int i = g_graph_nodes[tid].starting;
             i < (g_graph_nodes[tid].no_of_edges + g_graph_nodes[tid].starting); i++) {
            int id = g_graph_edges[i];
            if (!g_graph_visited[id]) {
                g_cost[id] = g_cost[tid] + 1;
                g_updating_graph_mask[id] = true;
            }
        }
    }
}
"#,
    &[IN_U32, IN_U32, OUT_BOOL, OUT_BOOL, IN_BOOL, OUT_I32, INT],
);

/// PMPP's ELL sparse matrix-vector product, a thread per row.
pub(super) static SPMV_ELL_C: Kernel = twin(
    "spmv_ell_c",
    r#"
extern "C" __global__ void spmv_ell_c(int num_rows, int num_elem,
        const unsigned int* __restrict__ col_index, unsigned long long cols_len,
        const float* __restrict__ data, unsigned long long data_len,
        const float* __restrict__ x, unsigned long long x_len,
        float* __restrict__ y, unsigned long long y_len) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        float dot = 0;
        for (int i = 0; i < num_elem; i++)
            dot += data[row + i * num_rows] * x[col_index[row + i * num_rows]];
        y[row] = dot;
    }
}
"#,
    &[INT, INT, IN_U32, IN_F32, IN_F32, OUT_F32],
);

/// The CUDA samples' `threadFenceReduction`: partial sums, a fence, a ticket, and the last
/// block's sum of the partials.
pub(super) static FENCE_SUM_C: Kernel = twin(
    "fence_sum_c",
    r#"
#define THREADS 256
extern "C" __global__ void fence_sum_c(const float* __restrict__ g_idata, unsigned long long n_len,
        float* __restrict__ g_partial, unsigned long long partial_len,
        unsigned int* __restrict__ retirementCount, unsigned long long count_len,
        float* __restrict__ g_total, unsigned long long total_len) {
    __shared__ float sdata[THREADS];
    __shared__ bool amLast;
    unsigned int tid = threadIdx.x;
    unsigned int n = (unsigned int)n_len;
    float sum = 0;
    for (unsigned int i = blockIdx.x * THREADS + tid; i < n; i += THREADS * gridDim.x)
        sum += g_idata[i];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        g_partial[blockIdx.x] = sdata[0];
        __threadfence();
        unsigned int ticket = atomicInc(retirementCount, gridDim.x);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast) {
        float sum = 0;
        for (unsigned int i = tid; i < gridDim.x; i += THREADS) sum += g_partial[i];
        sdata[tid] = sum;
        __syncthreads();
        for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
        if (tid == 0) {
            g_total[0] = sdata[0];
            retirementCount[0] = 0;
        }
    }
}
"#,
    &[IN_F32, OUT_F32, OUT_U32, OUT_F32],
);
