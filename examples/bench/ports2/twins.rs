//! The CUDA C twins of the second set of ports: the textbook or CUDA-sample code of each
//! algorithm, with `int` indices and `__restrict__` pointers, each slice passed as a pointer and
//! an `unsigned long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_U32, IN_U8, OUT_F32, OUT_U32, OUT_U8, UINT};

/// Bell and Garland's `spmv_csr_vector_kernel`, with the shuffle reduction of current CUDA.
pub(super) static SPMV_C: Kernel = twin(
    "spmv_csr_vector_c",
    r#"
extern "C" __global__ void spmv_csr_vector_c(int num_rows, const int* __restrict__ ptr,
        unsigned long long ptr_len, const int* __restrict__ indices, unsigned long long indices_len,
        const float* __restrict__ data, unsigned long long data_len, const float* __restrict__ x,
        unsigned long long x_len, float* __restrict__ y, unsigned long long y_len) {
    int thread_id = blockDim.x * blockIdx.x + threadIdx.x;
    int row = thread_id / 32;
    int lane = thread_id & (32 - 1);
    if (row < num_rows) {
        int row_start = ptr[row], row_end = ptr[row + 1];
        float sum = 0.0f;
        for (int jj = row_start + lane; jj < row_end; jj += 32) sum += data[jj] * x[indices[jj]];
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane == 0) y[row] = sum;
    }
}
"#,
    &[INT, IN_U32, IN_U32, IN_F32, IN_F32, OUT_F32],
);

/// The CUDA sample BlackScholes (its grid-stride form, with `expf`, `logf` and `sqrtf`).
pub(super) static BLACK_SCHOLES_C: Kernel = twin(
    "black_scholes_c",
    r#"
__device__ inline float cndGPU(float d) {
    const float A1 = 0.31938153f;
    const float A2 = -0.356563782f;
    const float A3 = 1.781477937f;
    const float A4 = -1.821255978f;
    const float A5 = 1.330274429f;
    const float RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float cnd = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    if (d > 0) cnd = 1.0f - cnd;
    return cnd;
}
__device__ inline void BlackScholesBodyGPU(float& CallResult, float& PutResult, float S, float X,
        float T, float R, float V) {
    float sqrtT = sqrtf(T);
    float d1 = (logf(S / X) + (R + 0.5f * V * V) * T) / (V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float CNDD1 = cndGPU(d1);
    float CNDD2 = cndGPU(d2);
    float expRT = expf(-R * T);
    CallResult = S * CNDD1 - X * expRT * CNDD2;
    PutResult = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
}
extern "C" __global__ void __launch_bounds__(128) black_scholes_c(float* __restrict__ d_CallResult,
        unsigned long long call_len, float* __restrict__ d_PutResult, unsigned long long put_len,
        const float* __restrict__ d_StockPrice, unsigned long long price_len,
        const float* __restrict__ d_OptionStrike, unsigned long long strike_len,
        const float* __restrict__ d_OptionYears, unsigned long long years_len, float Riskfree,
        float Volatility, int optN) {
    const int tid = blockDim.x * blockIdx.x + threadIdx.x;
    const int THREAD_N = blockDim.x * gridDim.x;
    for (int opt = tid; opt < optN; opt += THREAD_N)
        BlackScholesBodyGPU(d_CallResult[opt], d_PutResult[opt], d_StockPrice[opt],
            d_OptionStrike[opt], d_OptionYears[opt], Riskfree, Volatility);
}
"#,
    &[OUT_F32, OUT_F32, IN_F32, IN_F32, IN_F32, FLOAT, FLOAT, INT],
);

/// GPU Gems 3, chapter 39: `prescan` with conflict-free offsets, a block per chunk, each
/// block's total saved before the root is cleared (as the chapter's large-array scan does).
pub(super) static PRESCAN_C: Kernel = twin(
    "prescan_blocks_c",
    r#"
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)
extern "C" __global__ void prescan_blocks_c(const float* __restrict__ g_idata,
        unsigned long long in_len, float* __restrict__ g_odata, unsigned long long out_len,
        float* __restrict__ g_sums, unsigned long long sums_len) {
    extern __shared__ float temp[];
    int n = 2 * blockDim.x;
    int base = blockIdx.x * n;
    int thid = threadIdx.x;
    int offset = 1;
    int ai = thid;
    int bi = thid + (n / 2);
    int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
    int bankOffsetB = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bankOffsetA] = g_idata[base + ai];
    temp[bi + bankOffsetB] = g_idata[base + bi];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            ai += CONFLICT_FREE_OFFSET(ai);
            bi += CONFLICT_FREE_OFFSET(bi);
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (thid == 0) {
        g_sums[blockIdx.x] = temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)];
        temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0;
    }
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            ai += CONFLICT_FREE_OFFSET(ai);
            bi += CONFLICT_FREE_OFFSET(bi);
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    g_odata[base + ai] = temp[ai + bankOffsetA];
    g_odata[base + bi] = temp[bi + bankOffsetB];
}
"#,
    &[IN_F32, OUT_F32, OUT_F32],
);

