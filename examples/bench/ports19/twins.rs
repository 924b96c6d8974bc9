//! The CUDA C twins of the nineteenth set of ports: the textbook code of each algorithm, with
//! `int` indices and `__restrict__` pointers, each slice passed as a pointer and an `unsigned
//! long long` length as our kernels receive it.

use gpu_dsl::runtime::{ElemType, Kernel, ParamKind, ScalarType};

use crate::ports::{twin, FLOAT, INT, IN_F32, IN_I32, IN_U32, OUT_F32};

/// An `f64` scalar parameter of a twin.
const DOUBLE: ParamKind = ParamKind::Scalar(ScalarType::F64);

/// A `&[f64]` parameter of a twin.
const IN_F64: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::F64),
    mutable: false,
};

/// A `&mut [f64]` parameter of a twin.
const OUT_F64: ParamKind = ParamKind::Slice {
    elem: ElemType::Scalar(ScalarType::F64),
    mutable: true,
};

/// Parboil's MRI-Q `ComputeQ_GPU`, the samples read from global memory as `float4`s (Parboil
/// stages chunks of them in `__constant__` memory), its cosine and sine of one argument as one
/// `sincosf`, as the port's `sin_cos`.
pub(super) static MRIQ_C: Kernel = twin(
    "mriq_compute_q_c",
    r#"
#define PIx2 6.2831853071795864769252867665590058f
struct kValues { float Kx, Ky, Kz, PhiMag; };
extern "C" __global__ void mriq_compute_q_c(int numK, int numX,
        const float* __restrict__ k_words, unsigned long long k_words_len,
        const float* __restrict__ x, unsigned long long x_len,
        const float* __restrict__ y, unsigned long long y_len,
        const float* __restrict__ z, unsigned long long z_len,
        float* __restrict__ Qr, unsigned long long Qr_len,
        float* __restrict__ Qi, unsigned long long Qi_len) {
    const kValues* ck = reinterpret_cast<const kValues*>(k_words);
    int xIndex = blockIdx.x * blockDim.x + threadIdx.x;
    if (xIndex >= numX) return;
    float sX = x[xIndex], sY = y[xIndex], sZ = z[xIndex];
    float sQr = Qr[xIndex], sQi = Qi[xIndex];
    for (int kIndex = 0; kIndex < numK; kIndex++) {
        float expArg = PIx2 * (ck[kIndex].Kx * sX + ck[kIndex].Ky * sY + ck[kIndex].Kz * sZ);
        float s, c;
        sincosf(expArg, &s, &c);
        sQr += ck[kIndex].PhiMag * c;
        sQi += ck[kIndex].PhiMag * s;
    }
    Qr[xIndex] = sQr;
    Qi[xIndex] = sQi;
}
"#,
    &[INT, INT, IN_F32, IN_F32, IN_F32, IN_F32, OUT_F32, OUT_F32],
);

