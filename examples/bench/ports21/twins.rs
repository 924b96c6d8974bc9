//! The CUDA C twins of the twenty-first set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_U32, OUT_F32, OUT_U32};

/// `source` after PolyBench-GPU's constants, `FLOAT_N` a `float` as the kernels compute with
/// (the benchmark's `3214212.01` is a `double`, which promotes its divisions: the ports and the
/// twins both divide in `float`).
macro_rules! polybench {
    ($source:literal) => {
        concat!("#define FLOAT_N 3214212.01f\n#define EPS 0.005f\n", $source)
    };
}

/// PolyBench-GPU's correlation `mean_kernel` (0-based, as PolyBench/ACC's), accumulating in
/// `mean[j]` as the benchmark does.
pub(super) static CORR_MEAN_C: Kernel = twin(
    "corr_mean_c",
    polybench!(
        r#"
extern "C" __global__ void corr_mean_c(int m, int n, const float* __restrict__ data,
        unsigned long long data_len, float* __restrict__ mean, unsigned long long mean_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        mean[j] = 0.0f;
        for (int i = 0; i < n; i++) {
            mean[j] += data[i * m + j];
        }
        mean[j] /= FLOAT_N;
    }
}
"#
    ),
    &[INT, INT, IN_F32, OUT_F32],
);