/// The CUDA sample sortingNetworks' `bitonicSortShared` and `Comparator`, for chunks of
/// `SHARED_SIZE_LIMIT` keys (the sample's `arrayLength` fixed at it, as the port fixes it).
pub(super) static BITONIC_C: Kernel = twin(
    "bitonic_sort_shared_c",
    r#"
#define SHARED_SIZE_LIMIT 1024U
typedef unsigned int uint;
__device__ inline void Comparator(uint& keyA, uint& valA, uint& keyB, uint& valB, uint dir) {
    uint t;
    if ((keyA > keyB) == dir) {
        t = keyA; keyA = keyB; keyB = t;
        t = valA; valA = valB; valB = t;
    }
}
extern "C" __global__ void bitonic_sort_shared_c(uint* __restrict__ d_DstKey,
        unsigned long long dk_len, uint* __restrict__ d_DstVal, unsigned long long dv_len,
        const uint* __restrict__ d_SrcKey, unsigned long long sk_len,
        const uint* __restrict__ d_SrcVal, unsigned long long sv_len, uint dir) {
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
    for (uint size = 2; size < SHARED_SIZE_LIMIT; size <<= 1) {
        uint ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (uint stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], ddd);
        }
    }
    for (uint stride = SHARED_SIZE_LIMIT / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], dir);
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
}
"#,
    &[OUT_U32, OUT_U32, IN_U32, IN_U32, UINT],
);