/// Rodinia's lavaMD `kernel_gpu_cuda` (`fp` double), each box's neighbours as a count and 26
/// box numbers, the force on a home particle from one neighbour box summed in registers and
/// added once.
pub(super) static LAVAMD_C: Kernel = twin(
    "lavamd_c",
    r#"
#define NUMBER_PAR_PER_BOX 100
#define NUMBER_THREADS 128
#define DOT(A, B) ((A.x) * (B.x) + (A.y) * (B.y) + (A.z) * (B.z))
typedef struct { double v, x, y, z; } FOUR_VECTOR;
typedef struct { unsigned int offset, nn, nei[26]; } box_str;
extern "C" __global__ void lavamd_c(double alpha, const unsigned int* __restrict__ box_words,
        unsigned long long box_words_len, const double* __restrict__ rv_words,
        unsigned long long rv_words_len, const double* __restrict__ d_qv_gpu,
        unsigned long long qv_len, double* __restrict__ fv_words,
        unsigned long long fv_words_len) {
    const box_str* d_box_gpu = reinterpret_cast<const box_str*>(box_words);
    const FOUR_VECTOR* d_rv_gpu = reinterpret_cast<const FOUR_VECTOR*>(rv_words);
    FOUR_VECTOR* d_fv_gpu = reinterpret_cast<FOUR_VECTOR*>(fv_words);
    __shared__ FOUR_VECTOR rA_shared[NUMBER_PAR_PER_BOX];
    __shared__ FOUR_VECTOR rB_shared[NUMBER_PAR_PER_BOX];
    __shared__ double qB_shared[NUMBER_PAR_PER_BOX];
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int wtx = tx;
    double a2 = 2.0 * alpha * alpha;
    int first_i = d_box_gpu[bx].offset;
    const FOUR_VECTOR* rA = &d_rv_gpu[first_i];
    FOUR_VECTOR* fA = &d_fv_gpu[first_i];
    while (wtx < NUMBER_PAR_PER_BOX) {
        rA_shared[wtx] = rA[wtx];
        wtx = wtx + NUMBER_THREADS;
    }
    wtx = tx;
    __syncthreads();
    for (int k = 0; k < (1 + (int)d_box_gpu[bx].nn); k++) {
        int pointer = k == 0 ? bx : d_box_gpu[bx].nei[k - 1];
        int first_j = d_box_gpu[pointer].offset;
        const FOUR_VECTOR* rB = &d_rv_gpu[first_j];
        const double* qB = &d_qv_gpu[first_j];
        while (wtx < NUMBER_PAR_PER_BOX) {
            rB_shared[wtx] = rB[wtx];
            qB_shared[wtx] = qB[wtx];
            wtx = wtx + NUMBER_THREADS;
        }
        wtx = tx;
        __syncthreads();
        while (wtx < NUMBER_PAR_PER_BOX) {
            double fv = 0.0, fx = 0.0, fy = 0.0, fz = 0.0;
            for (int j = 0; j < NUMBER_PAR_PER_BOX; j++) {
                double r2 = rA_shared[wtx].v + rB_shared[j].v - DOT(rA_shared[wtx], rB_shared[j]);
                double u2 = a2 * r2;
                double vij = exp(-u2);
                double fs = 2.0 * vij;
                double dx = rA_shared[wtx].x - rB_shared[j].x;
                double dy = rA_shared[wtx].y - rB_shared[j].y;
                double dz = rA_shared[wtx].z - rB_shared[j].z;
                fv += qB_shared[j] * vij;
                fx += qB_shared[j] * (fs * dx);
                fy += qB_shared[j] * (fs * dy);
                fz += qB_shared[j] * (fs * dz);
            }
            fA[wtx].v += fv;
            fA[wtx].x += fx;
            fA[wtx].y += fy;
            fA[wtx].z += fz;
            wtx = wtx + NUMBER_THREADS;
        }
        wtx = tx;
        __syncthreads();
    }
}
"#,
    &[DOUBLE, IN_U32, IN_F64, IN_F64, OUT_F64],
);

