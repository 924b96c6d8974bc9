//! The CUDA C twins of the eighteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::Kernel;

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_U32, OUT_F32, OUT_U32, UINT};

/// Rodinia's `lud_diagonal`.
pub(super) static LUD_DIAGONAL_C: Kernel = twin(
    "lud_diagonal_c",
    r#"
#define BLOCK_SIZE 16
extern "C" __global__ void lud_diagonal_c(float* __restrict__ m, unsigned long long m_len,
        int matrix_dim, int offset) {
    __shared__ float shadow[BLOCK_SIZE][BLOCK_SIZE];
    int array_offset = offset * matrix_dim + offset;
    for (int i = 0; i < BLOCK_SIZE; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];
        array_offset += matrix_dim;
    }
    __syncthreads();
    for (int i = 0; i < BLOCK_SIZE - 1; i++) {
        if (threadIdx.x > i) {
            for (int j = 0; j < i; j++)
                shadow[threadIdx.x][i] -= shadow[threadIdx.x][j] * shadow[j][i];
            shadow[threadIdx.x][i] /= shadow[i][i];
        }
        __syncthreads();
        if (threadIdx.x > i) {
            for (int j = 0; j < i + 1; j++)
                shadow[i + 1][threadIdx.x] -= shadow[i + 1][j] * shadow[j][threadIdx.x];
        }
        __syncthreads();
    }
    array_offset = (offset + 1) * matrix_dim + offset;
    for (int i = 1; i < BLOCK_SIZE; i++) {
        m[array_offset + threadIdx.x] = shadow[i][threadIdx.x];
        array_offset += matrix_dim;
    }
}
"#,
    &[OUT_F32, INT, INT],
);

