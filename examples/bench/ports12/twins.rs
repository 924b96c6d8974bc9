//! The CUDA C twins of the twelfth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, OUT_F32, OUT_U8};

/// CUDA by Example's Julia set, with its `cuComplex`.
pub(super) static JULIA_C: Kernel = twin(
    "julia_c",
    r#"
struct cuComplex {
    float r, i;
    __device__ cuComplex(float a, float b) : r(a), i(b) {}
    __device__ float magnitude2(void) { return r * r + i * i; }
    __device__ cuComplex operator*(const cuComplex& a) { return cuComplex(r * a.r - i * a.i, i * a.r + r * a.i); }
    __device__ cuComplex operator+(const cuComplex& a) { return cuComplex(r + a.r, i + a.i); }
};
extern "C" __global__ void julia_c(int dim, float cr, float ci, unsigned char* __restrict__ ptr,
        unsigned long long len) {
    int x = blockIdx.x;
    int y = blockIdx.y * blockDim.x + threadIdx.x;
    if (y < dim) {
        const float scale = 1.5f;
        float jx = scale * (float)(dim / 2.0f - x) / (dim / 2.0f);
        float jy = scale * (float)(dim / 2.0f - y) / (dim / 2.0f);
        cuComplex c(cr, ci);
        cuComplex a(jx, jy);
        unsigned char inside = 255;
        for (int i = 0; i < 200; i++) {
            a = a * a + c;
            if (a.magnitude2() > 1000) { inside = 0; break; }
        }
        ptr[(y * dim + x) * 4] = inside;
    }
}
"#,
    &[INT, FLOAT, FLOAT, OUT_U8],
);

/// PMPP's 7-point stencil with register tiling along z.
pub(super) static STENCIL_Z_C: Kernel = twin(
    "stencil_z_c",
    r#"
extern "C" __global__ void stencil_z_c(int n, float c0, float c1, const float* __restrict__ in,
        unsigned long long in_len, float* __restrict__ out, unsigned long long out_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < n - 1 && y >= 1 && y < n - 1) {
        int plane = n * n;
        int column = y * n + x;
        float below = in[column];
        float here = in[plane + column];
        for (int z = 1; z < n - 1; z++) {
            int at = z * plane + column;
            float above = in[at + plane];
            out[at] = c0 * here + c1 * (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] + below + above);
            below = here;
            here = above;
        }
    }
}
"#,
    &[INT, FLOAT, FLOAT, IN_F32, OUT_F32],
);