/// The CUDA sample convolutionSeparable's `convolutionRowsKernel`, its `__constant__` filter
/// initialised in the source (with [`super::binomial_taps`], which the port receives as its table).
pub(super) static CONVOLUTION_ROWS_C: Kernel = twin(
    "convolution_rows_c",
    r#"
#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
#define ROWS_BLOCKDIM_X 16
#define ROWS_BLOCKDIM_Y 4
#define ROWS_RESULT_STEPS 8
#define ROWS_HALO_STEPS 1
__constant__ float c_Kernel[KERNEL_LENGTH] = {1, 16, 120, 560, 1820, 4368, 8008, 11440, 12870,
    11440, 8008, 4368, 1820, 560, 120, 16, 1};
extern "C" __global__ void convolution_rows_c(float* __restrict__ d_Dst, unsigned long long dst_len,
        const float* __restrict__ d_Src, unsigned long long src_len, int imageW, int imageH,
        int pitch) {
    __shared__ float s_Data[ROWS_BLOCKDIM_Y][(ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X];
    const int baseX = (blockIdx.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X + threadIdx.x;
    const int baseY = blockIdx.y * ROWS_BLOCKDIM_Y + threadIdx.y;
    d_Src += baseY * pitch + baseX;
    d_Dst += baseY * pitch + baseX;
#pragma unroll
    for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] = d_Src[i * ROWS_BLOCKDIM_X];
#pragma unroll
    for (int i = 0; i < ROWS_HALO_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
            (baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
#pragma unroll
    for (int i = ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS + ROWS_HALO_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
            (imageW - baseX > i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
    __syncthreads();
#pragma unroll
    for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
        float sum = 0;
#pragma unroll
        for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
            sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X + j];
        d_Dst[i * ROWS_BLOCKDIM_X] = sum;
    }
}
"#,
    &[OUT_F32, IN_F32, INT, INT, INT],
);

/// A row softmax as ML code writes it: a block per row, warp shuffles, a shared slot per warp.
pub(super) static SOFTMAX_C: Kernel = twin(
    "softmax_rows_c",
    r#"
__device__ float warpReduceMax(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}
__device__ float warpReduceSum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}
// NVRTC has no <math.h>, whose INFINITY this stands for.
#define NEG_INFINITY __int_as_float(0xff800000)
extern "C" __global__ void softmax_rows_c(int cols, const float* __restrict__ x,
        unsigned long long x_len, float* __restrict__ y, unsigned long long y_len) {
    __shared__ float shared[32];
    int row = blockIdx.x, t = threadIdx.x;
    int lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
    const float* in = x + row * cols;
    float* out = y + row * cols;
    float m = NEG_INFINITY;
    for (int i = t; i < cols; i += blockDim.x) m = fmaxf(m, in[i]);
    m = warpReduceMax(m);
    if (lane == 0) shared[warp] = m;
    __syncthreads();
    m = warpReduceMax(lane < warps ? shared[lane] : NEG_INFINITY);
    __syncthreads();
    float sum = 0.0f;
    for (int i = t; i < cols; i += blockDim.x) sum += expf(in[i] - m);
    sum = warpReduceSum(sum);
    if (lane == 0) shared[warp] = sum;
    __syncthreads();
    sum = warpReduceSum(lane < warps ? shared[lane] : 0.0f);
    float inv = 1.0f / sum;
    for (int i = t; i < cols; i += blockDim.x) out[i] = expf(in[i] - m) * inv;
}
"#,
    &[INT, IN_F32, OUT_F32],
);

/// The CUDA sample SobelFilter's `ComputeSobel`, a thread per pixel reading clamped neighbours
/// (the sample's clamped texture reads).
pub(super) static SOBEL_C: Kernel = twin(
    "sobel_c",
    r#"
__device__ unsigned char ComputeSobel(unsigned char ul, unsigned char um, unsigned char ur,
        unsigned char ml, unsigned char mr, unsigned char ll, unsigned char lm, unsigned char lr,
        float fScale) {
    short Horz = ur + 2 * mr + lr - ul - 2 * ml - ll;
    short Vert = ul + 2 * um + ur - ll - 2 * lm - lr;
    short Sum = (short)(fScale * (abs((int)Horz) + abs((int)Vert)));
    if (Sum < 0) return 0;
    else if (Sum > 0xff) return 0xff;
    return (unsigned char)Sum;
}
extern "C" __global__ void sobel_c(int w, int h, float fScale, const unsigned char* __restrict__ in,
        unsigned long long in_len, unsigned char* __restrict__ out, unsigned long long out_len) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int l = max(x - 1, 0), r = min(x + 1, w - 1), u = max(y - 1, 0), d = min(y + 1, h - 1);
        out[y * w + x] = ComputeSobel(in[u * w + l], in[u * w + x], in[u * w + r], in[y * w + l],
            in[y * w + r], in[d * w + l], in[d * w + x], in[d * w + r], fScale);
    }
}
"#,
    &[INT, INT, FLOAT, IN_U8, OUT_U8],
);

/// The escape-time Mandelbrot of every CUDA course, a thread per pixel.
pub(super) static MANDELBROT_C: Kernel = twin(
    "mandelbrot_c",
    r#"
extern "C" __global__ void mandelbrot_c(int width, int height, float x_min, float y_min, float step,
        int max_iter, unsigned int* __restrict__ iterations, unsigned long long iterations_len) {
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < width && py < height) {
        float cx = x_min + px * step, cy = y_min + py * step;
        float x = 0.0f, y = 0.0f;
        int i = 0;
        while (i < max_iter && x * x + y * y <= 4.0f) {
            float xt = x * x - y * y + cx;
            y = 2.0f * x * y + cy;
            x = xt;
            ++i;
        }
        iterations[py * width + px] = i;
    }
}
"#,
    &[INT, INT, FLOAT, FLOAT, FLOAT, INT, OUT_U32],
);