/// PolyBench-GPU's correlation `std_kernel`.
pub(super) static CORR_STD_C: Kernel = twin(
    "corr_std_c",
    polybench!(
        r#"
extern "C" __global__ void corr_std_c(int m, int n, const float* __restrict__ data,
        unsigned long long data_len, const float* __restrict__ mean, unsigned long long mean_len,
        float* __restrict__ std, unsigned long long std_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        std[j] = 0.0f;
        for (int i = 0; i < n; i++) {
            std[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
        }
        std[j] /= FLOAT_N;
        std[j] = sqrtf(std[j]);
        if (std[j] <= EPS) {
            std[j] = 1.0f;
        }
    }
}
"#
    ),
    &[INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// PolyBench-GPU's correlation `reduce_kernel`.
pub(super) static CORR_REDUCE_C: Kernel = twin(
    "corr_reduce_c",
    polybench!(
        r#"
extern "C" __global__ void corr_reduce_c(int m, int n, const float* __restrict__ mean,
        unsigned long long mean_len, const float* __restrict__ std, unsigned long long std_len,
        float* __restrict__ data, unsigned long long data_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < m) {
        data[i * m + j] -= mean[j];
        data[i * m + j] /= sqrtf(FLOAT_N) * std[j];
    }
}
"#
    ),
    &[INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// PolyBench-GPU's correlation `corr_kernel`, accumulating in `symmat` as the benchmark does;
/// the thread of the last row writes its diagonal too, as the port's does (PolyBench's host
/// sets it).
pub(super) static CORR_CORR_C: Kernel = twin(
    "corr_corr_c",
    r#"
extern "C" __global__ void corr_corr_c(int m, int n, const float* __restrict__ data,
        unsigned long long data_len, float* __restrict__ symmat, unsigned long long symmat_len) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < m) {
        symmat[j1 * m + j1] = 1.0f;
        for (int j2 = j1 + 1; j2 < m; j2++) {
            symmat[j1 * m + j2] = 0.0f;
            for (int i = 0; i < n; i++) {
                symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
            }
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// PolyBench-GPU's `fdtd_step1_kernel`.
pub(super) static FDTD_EY_C: Kernel = twin(
    "fdtd_ey_c",
    r#"
extern "C" __global__ void fdtd_ey_c(int nx, int ny, const float* __restrict__ _fict_,
        unsigned long long fict_len, const float* __restrict__ hz, unsigned long long hz_len,
        float* __restrict__ ey, unsigned long long ey_len, int t) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < nx) && (j < ny)) {
        if (i == 0) {
            ey[i * ny + j] = _fict_[t];
        } else {
            ey[i * ny + j] = ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
        }
    }
}
"#,
    &[INT, INT, IN_F32, IN_F32, OUT_F32, INT],
);

/// PolyBench-GPU's `fdtd_step2_kernel`.
pub(super) static FDTD_EX_C: Kernel = twin(
    "fdtd_ex_c",
    r#"
extern "C" __global__ void fdtd_ex_c(int nx, int ny, const float* __restrict__ hz,
        unsigned long long hz_len, float* __restrict__ ex, unsigned long long ex_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < nx) && (j < ny) && (j > 0)) {
        ex[i * (ny + 1) + j] = ex[i * (ny + 1) + j] - 0.5f * (hz[i * ny + j] - hz[i * ny + (j - 1)]);
    }
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// PolyBench-GPU's `fdtd_step3_kernel`.
pub(super) static FDTD_HZ_C: Kernel = twin(
    "fdtd_hz_c",
    r#"
extern "C" __global__ void fdtd_hz_c(int nx, int ny, const float* __restrict__ ex,
        unsigned long long ex_len, const float* __restrict__ ey, unsigned long long ey_len,
        float* __restrict__ hz, unsigned long long hz_len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < nx) && (j < ny)) {
        hz[i * ny + j] = hz[i * ny + j] - 0.7f * (ex[i * (ny + 1) + (j + 1)] - ex[i * (ny + 1) + j]
            + ey[(i + 1) * ny + j] - ey[i * ny + j]);
    }
}
"#,
    &[INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// Parboil's `cuda_cutoff_potential_lattice6overlap`, its neighbour list the 5³ bins around a
/// region's (all of which a cutoff of two bin lengths reaches) in `__constant__` memory, x
/// fastest as Parboil's host code lists them; the plane of regions is `blockIdx.z` (Parboil
/// launches a grid per plane), and the bins' origin is found from the padding here rather than
/// passed as a shifted pointer.
pub(super) static CUTCP_C: Kernel = twin(
    "cutcp_lattice_c",
    r#"
#define BIN_DEPTH 8
#define BIN_SIZE 32
#define BIN_SHIFT 5
#define BIN_CACHE_MAXLEN 32
#define BIN_LENGTH 4.f
#define BIN_INVLEN (1.f / BIN_LENGTH)
#define REGION_SIZE 512
#define NBRLIST_MAXLEN 125
#define ROW5(j, k) {-2, j, k}, {-1, j, k}, {0, j, k}, {1, j, k}, {2, j, k}
#define PLANE5(k) ROW5(-2, k), ROW5(-1, k), ROW5(0, k), ROW5(1, k), ROW5(2, k)
__constant__ int3 NbrList[NBRLIST_MAXLEN] = {PLANE5(-2), PLANE5(-1), PLANE5(0), PLANE5(1), PLANE5(2)};
extern "C" __global__ void cutcp_lattice_c(int NbrListLen, int binDim_x, int binDim_y, int pad,
        const float* __restrict__ bins, unsigned long long bins_len, float h, float cutoff2,
        float inv_cutoff2, float* __restrict__ regionZeroAddr, unsigned long long regions_len) {
    __shared__ float AtomBinCache[BIN_CACHE_MAXLEN * BIN_DEPTH * 4];
    const float4* binZeroAddr = reinterpret_cast<const float4*>(bins)
        + ((pad * binDim_y + pad) * binDim_x + pad) * BIN_DEPTH;
    const int xRegionIndex = blockIdx.x;
    const int yRegionIndex = blockIdx.y;
    const int zRegionIndex = blockIdx.z;
    const int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int nbrid;
    float* myRegionAddr = regionZeroAddr
        + ((zRegionIndex * gridDim.y + yRegionIndex) * gridDim.x + xRegionIndex) * REGION_SIZE;
    float x = (8 * xRegionIndex + threadIdx.x) * h;
    float y = (8 * yRegionIndex + threadIdx.y) * h;
    float z = (8 * zRegionIndex + threadIdx.z) * h;
    int totalbins = 0;
    int numbins;
    int3 myBinIndex;
    myBinIndex.x = (int) floorf((8 * xRegionIndex + 4) * h * BIN_INVLEN);
    myBinIndex.y = (int) floorf((8 * yRegionIndex + 4) * h * BIN_INVLEN);
    myBinIndex.z = (int) floorf((8 * zRegionIndex + 4) * h * BIN_INVLEN);
    nbrid = (tid >> 4);
    numbins = BIN_CACHE_MAXLEN;
    float energy0 = 0.f;
    float energy1 = 0.f;
    float energy2 = 0.f;
    float energy3 = 0.f;
    for (totalbins = 0; totalbins < NbrListLen; totalbins += numbins) {
        int bincnt;
        int startoff = BIN_SIZE * (tid >> 4);
        for (bincnt = 0; bincnt < 4 && nbrid < NbrListLen; bincnt++, nbrid += 8) {
            int i = myBinIndex.x + NbrList[nbrid].x;
            int j = myBinIndex.y + NbrList[nbrid].y;
            int k = myBinIndex.z + NbrList[nbrid].z;
            const float* p_global = ((const float*) binZeroAddr)
                + (((__mul24(k, binDim_y) + j) * binDim_x + i) << BIN_SHIFT);
            int binIndex = startoff + (bincnt << (3 + BIN_SHIFT));
            int tidmask = tid & 15;
            AtomBinCache[binIndex + tidmask] = p_global[tidmask];
            AtomBinCache[binIndex + tidmask + 16] = p_global[tidmask + 16];
        }
        __syncthreads();
        if (totalbins + BIN_CACHE_MAXLEN > NbrListLen) {
            numbins = NbrListLen - totalbins;
        }
        int stopbin = (numbins << BIN_SHIFT);
        for (bincnt = 0; bincnt < stopbin; bincnt += BIN_SIZE) {
            for (int i = 0; i < BIN_DEPTH; i++) {
                int off = bincnt + (i << 2);
                float aq = AtomBinCache[off + 3];
                if (0.f == aq) break;
                float dx = AtomBinCache[off] - x;
                float dz = AtomBinCache[off + 2] - z;
                float dxdz2 = dx * dx + dz * dz;
                float dy = AtomBinCache[off + 1] - y;
                float r2 = dy * dy + dxdz2;
                if (r2 < cutoff2) {
                    float s = (1.f - r2 * inv_cutoff2);
                    energy0 += aq * rsqrtf(r2) * s * s;
                }
                dy -= 2.0f * h;
                r2 = dy * dy + dxdz2;
                if (r2 < cutoff2) {
                    float s = (1.f - r2 * inv_cutoff2);
                    energy1 += aq * rsqrtf(r2) * s * s;
                }
                dy -= 2.0f * h;
                r2 = dy * dy + dxdz2;
                if (r2 < cutoff2) {
                    float s = (1.f - r2 * inv_cutoff2);
                    energy2 += aq * rsqrtf(r2) * s * s;
                }
                dy -= 2.0f * h;
                r2 = dy * dy + dxdz2;
                if (r2 < cutoff2) {
                    float s = (1.f - r2 * inv_cutoff2);
                    energy3 += aq * rsqrtf(r2) * s * s;
                }
            }
        }
        __syncthreads();
    }
    myRegionAddr[(tid >> 4) * 64 + (tid & 15)] = energy0;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 16] = energy1;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 32] = energy2;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 48] = energy3;
}
"#,
    &[INT, INT, INT, INT, IN_F32, FLOAT, FLOAT, FLOAT, OUT_F32],
);

