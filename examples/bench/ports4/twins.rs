//! The CUDA C twins of the fourth set of ports: the textbook, GPU Gems or Rodinia code of each
//! algorithm, with `int` indices and `__restrict__` pointers, each slice passed as a pointer and
//! an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, OUT_F32, OUT_U32};

/// The 3-D seven-point stencil, a thread per (x, y) column walking z.
pub(super) static STENCIL7_C: Kernel = twin(
    "stencil7_c",
    r#"
extern "C" __global__ void stencil7_c(int nx, int ny, int nz, float c0, float c1,
        const float* __restrict__ in, unsigned long long in_len, float* __restrict__ out,
        unsigned long long out_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
        int plane = nx * ny;
        for (int z = 1; z < nz - 1; z++) {
            int i = z * plane + y * nx + x;
            out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]
                + in[i - plane] + in[i + plane]);
        }
    }
}
"#,
    &[INT, INT, INT, FLOAT, FLOAT, IN_F32, OUT_F32],
);

/// GPU Gems 3's naive scan (example 39-1), its double-buffer swap written as intended.
pub(super) static SCAN_NAIVE_C: Kernel = twin(
    "scan_naive_c",
    r#"
extern "C" __global__ void scan_naive_c(const float* __restrict__ g_idata, unsigned long long in_len,
        float* __restrict__ g_odata, unsigned long long out_len) {
    extern __shared__ float temp[];
    int n = blockDim.x;
    int thid = threadIdx.x;
    int base = blockIdx.x * n;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = (thid > 0) ? g_idata[base + thid - 1] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset) temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_odata[base + thid] = temp[pout * n + thid];
}
"#,
    &[IN_F32, OUT_F32],
);

/// Kirk and Hwu's basic 2-D convolution, the mask in `__constant__` memory initialised in the
/// source with the values [`super::conv_mask`] gives the port.
pub(super) static CONV2D_C: Kernel = twin(
    "conv2d_c",
    r#"
#define MASK_WIDTH 5
__constant__ float M[MASK_WIDTH * MASK_WIDTH] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
extern "C" __global__ void conv2d_c(int width, int height, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height) {
        int start_col = col - MASK_WIDTH / 2;
        int start_row = row - MASK_WIDTH / 2;
        float pvalue = 0.0f;
        for (int j = 0; j < MASK_WIDTH; j++) {
            for (int k = 0; k < MASK_WIDTH; k++) {
                int r = start_row + j, c = start_col + k;
                if (r >= 0 && r < height && c >= 0 && c < width)
                    pvalue += in[r * width + c] * M[j * MASK_WIDTH + k];
            }
        }
        out[row * width + col] = pvalue;
    }
}
"#,
    &[INT, INT, IN_F32, OUT_F32],
);

/// Rodinia's `kmeansPoint`: features feature-major, the centres read from global memory.
pub(super) static KMEANS_C: Kernel = twin(
    "kmeans_assign_c",
    r#"
extern "C" __global__ void kmeans_assign_c(int nfeatures, const float* __restrict__ features,
        unsigned long long features_len, const float* __restrict__ clusters,
        unsigned long long clusters_len, unsigned int* __restrict__ membership,
        unsigned long long membership_len) {
    int npoints = (int)membership_len;
    int nclusters = (int)clusters_len / nfeatures;
    int point_id = blockIdx.x * blockDim.x + threadIdx.x;
    if (point_id < npoints) {
        int index = 0;
        float min_dist = 3.402823466e+38f;
        for (int i = 0; i < nclusters; i++) {
            float dist = 0.0f;
            for (int l = 0; l < nfeatures; l++) {
                float d = features[l * npoints + point_id] - clusters[i * nfeatures + l];
                dist += d * d;
            }
            if (dist < min_dist) {
                min_dist = dist;
                index = i;
            }
        }
        membership[point_id] = index;
    }
}
"#,
    &[INT, IN_F32, IN_F32, OUT_U32],
);

/// A histogram of floats with global atomics, the bin from `(int)` of the scaled value.
pub(super) static HISTOGRAM_F32_C: Kernel = twin(
    "histogram_f32_c",
    r#"
#define BINS 256
extern "C" __global__ void histogram_f32_c(const float* __restrict__ data, unsigned long long n_len,
        float lo, float hi, unsigned int* __restrict__ bins, unsigned long long bins_len) {
    int n = (int)n_len;
    float scale = BINS / (hi - lo);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int bin = min((int)((data[i] - lo) * scale), BINS - 1);
        atomicAdd(&bins[bin], 1u);
    }
}
"#,
    &[IN_F32, FLOAT, FLOAT, OUT_U32],
);