/// Rodinia CFD's `cuda_compute_flux` with its helpers, the far field's state and fluxes
/// passed as arguments (Rodinia keeps them in `__constant__` memory).
pub(super) static CFD_FLUX_C: Kernel = twin(
    "cfd_compute_flux_c",
    r#"
#define GAMMA 1.4f
#define NNB 4
#define VAR_DENSITY 0
#define VAR_MOMENTUM 1
#define VAR_DENSITY_ENERGY (VAR_MOMENTUM + 3)
__device__ inline void compute_flux_contribution(float& density, float3& momentum,
        float& density_energy, float& pressure, float3& velocity, float3& fc_momentum_x,
        float3& fc_momentum_y, float3& fc_momentum_z, float3& fc_density_energy) {
    fc_momentum_x.x = velocity.x * momentum.x + pressure;
    fc_momentum_x.y = velocity.x * momentum.y;
    fc_momentum_x.z = velocity.x * momentum.z;
    fc_momentum_y.x = fc_momentum_x.y;
    fc_momentum_y.y = velocity.y * momentum.y + pressure;
    fc_momentum_y.z = velocity.y * momentum.z;
    fc_momentum_z.x = fc_momentum_x.z;
    fc_momentum_z.y = fc_momentum_y.z;
    fc_momentum_z.z = velocity.z * momentum.z + pressure;
    float de_p = density_energy + pressure;
    fc_density_energy.x = velocity.x * de_p;
    fc_density_energy.y = velocity.y * de_p;
    fc_density_energy.z = velocity.z * de_p;
}
__device__ inline void compute_velocity(float& density, float3& momentum, float3& velocity) {
    velocity.x = momentum.x / density;
    velocity.y = momentum.y / density;
    velocity.z = momentum.z / density;
}
__device__ inline float compute_speed_sqd(float3& velocity) {
    return velocity.x * velocity.x + velocity.y * velocity.y + velocity.z * velocity.z;
}
__device__ inline float compute_pressure(float& density, float& density_energy, float& speed_sqd) {
    return (float(GAMMA) - float(1.0f)) * (density_energy - float(0.5f) * density * speed_sqd);
}
__device__ inline float compute_speed_of_sound(float& density, float& pressure) {
    return sqrtf(float(GAMMA) * pressure / density);
}
extern "C" __global__ void cfd_compute_flux_c(int nelr,
        const int* __restrict__ elements_surrounding_elements, unsigned long long ese_len,
        const float* __restrict__ normals, unsigned long long normals_len,
        const float* __restrict__ variables, unsigned long long variables_len,
        float* __restrict__ fluxes, unsigned long long fluxes_len,
        float ff_density, float ff_mx, float ff_my, float ff_mz, float ff_energy,
        float ff_fc_mxx, float ff_fc_mxy, float ff_fc_mxz,
        float ff_fc_myx, float ff_fc_myy, float ff_fc_myz,
        float ff_fc_mzx, float ff_fc_mzy, float ff_fc_mzz,
        float ff_fc_ex, float ff_fc_ey, float ff_fc_ez) {
    const float smoothing_coefficient = float(0.2f);
    const int i = (blockDim.x * blockIdx.x + threadIdx.x);
    if (i >= nelr) return;
    int j, nb;
    float3 normal;
    float normal_len;
    float factor;
    float density_i = variables[i + VAR_DENSITY * nelr];
    float3 momentum_i;
    momentum_i.x = variables[i + (VAR_MOMENTUM + 0) * nelr];
    momentum_i.y = variables[i + (VAR_MOMENTUM + 1) * nelr];
    momentum_i.z = variables[i + (VAR_MOMENTUM + 2) * nelr];
    float density_energy_i = variables[i + VAR_DENSITY_ENERGY * nelr];
    float3 velocity_i;
    compute_velocity(density_i, momentum_i, velocity_i);
    float speed_sqd_i = compute_speed_sqd(velocity_i);
    float speed_i = sqrtf(speed_sqd_i);
    float pressure_i = compute_pressure(density_i, density_energy_i, speed_sqd_i);
    float speed_of_sound_i = compute_speed_of_sound(density_i, pressure_i);
    float3 fc_i_momentum_x, fc_i_momentum_y, fc_i_momentum_z, fc_i_density_energy;
    compute_flux_contribution(density_i, momentum_i, density_energy_i, pressure_i, velocity_i,
        fc_i_momentum_x, fc_i_momentum_y, fc_i_momentum_z, fc_i_density_energy);
    float flux_i_density = float(0.0f);
    float3 flux_i_momentum;
    flux_i_momentum.x = float(0.0f);
    flux_i_momentum.y = float(0.0f);
    flux_i_momentum.z = float(0.0f);
    float flux_i_density_energy = float(0.0f);
    float3 velocity_nb;
    float density_nb, density_energy_nb;
    float3 momentum_nb;
    float3 fc_nb_momentum_x, fc_nb_momentum_y, fc_nb_momentum_z, fc_nb_density_energy;
    float speed_sqd_nb, speed_of_sound_nb, pressure_nb;
    #pragma unroll
    for (j = 0; j < NNB; j++) {
        nb = elements_surrounding_elements[i + j * nelr];
        normal.x = normals[i + (j + 0 * NNB) * nelr];
        normal.y = normals[i + (j + 1 * NNB) * nelr];
        normal.z = normals[i + (j + 2 * NNB) * nelr];
        normal_len = sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);
        if (nb >= 0) {
            density_nb = variables[nb + VAR_DENSITY * nelr];
            momentum_nb.x = variables[nb + (VAR_MOMENTUM + 0) * nelr];
            momentum_nb.y = variables[nb + (VAR_MOMENTUM + 1) * nelr];
            momentum_nb.z = variables[nb + (VAR_MOMENTUM + 2) * nelr];
            density_energy_nb = variables[nb + VAR_DENSITY_ENERGY * nelr];
            compute_velocity(density_nb, momentum_nb, velocity_nb);
            speed_sqd_nb = compute_speed_sqd(velocity_nb);
            pressure_nb = compute_pressure(density_nb, density_energy_nb, speed_sqd_nb);
            speed_of_sound_nb = compute_speed_of_sound(density_nb, pressure_nb);
            compute_flux_contribution(density_nb, momentum_nb, density_energy_nb, pressure_nb,
                velocity_nb, fc_nb_momentum_x, fc_nb_momentum_y, fc_nb_momentum_z,
                fc_nb_density_energy);
            factor = -normal_len * smoothing_coefficient * float(0.5f)
                * (speed_i + sqrtf(speed_sqd_nb) + speed_of_sound_i + speed_of_sound_nb);
            flux_i_density += factor * (density_i - density_nb);
            flux_i_density_energy += factor * (density_energy_i - density_energy_nb);
            flux_i_momentum.x += factor * (momentum_i.x - momentum_nb.x);
            flux_i_momentum.y += factor * (momentum_i.y - momentum_nb.y);
            flux_i_momentum.z += factor * (momentum_i.z - momentum_nb.z);
            factor = float(0.5f) * normal.x;
            flux_i_density += factor * (momentum_nb.x + momentum_i.x);
            flux_i_density_energy += factor * (fc_nb_density_energy.x + fc_i_density_energy.x);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.x + fc_i_momentum_x.x);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.x + fc_i_momentum_y.x);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.x + fc_i_momentum_z.x);
            factor = float(0.5f) * normal.y;
            flux_i_density += factor * (momentum_nb.y + momentum_i.y);
            flux_i_density_energy += factor * (fc_nb_density_energy.y + fc_i_density_energy.y);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.y + fc_i_momentum_x.y);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.y + fc_i_momentum_y.y);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.y + fc_i_momentum_z.y);
            factor = float(0.5f) * normal.z;
            flux_i_density += factor * (momentum_nb.z + momentum_i.z);
            flux_i_density_energy += factor * (fc_nb_density_energy.z + fc_i_density_energy.z);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.z + fc_i_momentum_x.z);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.z + fc_i_momentum_y.z);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.z + fc_i_momentum_z.z);
        } else if (nb == -1) {
            flux_i_momentum.x += normal.x * pressure_i;
            flux_i_momentum.y += normal.y * pressure_i;
            flux_i_momentum.z += normal.z * pressure_i;
        } else if (nb == -2) {
            factor = float(0.5f) * normal.x;
            flux_i_density += factor * (ff_mx + momentum_i.x);
            flux_i_density_energy += factor * (ff_fc_ex + fc_i_density_energy.x);
            flux_i_momentum.x += factor * (ff_fc_mxx + fc_i_momentum_x.x);
            flux_i_momentum.y += factor * (ff_fc_myx + fc_i_momentum_y.x);
            flux_i_momentum.z += factor * (ff_fc_mzx + fc_i_momentum_z.x);
            factor = float(0.5f) * normal.y;
            flux_i_density += factor * (ff_my + momentum_i.y);
            flux_i_density_energy += factor * (ff_fc_ey + fc_i_density_energy.y);
            flux_i_momentum.x += factor * (ff_fc_mxy + fc_i_momentum_x.y);
            flux_i_momentum.y += factor * (ff_fc_myy + fc_i_momentum_y.y);
            flux_i_momentum.z += factor * (ff_fc_mzy + fc_i_momentum_z.y);
            factor = float(0.5f) * normal.z;
            flux_i_density += factor * (ff_mz + momentum_i.z);
            flux_i_density_energy += factor * (ff_fc_ez + fc_i_density_energy.z);
            flux_i_momentum.x += factor * (ff_fc_mxz + fc_i_momentum_x.z);
            flux_i_momentum.y += factor * (ff_fc_myz + fc_i_momentum_y.z);
            flux_i_momentum.z += factor * (ff_fc_mzz + fc_i_momentum_z.z);
        }
    }
    fluxes[i + VAR_DENSITY * nelr] = flux_i_density;
    fluxes[i + (VAR_MOMENTUM + 0) * nelr] = flux_i_momentum.x;
    fluxes[i + (VAR_MOMENTUM + 1) * nelr] = flux_i_momentum.y;
    fluxes[i + (VAR_MOMENTUM + 2) * nelr] = flux_i_momentum.z;
    fluxes[i + VAR_DENSITY_ENERGY * nelr] = flux_i_density_energy;
}
"#,
    &[
        INT, IN_I32, IN_F32, IN_F32, OUT_F32, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT,
        FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT, FLOAT,
    ],
);

