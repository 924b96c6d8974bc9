//! The CUDA C twins of the fifteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, OUT_F32};

/// A D2Q9 lattice Boltzmann step, the lattice's tables in constant memory.
pub(super) static LBM_STEP_C: Kernel = twin(
    "lbm_step_c",
    r#"
__constant__ float W[9] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9,
                           1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};
__constant__ int EX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant__ int EY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
extern "C" __global__ void lbm_step_c(int nx, int ny, float omega, const float* __restrict__ f,
        unsigned long long f_len, float* __restrict__ out, unsigned long long out_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < nx && y < ny) {
        int cells = nx * ny;
        float dist[9];
        for (int q = 0; q < 9; q++) {
            int sx = (x - EX[q] + nx) % nx;
            int sy = (y - EY[q] + ny) % ny;
            dist[q] = f[q * cells + sy * nx + sx];
        }
        float rho = 0.0f, ux = 0.0f, uy = 0.0f;
        for (int q = 0; q < 9; q++) {
            rho += dist[q];
            ux += dist[q] * EX[q];
            uy += dist[q] * EY[q];
        }
        ux /= rho;
        uy /= rho;
        float usq = 1.5f * (ux * ux + uy * uy);
        for (int q = 0; q < 9; q++) {
            float eu = 3.0f * (EX[q] * ux + EY[q] * uy);
            float feq = W[q] * rho * (1.0f + eu + 0.5f * eu * eu - usq);
            out[q * cells + y * nx + x] = dist[q] + omega * (feq - dist[q]);
        }
    }
}
"#,
    &[INT, INT, FLOAT, IN_F32, OUT_F32],
);

/// Rodinia `gaussian`'s `Fan1`.
pub(super) static FAN1_C: Kernel = twin(
    "fan1_c",
    r#"
extern "C" __global__ void fan1_c(int Size, int t, const float* __restrict__ a_cuda,
        unsigned long long a_len, float* __restrict__ m_cuda, unsigned long long m_len) {
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t) return;
    *(m_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) =
        *(a_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) / *(a_cuda + Size * t + t);
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// Rodinia `gaussian`'s `Fan2`.
pub(super) static FAN2_C: Kernel = twin(
    "fan2_c",
    r#"
extern "C" __global__ void fan2_c(int Size, int t, const float* __restrict__ m_cuda,
        unsigned long long m_len, float* __restrict__ a_cuda, unsigned long long a_len,
        float* __restrict__ b_cuda, unsigned long long b_len) {
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t) return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= Size - t) return;
    int xidx = blockIdx.x * blockDim.x + threadIdx.x;
    int yidx = blockIdx.y * blockDim.y + threadIdx.y;
    a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -= m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
    if (yidx == 0) b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + (yidx + t)] * b_cuda[t];
}
"#,
    &[INT, INT, IN_F32, OUT_F32, OUT_F32],
);

/// Rodinia SRAD's derivatives and diffusion coefficient.
pub(super) static SRAD_C: Kernel = twin(
    "srad_coefficients_c",
    r#"
extern "C" __global__ void srad_coefficients_c(int rows, int cols, float q0sqr,
        const float* __restrict__ J, unsigned long long j_len,
        float* __restrict__ dN, unsigned long long n_len, float* __restrict__ dS, unsigned long long s_len,
        float* __restrict__ dW, unsigned long long w_len, float* __restrict__ dE, unsigned long long e_len,
        float* __restrict__ C, unsigned long long c_len) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < rows * cols) {
        int row = k % rows;
        int col = k / rows;
        int n = row == 0 ? k : k - 1;
        int s = row == rows - 1 ? k : k + 1;
        int w = col == 0 ? k : k - rows;
        int e = col == cols - 1 ? k : k + rows;
        float Jc = J[k];
        float d_n = J[n] - Jc, d_s = J[s] - Jc, d_w = J[w] - Jc, d_e = J[e] - Jc;
        float G2 = (d_n * d_n + d_s * d_s + d_w * d_w + d_e * d_e) / (Jc * Jc);
        float L = (d_n + d_s + d_w + d_e) / Jc;
        float num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
        float den = 1 + (.25f * L);
        float qsqr = num / (den * den);
        den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
        float c = 1.0f / (1.0f + den);
        if (c < 0) c = 0; else if (c > 1) c = 1;
        C[k] = c;
        dN[k] = d_n; dS[k] = d_s; dW[k] = d_w; dE[k] = d_e;
    }
}
"#,
    &[
        INT, INT, FLOAT, IN_F32, OUT_F32, OUT_F32, OUT_F32, OUT_F32, OUT_F32,
    ],
);
