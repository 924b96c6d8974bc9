//! The CUDA C twins of the twentieth set of ports: the textbook code of each algorithm, with
//! `int` (or Parboil's `unsigned int`) indices and `__restrict__` pointers, each slice passed as
//! a pointer and an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::{ElemType, Kernel, ParamKind, Value};

use crate::port_kernels20::{Cartesian, Float4};
use crate::ports::{twin, FLOAT, INT, IN_F32, IN_I32, OUT_F32, OUT_U32, UINT};

/// A `&[Cartesian]` parameter of a twin (`struct cartesian` in C).
const IN_CARTESIAN: ParamKind = ParamKind::Slice {
    elem: <Cartesian as Value>::ELEM,
    mutable: false,
};

/// A `float4` element, as the MD port's `Float4`.
const FLOAT4: ElemType = <Float4 as Value>::ELEM;

/// Parboil's TPACF `gen_hists` for one data set against the random sets, a block a random set:
/// the bin boundaries and the block's histogram in shared memory (Parboil keeps the boundaries
/// in `__constant__` memory and a histogram a warp), the binary search and the shared atomics
/// as Parboil writes them, the block's histogram added to the global one with atomics.
pub(super) static TPACF_C: Kernel = twin(
    "tpacf_c",
    r#"
#define BLOCK_SIZE 256
#define NUM_BINS 20
struct cartesian { float x, y, z; };
extern "C" __global__ void tpacf_c(const float* __restrict__ binb, unsigned long long binb_len,
        const cartesian* __restrict__ data, unsigned long long data_len,
        const cartesian* __restrict__ all_random, unsigned long long random_len,
        unsigned int* __restrict__ hist, unsigned long long hist_len, int NUM_ELEMENTS) {
    __shared__ float binb_s[NUM_BINS + 1];
    __shared__ unsigned int hist_s[NUM_BINS];
    __shared__ cartesian data_s[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    const cartesian* random = all_random + NUM_ELEMENTS * blockIdx.x;
    if (tid <= NUM_BINS) binb_s[tid] = binb[tid];
    if (tid < NUM_BINS) hist_s[tid] = 0;
    __syncthreads();
    for (unsigned int i = 0; i < NUM_ELEMENTS; i += BLOCK_SIZE) {
        if (tid + i < NUM_ELEMENTS) data_s[tid] = data[tid + i];
        __syncthreads();
        unsigned int in_tile = min(BLOCK_SIZE, NUM_ELEMENTS - i);
        for (unsigned int j = tid; j < NUM_ELEMENTS; j += BLOCK_SIZE) {
            float random_x_s = random[j].x;
            float random_y_s = random[j].y;
            float random_z_s = random[j].z;
            for (unsigned int k = 0; k < in_tile; k += 1) {
                float distance = data_s[k].x * random_x_s + data_s[k].y * random_y_s
                    + data_s[k].z * random_z_s;
                unsigned int min = 0;
                unsigned int max = NUM_BINS;
                while (max > min + 1) {
                    unsigned int k2 = (min + max) / 2;
                    if (distance >= binb_s[k2]) max = k2;
                    else min = k2;
                }
                if (distance < binb_s[min] && distance >= binb_s[max]) {
                    atomicAdd(&hist_s[min], 1U);
                }
            }
        }
        __syncthreads();
    }
    if (tid < NUM_BINS) atomicAdd(&hist[tid], hist_s[tid]);
}
"#,
    &[IN_F32, IN_CARTESIAN, IN_CARTESIAN, OUT_U32, INT],
);

/// SHOC's MD `compute_lj_force` for `float4` positions, read from global memory (SHOC may read
/// them through the texture cache).
pub(super) static MD_C: Kernel = twin(
    "md_lj_force_c",
    r#"
extern "C" __global__ void md_lj_force_c(float4* __restrict__ force3,
        unsigned long long force_len, const float4* __restrict__ position,
        unsigned long long position_len, const int neighCount,
        const int* __restrict__ neighList, unsigned long long neigh_len, const float cutsq,
        const float lj1, const float lj2, const int inum) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= inum) return;
    float4 ipos = position[idx];
    float4 f = {0.0f, 0.0f, 0.0f, 0.0f};
    int j = 0;
    while (j < neighCount) {
        int jidx = neighList[j * inum + idx];
        float4 jpos = position[jidx];
        float delx = ipos.x - jpos.x;
        float dely = ipos.y - jpos.y;
        float delz = ipos.z - jpos.z;
        float r2inv = delx * delx + dely * dely + delz * delz;
        if (r2inv < cutsq) {
            r2inv = 1.0f / r2inv;
            float r6inv = r2inv * r2inv * r2inv;
            float force = r2inv * r6inv * (lj1 * r6inv - lj2);
            f.x += delx * force;
            f.y += dely * force;
            f.z += delz * force;
        }
        j++;
    }
    force3[idx] = f;
}
"#,
    &[
        ParamKind::Slice {
            elem: FLOAT4,
            mutable: true,
        },
        ParamKind::Slice {
            elem: FLOAT4,
            mutable: false,
        },
        INT,
        IN_I32,
        FLOAT,
        FLOAT,
        FLOAT,
        INT,
    ],
);