/// Rodinia's `bpnn_layerforward_CUDA`, its blocks along x, without its store of the products
/// back over the weights (which the next step reads again only in Rodinia's own host code).
pub(super) static BPNN_LAYERFORWARD_C: Kernel = twin(
    "bpnn_layerforward_c",
    r#"
#define WIDTH 16
#define HEIGHT 16
extern "C" __global__ void bpnn_layerforward_c(const float* __restrict__ input_cuda,
        unsigned long long input_len, const float* __restrict__ input_hidden_cuda,
        unsigned long long weights_len, float* __restrict__ hidden_partial_sum,
        unsigned long long partial_len, int in, int hid) {
    int by = blockIdx.x;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_in = HEIGHT * by + ty + 1;
    __shared__ float input_node[HEIGHT];
    __shared__ float weight_matrix[HEIGHT][WIDTH];
    if (tx == 0) input_node[ty] = input_cuda[index_in];
    __syncthreads();
    weight_matrix[ty][tx] = input_hidden_cuda[index];
    __syncthreads();
    weight_matrix[ty][tx] = weight_matrix[ty][tx] * input_node[ty];
    __syncthreads();
    for (int i = 1; i <= __log2f(HEIGHT); i++) {
        int power_two = __powf(2, i);
        if (ty % power_two == 0)
            weight_matrix[ty][tx] = weight_matrix[ty][tx] + weight_matrix[ty + power_two / 2][tx];
        __syncthreads();
    }
    if (tx == 0) hidden_partial_sum[by * hid + ty] = weight_matrix[tx][ty];
}
"#,
    &[IN_F32, IN_F32, OUT_F32, INT, INT],
);

/// Rodinia's `bpnn_adjust_weights_cuda`, its blocks along x.
pub(super) static BPNN_ADJUST_C: Kernel = twin(
    "bpnn_adjust_weights_c",
    r#"
#define WIDTH 16
#define HEIGHT 16
#define ETA 0.3f
#define MOMENTUM 0.3f
extern "C" __global__ void bpnn_adjust_weights_c(const float* __restrict__ delta,
        unsigned long long delta_len, int hid, const float* __restrict__ ly,
        unsigned long long ly_len, int in, float* __restrict__ w, unsigned long long w_len,
        float* __restrict__ oldw, unsigned long long oldw_len) {
    int by = blockIdx.x;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_y = HEIGHT * by + ty + 1;
    int index_x = tx + 1;
    w[index] += ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
    oldw[index] = ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
    __syncthreads();
    if (ty == 0 && by == 0) {
        w[index_x] += ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
        oldw[index_x] = ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
    }
}
"#,
    &[IN_F32, INT, IN_F32, INT, OUT_F32, OUT_F32],
);