/// A warp-per-row gemv with a shuffle reduction.
pub(super) static GEMV_C: Kernel = twin(
    "gemv_warp_c",
    r#"
extern "C" __global__ void gemv_warp_c(int rows, int cols, const float* __restrict__ a,
        unsigned long long a_len, const float* __restrict__ x, unsigned long long x_len,
        float* __restrict__ y, unsigned long long y_len) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = lane; j < cols; j += 32) sum += a[row * cols + j] * x[j];
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (lane == 0) y[row] = sum;
    }
}
"#,
    &[INT, INT, IN_F32, IN_F32, OUT_F32],
);

/// CUDA by Example's `dot` (chapter 5), ending in an `atomicAdd` instead of a per-block output.
pub(super) static DOT_C: Kernel = twin(
    "dot_c",
    r#"
#define threadsPerBlock 256
extern "C" __global__ void dot_c(int N, const float* __restrict__ a, unsigned long long a_len,
        const float* __restrict__ b, unsigned long long b_len, float* __restrict__ c,
        unsigned long long c_len) {
    __shared__ float cache[threadsPerBlock];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    int cacheIndex = threadIdx.x;
    float temp = 0;
    while (tid < N) {
        temp += a[tid] * b[tid];
        tid += blockDim.x * gridDim.x;
    }
    cache[cacheIndex] = temp;
    __syncthreads();
    int i = blockDim.x / 2;
    while (i != 0) {
        if (cacheIndex < i) cache[cacheIndex] += cache[cacheIndex + i];
        __syncthreads();
        i /= 2;
    }
    if (cacheIndex == 0) atomicAdd(c, cache[0]);
}
"#,
    &[INT, IN_F32, IN_F32, OUT_F32],
);

/// The CUDA sample fastWalshTransform's `fwtBatch1Kernel` (`__syncthreads()` for its
/// cooperative-groups barrier).
pub(super) static FWT_C: Kernel = twin(
    "fwt_batch1_c",
    r#"
extern "C" __global__ void fwt_batch1_c(float* __restrict__ d_Output, unsigned long long out_len,
        const float* __restrict__ d_Input, unsigned long long in_len, int log2N) {
    const int N = 1 << log2N;
    const int base = blockIdx.x << log2N;
    extern __shared__ float s_data[];
    const float* d_Src = d_Input + base;
    float* d_Dst = d_Output + base;
    for (int pos = threadIdx.x; pos < N; pos += blockDim.x) s_data[pos] = d_Src[pos];
    const int pos = threadIdx.x;
    for (int stride = N >> 2; stride > 0; stride >>= 2) {
        int lo = pos & (stride - 1);
        int i0 = ((pos - lo) << 2) + lo;
        int i1 = i0 + stride;
        int i2 = i1 + stride;
        int i3 = i2 + stride;
        __syncthreads();
        float D0 = s_data[i0];
        float D1 = s_data[i1];
        float D2 = s_data[i2];
        float D3 = s_data[i3];
        float T;
        T = D0; D0 = D0 + D2; D2 = T - D2;
        T = D1; D1 = D1 + D3; D3 = T - D3;
        T = D0; s_data[i0] = D0 + D1; s_data[i1] = T - D1;
        T = D2; s_data[i2] = D2 + D3; s_data[i3] = T - D3;
    }
    if (log2N & 1) {
        __syncthreads();
        for (int pos = threadIdx.x; pos < N / 2; pos += blockDim.x) {
            int i0 = pos << 1;
            int i1 = i0 + 1;
            float D0 = s_data[i0];
            float D1 = s_data[i1];
            s_data[i0] = D0 + D1;
            s_data[i1] = D0 - D1;
        }
    }
    __syncthreads();
    for (int pos = threadIdx.x; pos < N; pos += blockDim.x) d_Dst[pos] = s_data[pos];
}
"#,
    &[OUT_F32, IN_F32, INT],
);
