//! The fifteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): a lattice Boltzmann D2Q9 step (nine distributions a cell in local
//! arrays, weights and velocities in module `const` tables), Rodinia's Gaussian elimination
//! (`Fan1` and `Fan2`), and Rodinia's SRAD diffusion coefficient kernel.

use gpu_dsl::prelude::*;

/// The D2Q9 lattice's weights, rest first.
pub const LBM_W: [f32; 9] = [
    4.0 / 9.0,
    1.0 / 9.0,
    1.0 / 9.0,
    1.0 / 9.0,
    1.0 / 9.0,
    1.0 / 36.0,
    1.0 / 36.0,
    1.0 / 36.0,
    1.0 / 36.0,
];
/// The D2Q9 lattice's velocities along x.
pub const LBM_EX: [i32; 9] = [0, 1, 0, -1, 0, 1, -1, -1, 1];
/// The D2Q9 lattice's velocities along y.
pub const LBM_EY: [i32; 9] = [0, 0, 1, 0, -1, 1, 1, -1, -1];

/// One BGK collide-and-stream step of a periodic `nx x ny` D2Q9 lattice, its distributions
/// stored direction-major (`f[q * nx * ny + cell]`): each thread pulls its cell's nine
/// distributions from its neighbours, relaxes them towards equilibrium at rate `omega`, and
/// writes them to `out`.
#[kernel]
pub fn lbm_step(nx: usize, ny: usize, omega: f32, f: &[f32], out: &mut [f32]) {
    let x = global_idx().x;
    let y = block_idx().y as usize;
    if x < nx && y < ny {
        let cells = nx * ny;
        let mut dist = [0.0f32; 9];
        for q in 0..9 {
            let sx = (x as i32 - LBM_EX[q]).rem_euclid(nx as i32) as usize;
            let sy = (y as i32 - LBM_EY[q]).rem_euclid(ny as i32) as usize;
            dist[q] = f[q * cells + sy * nx + sx];
        }
        let mut rho = 0.0f32;
        let mut ux = 0.0f32;
        let mut uy = 0.0f32;
        for q in 0..9 {
            rho += dist[q];
            ux += dist[q] * LBM_EX[q] as f32;
            uy += dist[q] * LBM_EY[q] as f32;
        }
        ux /= rho;
        uy /= rho;
        let usq = 1.5 * (ux * ux + uy * uy);
        for q in 0..9 {
            let eu = 3.0 * (LBM_EX[q] as f32 * ux + LBM_EY[q] as f32 * uy);
            let feq = LBM_W[q] * rho * (1.0 + eu + 0.5 * eu * eu - usq);
            out[q * cells + y * nx + x] = dist[q] + omega * (feq - dist[q]);
        }
    }
}

/// Rodinia `gaussian`'s `Fan1`: the multipliers of column `t` below row `t` of the `size x
/// size` matrix `a`, into column `t` of `m`.
#[kernel]
pub fn fan1(size: usize, t: usize, a: &[f32], m: &mut [f32]) {
    let i = global_idx().x;
    if i < size - 1 - t {
        m[size * (i + t + 1) + t] = a[size * (i + t + 1) + t] / a[size * t + t];
    }
}

/// Rodinia `gaussian`'s `Fan2`: subtracts multiples of row `t` from the rows below it in `a`,
/// and from the right-hand side `b` (threads of column 0).
#[kernel]
pub fn fan2(size: usize, t: usize, m: &[f32], a: &mut [f32], b: &mut [f32]) {
    let x = global_idx().x;
    let y = global_idx().y;
    if x < size - 1 - t && y < size - t {
        let row = x + 1 + t;
        let col = y + t;
        a[size * row + col] -= m[size * row + t] * a[size * t + col];
        if y == 0 {
            b[row] -= m[size * row + t] * b[t];
        }
    }
}

/// Rodinia SRAD's first kernel: the directional derivatives of each pixel of a `rows x cols`
/// image `j` (column-major, edges clamped), and its diffusion coefficient from the
/// instantaneous coefficient of variation against the speckle scale `q0sqr`, clamped to
/// [0, 1].
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn srad_coefficients(
    rows: usize,
    cols: usize,
    q0sqr: f32,
    j: &[f32],
    dn: &mut [f32],
    ds: &mut [f32],
    dw: &mut [f32],
    de: &mut [f32],
    c: &mut [f32],
) {
    let k = global_idx().x;
    if k < rows * cols {
        let row = k % rows;
        let col = k / rows;
        let n = if row == 0 { k } else { k - 1 };
        let s = if row == rows - 1 { k } else { k + 1 };
        let w = if col == 0 { k } else { k - rows };
        let e = if col == cols - 1 { k } else { k + rows };
        let jc = j[k];
        let (d_n, d_s, d_w, d_e) = (j[n] - jc, j[s] - jc, j[w] - jc, j[e] - jc);
        let g2 = (d_n * d_n + d_s * d_s + d_w * d_w + d_e * d_e) / (jc * jc);
        let l = (d_n + d_s + d_w + d_e) / jc;
        let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
        let den = 1.0 + 0.25 * l;
        let qsqr = num / (den * den);
        let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
        c[k] = (1.0 / (1.0 + den)).clamp(0.0, 1.0);
        dn[k] = d_n;
        ds[k] = d_s;
        dw[k] = d_w;
        de[k] = d_e;
    }
}