/// The CUDA samples' `mergeSortSharedKernel<1U>` with its binary searches (`umin` written as
/// CUDA's `min` of two `unsigned int`s).
pub(super) static MERGE_SORT_SHARED_C: Kernel = twin(
    "merge_sort_shared_c",
    r#"
typedef unsigned int uint;
#define SHARED_SIZE_LIMIT 1024U
template <uint sortDir>
static inline __device__ uint binarySearchInclusive(uint val, uint* data, uint L, uint stride) {
    if (L == 0) {
        return 0;
    }
    uint pos = 0;
    for (; stride > 0; stride >>= 1) {
        uint newPos = min(pos + stride, L);
        if ((sortDir && (data[newPos - 1] <= val)) || (!sortDir && (data[newPos - 1] >= val))) {
            pos = newPos;
        }
    }
    return pos;
}
template <uint sortDir>
static inline __device__ uint binarySearchExclusive(uint val, uint* data, uint L, uint stride) {
    if (L == 0) {
        return 0;
    }
    uint pos = 0;
    for (; stride > 0; stride >>= 1) {
        uint newPos = min(pos + stride, L);
        if ((sortDir && (data[newPos - 1] < val)) || (!sortDir && (data[newPos - 1] > val))) {
            pos = newPos;
        }
    }
    return pos;
}
template <uint sortDir>
__device__ __forceinline__ void mergeSortSharedKernel(uint* __restrict__ d_DstKey,
        uint* __restrict__ d_DstVal, const uint* __restrict__ d_SrcKey,
        const uint* __restrict__ d_SrcVal, uint arrayLength) {
    __shared__ uint s_key[SHARED_SIZE_LIMIT];
    __shared__ uint s_val[SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];
    for (uint stride = 1; stride < arrayLength; stride <<= 1) {
        uint lPos = threadIdx.x & (stride - 1);
        uint* baseKey = s_key + 2 * (threadIdx.x - lPos);
        uint* baseVal = s_val + 2 * (threadIdx.x - lPos);
        __syncthreads();
        uint keyA = baseKey[lPos + 0];
        uint valA = baseVal[lPos + 0];
        uint keyB = baseKey[lPos + stride];
        uint valB = baseVal[lPos + stride];
        uint posA = binarySearchExclusive<sortDir>(keyA, baseKey + stride, stride, stride) + lPos;
        uint posB = binarySearchInclusive<sortDir>(keyB, baseKey + 0, stride, stride) + lPos;
        __syncthreads();
        baseKey[posA] = keyA;
        baseVal[posA] = valA;
        baseKey[posB] = keyB;
        baseVal[posB] = valB;
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
}
extern "C" __global__ void merge_sort_shared_c(const uint* __restrict__ src_key,
        unsigned long long src_key_len, const uint* __restrict__ src_val,
        unsigned long long src_val_len, uint* __restrict__ dst_key, unsigned long long dst_key_len,
        uint* __restrict__ dst_val, unsigned long long dst_val_len, uint arrayLength) {
    mergeSortSharedKernel<1U>(dst_key, dst_val, src_key, src_val, arrayLength);
}
"#,
    &[IN_U32, IN_U32, OUT_U32, OUT_U32, crate::ports::UINT],
);
