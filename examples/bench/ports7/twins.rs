//! The CUDA C twins of the seventh set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, OUT_F32, OUT_U8};

/// CUDA by Example's ray tracer, the spheres as 7 floats each (r, g, b, radius, x, y, z).
pub(super) static RAY_TRACE_C: Kernel = twin(
    "ray_trace_c",
    r#"
struct Sphere {
    float r, g, b, radius, x, y, z;
    __device__ float hit(float ox, float oy, float* n) const {
        float dx = ox - x, dy = oy - y;
        float r2 = radius * radius;
        if (dx * dx + dy * dy < r2) {
            float dz = sqrtf(r2 - dx * dx - dy * dy);
            *n = dz / radius;
            return dz + z;
        }
        *n = 0.0f;
        return __int_as_float(0xff800000);
    }
};
extern "C" __global__ void ray_trace_c(int width, int height, const float* __restrict__ spheres,
        unsigned long long spheres_len, unsigned char* __restrict__ image,
        unsigned long long image_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        const Sphere* s = reinterpret_cast<const Sphere*>(spheres);
        int count = (int)(spheres_len / 7);
        float ox = x - width / 2, oy = y - height / 2;
        float r = 0, g = 0, b = 0, maxz = __int_as_float(0xff800000);
        for (int i = 0; i < count; i++) {
            float n;
            float t = s[i].hit(ox, oy, &n);
            if (t > maxz) {
                r = s[i].r * n; g = s[i].g * n; b = s[i].b * n;
                maxz = t;
            }
        }
        int offset = (y * width + x) * 4;
        image[offset + 0] = (unsigned char)(r * 255);
        image[offset + 1] = (unsigned char)(g * 255);
        image[offset + 2] = (unsigned char)(b * 255);
        image[offset + 3] = 255;
    }
}
"#,
    &[INT, INT, IN_F32, OUT_U8],
);

/// Bilinear resampling, pixel centres aligned, edges clamped.
pub(super) static RESIZE_C: Kernel = twin(
    "resize_bilinear_c",
    r#"
extern "C" __global__ void resize_bilinear_c(int src_w, int src_h, int dst_w, int dst_h,
        const float* __restrict__ src, unsigned long long src_len, float* __restrict__ dst,
        unsigned long long dst_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < dst_w && y < dst_h) {
        float sx = fmaxf((x + 0.5f) * ((float)src_w / dst_w) - 0.5f, 0.0f);
        float sy = fmaxf((y + 0.5f) * ((float)src_h / dst_h) - 0.5f, 0.0f);
        int x0 = min((int)sx, src_w - 1);
        int y0 = min((int)sy, src_h - 1);
        int x1 = min(x0 + 1, src_w - 1);
        int y1 = min(y0 + 1, src_h - 1);
        float fx = sx - x0, fy = sy - y0;
        float top = src[y0 * src_w + x0] * (1.0f - fx) + src[y0 * src_w + x1] * fx;
        float bottom = src[y1 * src_w + x0] * (1.0f - fx) + src[y1 * src_w + x1] * fx;
        dst[y * dst_w + x] = top * (1.0f - fy) + bottom * fy;
    }
}
"#,
    &[INT, INT, INT, INT, IN_F32, OUT_F32],
);

/// Binomial option pricing, a block per option and a thread per node.
pub(super) static BINOMIAL_C: Kernel = twin(
    "binomial_options_c",
    r#"
#define NUM_STEPS 1024
extern "C" __global__ void binomial_options_c(const float* __restrict__ S,
        unsigned long long s_len, const float* __restrict__ X, unsigned long long x_len,
        const float* __restrict__ T, unsigned long long t_len, float R, float V,
        float* __restrict__ price, unsigned long long price_len) {
    __shared__ float call[NUM_STEPS + 1];
    int opt = blockIdx.x;
    int tid = threadIdx.x;
    float dt = T[opt] / NUM_STEPS;
    float vDt = V * sqrtf(dt);
    float rDt = R * dt;
    float If = expf(rDt), Df = expf(-rDt);
    float u = expf(vDt), d = expf(-vDt);
    float pu = (If - d) / (u - d);
    float puByDf = pu * Df, pdByDf = (1.0f - pu) * Df;
    for (int i = tid; i <= NUM_STEPS; i += blockDim.x) {
        float s = S[opt] * expf(vDt * (2.0f * i - NUM_STEPS));
        call[i] = fmaxf(s - X[opt], 0.0f);
    }
    for (int i = NUM_STEPS - 1; i >= 0; i--) {
        __syncthreads();
        float v = tid <= i ? puByDf * call[tid + 1] + pdByDf * call[tid] : 0.0f;
        __syncthreads();
        if (tid <= i) call[tid] = v;
    }
    if (tid == 0) price[opt] = call[0];
}
"#,
    &[IN_F32, IN_F32, IN_F32, FLOAT, FLOAT, OUT_F32],
);