/// Rodinia's `lud_perimeter`, with a barrier between the solves and the stores for all
/// threads (Rodinia's sits in one branch).
pub(super) static LUD_PERIMETER_C: Kernel = twin(
    "lud_perimeter_c",
    r#"
#define BLOCK_SIZE 16
extern "C" __global__ void lud_perimeter_c(float* __restrict__ m, unsigned long long m_len,
        int matrix_dim, int offset) {
    __shared__ float dia[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float peri_row[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float peri_col[BLOCK_SIZE][BLOCK_SIZE];
    int array_offset, idx;
    if (threadIdx.x < BLOCK_SIZE) {
        idx = threadIdx.x;
        array_offset = offset * matrix_dim + offset;
        for (int i = 0; i < BLOCK_SIZE / 2; i++) {
            dia[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
        array_offset = offset * matrix_dim + offset;
        for (int i = 0; i < BLOCK_SIZE; i++) {
            peri_row[i][idx] = m[array_offset + (blockIdx.x + 1) * BLOCK_SIZE + idx];
            array_offset += matrix_dim;
        }
    } else {
        idx = threadIdx.x - BLOCK_SIZE;
        array_offset = (offset + BLOCK_SIZE / 2) * matrix_dim + offset;
        for (int i = BLOCK_SIZE / 2; i < BLOCK_SIZE; i++) {
            dia[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
        array_offset = (offset + (blockIdx.x + 1) * BLOCK_SIZE) * matrix_dim + offset;
        for (int i = 0; i < BLOCK_SIZE; i++) {
            peri_col[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
    }
    __syncthreads();
    if (threadIdx.x < BLOCK_SIZE) {
        idx = threadIdx.x;
        for (int i = 1; i < BLOCK_SIZE; i++)
            for (int j = 0; j < i; j++)
                peri_row[i][idx] -= dia[i][j] * peri_row[j][idx];
    } else {
        idx = threadIdx.x - BLOCK_SIZE;
        for (int i = 0; i < BLOCK_SIZE; i++) {
            for (int j = 0; j < i; j++)
                peri_col[idx][i] -= peri_col[idx][j] * dia[j][i];
            peri_col[idx][i] /= dia[i][i];
        }
    }
    __syncthreads();
    if (threadIdx.x < BLOCK_SIZE) {
        idx = threadIdx.x;
        array_offset = (offset + 1) * matrix_dim + offset;
        for (int i = 1; i < BLOCK_SIZE; i++) {
            m[array_offset + (blockIdx.x + 1) * BLOCK_SIZE + idx] = peri_row[i][idx];
            array_offset += matrix_dim;
        }
    } else {
        idx = threadIdx.x - BLOCK_SIZE;
        array_offset = (offset + (blockIdx.x + 1) * BLOCK_SIZE) * matrix_dim + offset;
        for (int i = 0; i < BLOCK_SIZE; i++) {
            m[array_offset + idx] = peri_col[i][idx];
            array_offset += matrix_dim;
        }
    }
}
"#,
    &[OUT_F32, INT, INT],
);

/// Rodinia's `lud_internal`.
pub(super) static LUD_INTERNAL_C: Kernel = twin(
    "lud_internal_c",
    r#"
#define BLOCK_SIZE 16
extern "C" __global__ void lud_internal_c(float* __restrict__ m, unsigned long long m_len,
        int matrix_dim, int offset) {
    __shared__ float peri_row[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float peri_col[BLOCK_SIZE][BLOCK_SIZE];
    int global_row_id = offset + (blockIdx.y + 1) * BLOCK_SIZE;
    int global_col_id = offset + (blockIdx.x + 1) * BLOCK_SIZE;
    peri_row[threadIdx.y][threadIdx.x] =
        m[(offset + threadIdx.y) * matrix_dim + global_col_id + threadIdx.x];
    peri_col[threadIdx.y][threadIdx.x] =
        m[(global_row_id + threadIdx.y) * matrix_dim + offset + threadIdx.x];
    __syncthreads();
    float sum = 0;
    for (int i = 0; i < BLOCK_SIZE; i++)
        sum += peri_col[threadIdx.y][i] * peri_row[i][threadIdx.x];
    m[(global_row_id + threadIdx.y) * matrix_dim + global_col_id + threadIdx.x] -= sum;
}
"#,
    &[OUT_F32, INT, INT],
);

/// The CUDA samples' `d_recursiveGaussian_rgba` (clamped to the edge).
pub(super) static RECURSIVE_GAUSSIAN_C: Kernel = twin(
    "recursive_gaussian_rgba_c",
    r#"
__device__ float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ float4 operator-(float4 a, float4 b) { return make_float4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w); }
__device__ float4 operator*(float s, float4 a) { return make_float4(s * a.x, s * a.y, s * a.z, s * a.w); }
__device__ float4 rgbaIntToFloat(unsigned int c) {
    float4 rgba;
    rgba.x = (c & 0xff) * 0.003921568627f;
    rgba.y = ((c >> 8) & 0xff) * 0.003921568627f;
    rgba.z = ((c >> 16) & 0xff) * 0.003921568627f;
    rgba.w = ((c >> 24) & 0xff) * 0.003921568627f;
    return rgba;
}
__device__ unsigned int rgbaFloatToInt(float4 rgba) {
    rgba.x = __saturatef(fabsf(rgba.x));
    rgba.y = __saturatef(fabsf(rgba.y));
    rgba.z = __saturatef(fabsf(rgba.z));
    rgba.w = __saturatef(fabsf(rgba.w));
    return ((unsigned int)(rgba.w * 255.0f) << 24) | ((unsigned int)(rgba.z * 255.0f) << 16) |
           ((unsigned int)(rgba.y * 255.0f) << 8) | (unsigned int)(rgba.x * 255.0f);
}
extern "C" __global__ void recursive_gaussian_rgba_c(const unsigned int* __restrict__ id,
        unsigned long long id_len, unsigned int* __restrict__ od, unsigned long long od_len,
        int w, int h, float a0, float a1, float a2, float a3, float b1, float b2, float coefp,
        float coefn) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    id += x;
    od += x;
    float4 xp = rgbaIntToFloat(*id);
    float4 yb = coefp * xp;
    float4 yp = yb;
    for (int y = 0; y < h; y++) {
        float4 xc = rgbaIntToFloat(*id);
        float4 yc = a0 * xc + a1 * xp - b1 * yp - b2 * yb;
        *od = rgbaFloatToInt(yc);
        id += w;
        od += w;
        xp = xc;
        yb = yp;
        yp = yc;
    }
    id -= w;
    od -= w;
    float4 xn = rgbaIntToFloat(*id);
    float4 xa = xn;
    float4 yn = coefn * xn;
    float4 ya = yn;
    for (int y = h - 1; y >= 0; y--) {
        float4 xc = rgbaIntToFloat(*id);
        float4 yc = a2 * xn + a3 * xa - b1 * yn - b2 * ya;
        xa = xn;
        xn = xc;
        ya = yn;
        yn = yc;
        *od = rgbaFloatToInt(rgbaIntToFloat(*od) + yc);
        id -= w;
        od -= w;
    }
}
"#,
    &[
        IN_U32, OUT_U32, INT, INT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT,
    ],
);

/// The CUDA samples' MonteCarlo, one block an option, with the xorshift generator of the port
/// in place of cuRAND's.
pub(super) static MONTE_CARLO_C: Kernel = twin(
    "monte_carlo_call_c",
    r#"
#define THREAD_N 256
struct OptionData { float S, X, T, R, V; };
struct OptionSums { float Expected, Confidence; };
__device__ unsigned int seed_state(unsigned int seed, unsigned int stream) {
    unsigned int h = seed ^ (stream * 0x9E3779B9u);
    h = (h ^ 61u) ^ (h >> 16);
    h *= 9u;
    h ^= h >> 4;
    h *= 0x27D4EB2Du;
    h ^= h >> 15;
    return h | 1u;
}
__device__ float uniform(unsigned int& state) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return (float)((state >> 8) + 1u) * (1.0f / 16777216.0f);
}
extern "C" __global__ void monte_carlo_call_c(unsigned int seed, int pathN,
        const float* __restrict__ option_words, unsigned long long option_words_len,
        float* __restrict__ sum_words, unsigned long long sum_words_len) {
    const OptionData* d_OptionData = reinterpret_cast<const OptionData*>(option_words);
    OptionSums* d_Sums = reinterpret_cast<OptionSums*>(sum_words);
    __shared__ float s_SumCall[THREAD_N];
    __shared__ float s_Sum2Call[THREAD_N];
    int tid = threadIdx.x;
    int optionIndex = blockIdx.x;
    OptionData opt = d_OptionData[optionIndex];
    float MuByT = (opt.R - 0.5f * opt.V * opt.V) * opt.T;
    float VBySqrtT = opt.V * sqrtf(opt.T);
    unsigned int state = seed_state(seed, optionIndex * THREAD_N + tid);
    float sum = 0.0f, sum2 = 0.0f;
    for (int i = tid; i < pathN / 2; i += THREAD_N) {
        float radius = sqrtf(-2.0f * logf(uniform(state)));
        float s, c;
        sincosf(6.2831855f * uniform(state), &s, &c);
        float z[2] = {radius * c, radius * s};
        for (int k = 0; k < 2; k++) {
            float callValue = fmaxf(opt.S * expf(MuByT + VBySqrtT * z[k]) - opt.X, 0.0f);
            sum += callValue;
            sum2 += callValue * callValue;
        }
    }
    s_SumCall[tid] = sum;
    s_Sum2Call[tid] = sum2;
    __syncthreads();
    for (int stride = THREAD_N / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s_SumCall[tid] += s_SumCall[tid + stride];
            s_Sum2Call[tid] += s_Sum2Call[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        d_Sums[optionIndex].Expected = s_SumCall[0];
        d_Sums[optionIndex].Confidence = s_Sum2Call[0];
    }
}
"#,
    &[UINT, INT, IN_F32, OUT_F32],
);

/// A radix sort's local 4-bit split: four 1-bit splits over a Hillis–Steele scan.
pub(super) static RADIX_SPLIT_C: Kernel = twin(
    "radix_split_4bit_c",
    r#"
#define SPLIT_BLOCK 256
extern "C" __global__ void radix_split_4bit_c(unsigned int shift,
        const unsigned int* __restrict__ keys, unsigned long long keys_len,
        unsigned int* __restrict__ sorted, unsigned long long sorted_len,
        unsigned int* __restrict__ counts, unsigned long long counts_len) {
    __shared__ unsigned int tile[SPLIT_BLOCK];
    __shared__ unsigned int scan[SPLIT_BLOCK];
    __shared__ unsigned int digits[16];
    int t = threadIdx.x;
    int chunk = blockIdx.x;
    int chunks = (int)keys_len / SPLIT_BLOCK;
    unsigned int key = keys[chunk * SPLIT_BLOCK + t];
    for (unsigned int bit = shift; bit < shift + 4; bit++) {
        unsigned int one = (key >> bit) & 1;
        scan[t] = one;
        __syncthreads();
        for (int offset = 1; offset < SPLIT_BLOCK; offset *= 2) {
            unsigned int before = t >= offset ? scan[t - offset] : 0;
            __syncthreads();
            scan[t] += before;
            __syncthreads();
        }
        unsigned int ones_before = scan[t] - one;
        unsigned int zeros = SPLIT_BLOCK - scan[SPLIT_BLOCK - 1];
        unsigned int dest = one ? zeros + ones_before : t - ones_before;
        tile[dest] = key;
        __syncthreads();
        key = tile[t];
    }
    sorted[chunk * SPLIT_BLOCK + t] = key;
    if (t < 16) digits[t] = 0;
    __syncthreads();
    atomicAdd(&digits[(key >> shift) & 15], 1u);
    __syncthreads();
    if (t < 16) counts[t * chunks + chunk] = digits[t];
}
"#,
    &[UINT, IN_U32, OUT_U32, OUT_U32],
);
