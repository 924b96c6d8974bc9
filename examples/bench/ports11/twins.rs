//! The CUDA C twins of the eleventh set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_U32, IN_U8, OUT_F32, OUT_U32};

/// Sobol points by the set bits of the index.
pub(super) static SOBOL_C: Kernel = twin(
    "sobol_c",
    r#"
extern "C" __global__ void sobol_c(int n, const unsigned int* __restrict__ d_v,
        unsigned long long v_len, float* __restrict__ d_output, unsigned long long out_len) {
    __shared__ unsigned int v[32];
    int dim = blockIdx.y;
    if (threadIdx.x < 32) v[threadIdx.x] = d_v[dim * 32 + threadIdx.x];
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int x = 0, bits = i;
        for (int k = 0; bits != 0; bits >>= 1, k++)
            if (bits & 1) x ^= v[k];
        d_output[dim * n + i] = (float)x * (1.0f / 4294967296.0f);
    }
}
"#,
    &[INT, IN_U32, OUT_F32],
);

/// The particle step, the particles as 6 floats each.
pub(super) static PARTICLES_C: Kernel = twin(
    "particles_step_c",
    r#"
struct Particle { float pos[3]; float vel[3]; };
extern "C" __global__ void particles_step_c(float dt, float drag, float* __restrict__ words,
        unsigned long long len) {
    Particle* particles = reinterpret_cast<Particle*>(words);
    int n = (int)(len / 6);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Particle p = particles[i];
        p.vel[1] -= 9.81f * dt;
        for (int d = 0; d < 3; d++) {
            p.vel[d] *= 1.0f - drag * dt;
            p.pos[d] += p.vel[d] * dt;
            if (p.pos[d] < 0.0f) { p.pos[d] = -p.pos[d]; p.vel[d] = -0.8f * p.vel[d]; }
            else if (p.pos[d] > 1.0f) { p.pos[d] = 2.0f - p.pos[d]; p.vel[d] = -0.8f * p.vel[d]; }
        }
        particles[i] = p;
    }
}
"#,
    &[FLOAT, FLOAT, OUT_F32],
);

/// The byte histogram privatized per warp.
pub(super) static HISTOGRAM_C: Kernel = twin(
    "histogram_private_c",
    r#"
#define WARPS 8
extern "C" __global__ void histogram_private_c(const unsigned char* __restrict__ data,
        unsigned long long n, unsigned int* __restrict__ bins, unsigned long long bins_len) {
    __shared__ unsigned int hist[WARPS][256];
    int tid = threadIdx.x;
    for (int b = tid; b < 256 * WARPS; b += blockDim.x) hist[b / 256][b % 256] = 0;
    __syncthreads();
    for (long long i = blockIdx.x * blockDim.x + tid; i < (long long)n; i += blockDim.x * gridDim.x)
        atomicAdd(&hist[tid / 32][data[i]], 1u);
    __syncthreads();
    for (int b = tid; b < 256; b += blockDim.x) {
        unsigned int sum = 0;
        for (int w = 0; w < WARPS; w++) sum += hist[w][b];
        atomicAdd(&bins[b], sum);
    }
}
"#,
    &[IN_U8, OUT_U32],
);
