//! The CUDA C twins of the sixteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, IN_F32, IN_U32, OUT_F32, UINT};

/// GPU Gems 3's all-pairs N-body, the bodies as structs of four floats.
pub(super) static NBODY_BODIES_C: Kernel = twin(
    "nbody_bodies_c",
    r#"
struct Body { float x, y, z, mass; };
#define TILE 256
extern "C" __global__ void nbody_bodies_c(float softening, const float* __restrict__ body_words,
        unsigned long long body_len, float* __restrict__ acc, unsigned long long acc_len) {
    const Body* bodies = reinterpret_cast<const Body*>(body_words);
    __shared__ Body tile[TILE];
    int n = (int)(body_len / 4);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Body me = i < n ? bodies[i] : Body{0.0f, 0.0f, 0.0f, 0.0f};
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int start = 0; start < n; start += TILE) {
        tile[threadIdx.x] = start + threadIdx.x < n ? bodies[start + threadIdx.x] : Body{0.0f, 0.0f, 0.0f, 0.0f};
        __syncthreads();
        for (int j = 0; j < TILE; j++) {
            Body other = tile[j];
            float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + softening);
            float s = other.mass * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    if (i < n) {
        acc[3 * i] = ax;
        acc[3 * i + 1] = ay;
        acc[3 * i + 2] = az;
    }
}
"#,
    &[FLOAT, IN_F32, OUT_F32],
);

/// CSR SpMV, a thread per row (Bell and Garland's scalar kernel).
pub(super) static SPMV_CSR_SCALAR_C: Kernel = twin(
    "spmv_csr_scalar_c",
    r#"
extern "C" __global__ void spmv_csr_scalar_c(const unsigned int* __restrict__ ptr,
        unsigned long long ptr_len, const unsigned int* __restrict__ indices,
        unsigned long long indices_len, const float* __restrict__ data, unsigned long long data_len,
        const float* __restrict__ x, unsigned long long x_len, float* __restrict__ y,
        unsigned long long y_len) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < (int)y_len) {
        float dot = 0.0f;
        int row_start = ptr[row];
        int row_end = ptr[row + 1];
        for (int jj = row_start; jj < row_end; jj++) dot += data[jj] * x[indices[jj]];
        y[row] = dot;
    }
}
"#,
    &[IN_U32, IN_U32, IN_F32, IN_F32, OUT_F32],
);

/// The bit-reversal permutation by `__brev`.
pub(super) static BIT_REVERSE_C: Kernel = twin(
    "bit_reverse_c",
    r#"
extern "C" __global__ void bit_reverse_c(unsigned int log_n, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < in_len) out[__brev(i) >> (32 - log_n)] = in[i];
}
"#,
    &[UINT, IN_F32, OUT_F32],
);