/// The CUDA samples' `dwtHaar1D`, its last approximation written whatever the levels (the
/// sample writes it only past one level, and a launch of one level never happens there).
pub(super) static DWT_HAAR_C: Kernel = twin(
    "dwt_haar_1d_c",
    r#"
#define LOG_NUM_BANKS 4
#define INV_SQRT_2 0.70710678118654752440f
extern "C" __global__ void dwt_haar_1d_c(const float* __restrict__ id, unsigned long long id_len,
        float* __restrict__ od, unsigned long long od_len, float* __restrict__ approx_final,
        unsigned long long approx_len, const unsigned int dlevels,
        const unsigned int slength_step_half, const int bdim) {
    extern __shared__ float shared[];
    const int gdim = gridDim.x;
    const int bid = blockIdx.x;
    const int tid = threadIdx.x;
    const int tid_global = (bid * bdim) + tid;
    unsigned int idata = (bid * (2 * bdim)) + tid;
    shared[tid] = id[idata];
    shared[tid + bdim] = id[idata + bdim];
    __syncthreads();
    float data0 = shared[2 * tid];
    float data1 = shared[(2 * tid) + 1];
    __syncthreads();
    od[tid_global + slength_step_half] = (data0 - data1) * INV_SQRT_2;
    unsigned int atid = tid + (tid >> LOG_NUM_BANKS);
    shared[atid] = (data0 + data1) * INV_SQRT_2;
    __syncthreads();
    if (dlevels > 1) {
        unsigned int offset_neighbor = 1;
        unsigned int num_threads = bdim >> 1;
        unsigned int idata0 = tid * 2;
        for (unsigned int i = 1; i < dlevels; ++i) {
            if (tid < num_threads) {
                unsigned int idata1 = idata0 + offset_neighbor;
                unsigned int g_wpos = (num_threads * gdim) + (bid * num_threads) + tid;
                unsigned int c_idata0 = idata0 + (idata0 >> LOG_NUM_BANKS);
                unsigned int c_idata1 = idata1 + (idata1 >> LOG_NUM_BANKS);
                od[g_wpos] = (shared[c_idata0] - shared[c_idata1]) * INV_SQRT_2;
                shared[c_idata0] = (shared[c_idata0] + shared[c_idata1]) * INV_SQRT_2;
                num_threads = num_threads >> 1;
                offset_neighbor <<= 1;
                idata0 = idata0 << 1;
            }
            __syncthreads();
        }
    }
    if (0 == tid) approx_final[bid] = shared[0];
}
"#,
    &[IN_F32, OUT_F32, OUT_F32, UINT, UINT, INT],
);

/// Rodinia's particle filter's `find_index_kernel` (its float version).
pub(super) static PF_FIND_INDEX_C: Kernel = twin(
    "pf_find_index_c",
    r#"
extern "C" __global__ void pf_find_index_c(const float* __restrict__ arrayX,
        unsigned long long arrayX_len, const float* __restrict__ arrayY,
        unsigned long long arrayY_len, const float* __restrict__ CDF, unsigned long long CDF_len,
        const float* __restrict__ u, unsigned long long u_len, float* __restrict__ xj,
        unsigned long long xj_len, float* __restrict__ yj, unsigned long long yj_len,
        int Nparticles) {
    int block_id = blockIdx.x;
    int i = blockDim.x * block_id + threadIdx.x;
    if (i < Nparticles) {
        int index = -1;
        int x;
        for (x = 0; x < Nparticles; x++) {
            if (CDF[x] >= u[i]) {
                index = x;
                break;
            }
        }
        if (index == -1) {
            index = Nparticles - 1;
        }
        xj[i] = arrayX[index];
        yj[i] = arrayY[index];
    }
}
"#,
    &[IN_F32, IN_F32, IN_F32, IN_F32, OUT_F32, OUT_F32, INT],
);

/// Rodinia's particle filter's weight normalisation in one block: the likelihood kernel's
/// shared-memory sum (here over all the weights, each thread's share first), the division of
/// `normalize_weights_kernel`, `cdfCalc` on thread 0, and `u`.
pub(super) static PF_NORMALIZE_C: Kernel = twin(
    "pf_normalize_weights_c",
    r#"
#define THREADS 512
__device__ void cdfCalc(float* CDF, const float* weights, int Nparticles) {
    int x;
    CDF[0] = weights[0];
    for (x = 1; x < Nparticles; x++) {
        CDF[x] = weights[x] + CDF[x - 1];
    }
}
extern "C" __global__ void pf_normalize_weights_c(float* __restrict__ weights,
        unsigned long long weights_len, float* __restrict__ CDF, unsigned long long CDF_len,
        float* __restrict__ u, unsigned long long u_len, float u1, int Nparticles) {
    __shared__ float partial_sums[THREADS];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = tid; i < Nparticles; i += THREADS) sum += weights[i];
    partial_sums[tid] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) partial_sums[tid] += partial_sums[tid + s];
        __syncthreads();
    }
    float sumWeights = partial_sums[0];
    for (int i = tid; i < Nparticles; i += THREADS) weights[i] = weights[i] / sumWeights;
    __syncthreads();
    if (tid == 0) cdfCalc(CDF, weights, Nparticles);
    for (int i = tid; i < Nparticles; i += THREADS) u[i] = u1 + i / ((float)(Nparticles));
}
"#,
    &[OUT_F32, OUT_F32, OUT_F32, FLOAT, INT],
);
