//! The nineteenth set of classic CUDA programs ported to `#[kernel]` (see the first,
//! `port_kernels.rs`): Parboil's MRI-Q (a thread per voxel summing the sine and cosine of its
//! phase against every k-space sample), Rodinia's lavaMD (a block per home box, the particles
//! of each neighbouring box staged in shared memory as `#[device]` four-vectors), Rodinia's
//! CFD solver's flux computation (Euler equations on an unstructured mesh, the conserved
//! variables of a cell as a `#[device]` struct with methods, three-vectors with operators), and
//! Rodinia's backprop (a 16 × 16 shared tile's log-step column sums, and the weight update).

use gpu_dsl::prelude::*;

/// Threads of an MRI-Q block (Parboil's `KERNEL_Q_THREADS_PER_BLOCK`).
pub const MRIQ_THREADS: u32 = 256;

/// A k-space sample of MRI-Q: where it lies and the squared magnitude of its phase.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct KSample {
    pub kx: f32,
    pub ky: f32,
    pub kz: f32,
    pub phi_mag: f32,
}

/// The squared magnitude of each sample's phase (Parboil's `ComputePhiMag_GPU`).
#[kernel]
pub fn mriq_phi_mag(phi_r: &[f32], phi_i: &[f32], phi_mag: &mut [f32]) {
    let i = global_idx().x;
    if i < phi_mag.len() {
        phi_mag[i] = phi_r[i] * phi_r[i] + phi_i[i] * phi_i[i];
    }
}

/// Adds to each voxel's `(qr, qi)` the sum over the samples of `phi_mag · (cos, sin)(2π k·x)`
/// (Parboil's `ComputeQ_GPU`), a thread per voxel.
#[kernel]
pub fn mriq_compute_q(
    samples: &[KSample],
    x: &[f32],
    y: &[f32],
    z: &[f32],
    qr: &mut [f32],
    qi: &mut [f32],
) {
    let v = global_idx().x;
    if v >= x.len() {
        return;
    }
    let (sx, sy, sz) = (x[v], y[v], z[v]);
    let (mut re, mut im) = (qr[v], qi[v]);
    for s in samples {
        let arg = core::f32::consts::TAU * (s.kx * sx + s.ky * sy + s.kz * sz);
        let (sin, cos) = arg.sin_cos();
        re += s.phi_mag * cos;
        im += s.phi_mag * sin;
    }
    qr[v] = re;
    qi[v] = im;
}

/// Particles in a lavaMD box (Rodinia's `NUMBER_PAR_PER_BOX`).
pub const PAR_PER_BOX: usize = 100;

/// Threads of a lavaMD block (Rodinia's `NUMBER_THREADS`).
pub const LAVA_THREADS: usize = 128;

/// The most neighbours a box has: the 26 around it.
pub const MAX_NEIGHBOURS: usize = 26;

/// A particle's potential term and position, or the potential and force on it.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FourVector {
    pub v: f64,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

#[device]
impl FourVector {
    /// The dot product of the positions.
    pub fn dot(self, o: FourVector) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
}

#[device]
impl core::ops::AddAssign for FourVector {
    fn add_assign(&mut self, o: FourVector) {
        self.v += o.v;
        self.x += o.x;
        self.y += o.y;
        self.z += o.z;
    }
}

/// A box of lavaMD's grid: where its particles start and which boxes surround it.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BoxInfo {
    pub offset: u32,
    pub nn: u32,
    // A literal, as a `#[device]` struct field's length cannot yet name an outside constant.
    pub nei: [u32; 26],
}

/// The potential and force on each particle of box `block_idx().x` from the particles of its
/// box and its neighbours' (Rodinia's `kernel_gpu_cuda`): the home box's positions and each
/// neighbour's positions and charges staged in shared memory, a thread per home particle.
#[kernel]
pub fn lavamd(alpha: f64, boxes: &[BoxInfo], rv: &[FourVector], qv: &[f64], fv: &mut [FourVector]) {
    let ra = shared_array::<FourVector, PAR_PER_BOX>();
    let rb = shared_array::<FourVector, PAR_PER_BOX>();
    let qb = shared_array::<f64, PAR_PER_BOX>();
    let bx = block_idx().x as usize;
    let t = thread_idx().x as usize;
    let a2 = 2.0 * alpha * alpha;
    let home = boxes[bx];
    let first_i = home.offset as usize;
    for i in (t..PAR_PER_BOX).step_by(LAVA_THREADS) {
        ra[i] = rv[first_i + i];
    }
    sync_threads();
    for k in 0..=home.nn as usize {
        let nb = if k == 0 { bx } else { home.nei[k - 1] as usize };
        let first_j = boxes[nb].offset as usize;
        for j in (t..PAR_PER_BOX).step_by(LAVA_THREADS) {
            rb[j] = rv[first_j + j];
            qb[j] = qv[first_j + j];
        }
        sync_threads();
        for i in (t..PAR_PER_BOX).step_by(LAVA_THREADS) {
            let a = ra[i];
            let mut f = FourVector::default();
            for j in 0..PAR_PER_BOX {
                let b = rb[j];
                let r2 = a.v + b.v - a.dot(b);
                let vij = (-a2 * r2).exp();
                let fs = 2.0 * vij;
                f += FourVector {
                    v: qb[j] * vij,
                    x: qb[j] * fs * (a.x - b.x),
                    y: qb[j] * fs * (a.y - b.y),
                    z: qb[j] * fs * (a.z - b.z),
                };
            }
            fv[first_i + i] += f;
        }
        sync_threads();
    }
}

/// The boxes of a `boxes1d`³ grid as lavaMD's host code lays them out: box `(x, y, z)` is
/// number `x + boxes1d (y + boxes1d z)`, its particles from `number * PAR_PER_BOX` on, and its
/// neighbours the boxes of the grid around it.
pub fn lava_boxes(boxes1d: usize) -> Vec<BoxInfo> {
    let b = boxes1d as i64;
    let mut boxes = Vec::new();
    for z in 0..b {
        for y in 0..b {
            for x in 0..b {
                let number = x + b * (y + b * z);
                let mut info = BoxInfo {
                    offset: (number as usize * PAR_PER_BOX) as u32,
                    nn: 0,
                    nei: [0; MAX_NEIGHBOURS],
                };
                for dz in -1..=1i64 {
                    for dy in -1..=1i64 {
                        for dx in -1..=1i64 {
                            let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                            let inside = [nx, ny, nz].iter().all(|c| (0..b).contains(c));
                            if (dx, dy, dz) != (0, 0, 0) && inside {
                                info.nei[info.nn as usize] = (nx + b * (ny + b * nz)) as u32;
                                info.nn += 1;
                            }
                        }
                    }
                }
                boxes.push(info);
            }
        }
    }
    boxes
}

/// Neighbours of a CFD cell (Rodinia's `NNB`).
pub const NNB: usize = 4;

/// Conserved variables a cell holds: density, three momenta, energy (Rodinia's `NVAR`).
pub const NVAR: usize = 5;

/// The ratio of specific heats of air.
pub const GAMMA: f32 = 1.4;

/// The artificial viscosity's weight (Rodinia's `smoothing_coefficient`).
const SMOOTHING: f32 = 0.2;

/// A three-vector of the flow.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    /// The dot product.
    pub fn dot(self, o: Vec3) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
}

#[device]
impl core::ops::Add for Vec3 {
    type Output = Vec3;
    fn add(self, o: Vec3) -> Vec3 {
        Vec3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

#[device]
impl core::ops::Sub for Vec3 {
    type Output = Vec3;
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

#[device]
impl core::ops::Mul<f32> for Vec3 {
    type Output = Vec3;
    fn mul(self, s: f32) -> Vec3 {
        Vec3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

#[device]
impl core::ops::AddAssign for Vec3 {
    fn add_assign(&mut self, o: Vec3) {
        self.x += o.x;
        self.y += o.y;
        self.z += o.z;
    }
}

/// A cell's conserved variables (or their fluxes).
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Flow {
    pub density: f32,
    pub momentum: Vec3,
    pub energy: f32,
}

/// The fluxes of the momenta and of the energy through the faces normal to x, y and z.
#[device]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FluxContribution {
    pub momentum_x: Vec3,
    pub momentum_y: Vec3,
    pub momentum_z: Vec3,
    pub energy: Vec3,
}

#[device]
impl Flow {
    /// Cell `i` of the structure-of-arrays `variables` (a variable's `nelr` values together).
    pub fn load(variables: &[f32], i: usize, nelr: usize) -> Flow {
        Flow {
            density: variables[i],
            momentum: Vec3 {
                x: variables[i + nelr],
                y: variables[i + 2 * nelr],
                z: variables[i + 3 * nelr],
            },
            energy: variables[i + 4 * nelr],
        }
    }

    /// The velocity, momentum over density.
    pub fn velocity(self) -> Vec3 {
        Vec3 {
            x: self.momentum.x / self.density,
            y: self.momentum.y / self.density,
            z: self.momentum.z / self.density,
        }
    }

    /// The pressure of an ideal gas at squared speed `speed_sqd`.
    pub fn pressure(self, speed_sqd: f32) -> f32 {
        (GAMMA - 1.0) * (self.energy - 0.5 * self.density * speed_sqd)
    }

    /// The speed of sound at `pressure`.
    pub fn speed_of_sound(self, pressure: f32) -> f32 {
        (GAMMA * pressure / self.density).sqrt()
    }

    /// The fluxes of the cell's momenta and energy at `velocity` and `pressure`.
    pub fn flux_contribution(self, velocity: Vec3, pressure: f32) -> FluxContribution {
        let m = self.momentum;
        let de_p = self.energy + pressure;
        FluxContribution {
            momentum_x: Vec3 {
                x: velocity.x * m.x + pressure,
                y: velocity.x * m.y,
                z: velocity.x * m.z,
            },
            momentum_y: Vec3 {
                x: velocity.x * m.y,
                y: velocity.y * m.y + pressure,
                z: velocity.y * m.z,
            },
            momentum_z: Vec3 {
                x: velocity.x * m.z,
                y: velocity.y * m.z,
                z: velocity.z * m.z + pressure,
            },
            energy: velocity * de_p,
        }
    }
}

/// The flux through each cell's faces of the Euler equations (Rodinia CFD's
/// `cuda_compute_flux`), a thread per cell: `neighbours[i + j * nelr]` is the cell across face
/// `j` of cell `i` (-1 a wall, -2 the far field, whose state and fluxes are `ff` and
/// `ff_flux`), the face's normal `normals[i + (j + c * NNB) * nelr]` for component `c`.
#[kernel]
pub fn cfd_compute_flux(
    neighbours: &[i32],
    normals: &[f32],
    variables: &[f32],
    fluxes: &mut [f32],
    ff: Flow,
    ff_flux: FluxContribution,
) {
    let nelr = variables.len() / NVAR;
    let i = global_idx().x;
    if i >= nelr {
        return;
    }
    let cell = Flow::load(variables, i, nelr);
    let velocity = cell.velocity();
    let speed_sqd = velocity.dot(velocity);
    let speed = speed_sqd.sqrt();
    let pressure = cell.pressure(speed_sqd);
    let speed_of_sound = cell.speed_of_sound(pressure);
    let fc = cell.flux_contribution(velocity, pressure);
    let mut flux = Flow::default();
    // Rodinia's `#pragma unroll`.
    #[unroll]
    for j in 0..NNB {
        let nb = neighbours[i + j * nelr];
        let normal = Vec3 {
            x: normals[i + j * nelr],
            y: normals[i + (j + NNB) * nelr],
            z: normals[i + (j + 2 * NNB) * nelr],
        };
        let normal_len = normal.dot(normal).sqrt();
        match nb {
            n if n >= 0 => {
                let other = Flow::load(variables, n as usize, nelr);
                let velocity_nb = other.velocity();
                let speed_sqd_nb = velocity_nb.dot(velocity_nb);
                let pressure_nb = other.pressure(speed_sqd_nb);
                let speed_of_sound_nb = other.speed_of_sound(pressure_nb);
                let fc_nb = other.flux_contribution(velocity_nb, pressure_nb);
                // Artificial viscosity.
                let factor = -normal_len
                    * SMOOTHING
                    * 0.5
                    * (speed + speed_sqd_nb.sqrt() + speed_of_sound + speed_of_sound_nb);
                flux.density += factor * (cell.density - other.density);
                flux.energy += factor * (cell.energy - other.energy);
                flux.momentum += (cell.momentum - other.momentum) * factor;
                // The cell-centred fluxes, averaged across the face.
                let half = normal * 0.5;
                flux.density += half.dot(other.momentum + cell.momentum);
                flux.energy += half.dot(fc_nb.energy + fc.energy);
                flux.momentum.x += half.dot(fc_nb.momentum_x + fc.momentum_x);
                flux.momentum.y += half.dot(fc_nb.momentum_y + fc.momentum_y);
                flux.momentum.z += half.dot(fc_nb.momentum_z + fc.momentum_z);
            }
            -1 => flux.momentum += normal * pressure,
            -2 => {
                let half = normal * 0.5;
                flux.density += half.dot(ff.momentum + cell.momentum);
                flux.energy += half.dot(ff_flux.energy + fc.energy);
                flux.momentum.x += half.dot(ff_flux.momentum_x + fc.momentum_x);
                flux.momentum.y += half.dot(ff_flux.momentum_y + fc.momentum_y);
                flux.momentum.z += half.dot(ff_flux.momentum_z + fc.momentum_z);
            }
            _ => {}
        }
    }
    fluxes[i] = flux.density;
    fluxes[i + nelr] = flux.momentum.x;
    fluxes[i + 2 * nelr] = flux.momentum.y;
    fluxes[i + 3 * nelr] = flux.momentum.z;
    fluxes[i + 4 * nelr] = flux.energy;
}

/// k-space samples from `noise` in [0, 1), four numbers a sample: coordinates up to `scale`
/// and a magnitude up to 1.
pub fn mriq_samples(noise: &[f32], scale: f32) -> Vec<KSample> {
    noise
        .chunks(4)
        .map(|c| KSample {
            kx: scale * c[0],
            ky: scale * c[1],
            kz: scale * c[2],
            phi_mag: c[3] * c[3],
        })
        .collect()
}

/// Flow variables of `cells` cells from `noise` in [0, 1), variable by variable as
/// `cfd_compute_flux` reads them: density about 1, small momenta, energy about 3, so the
/// pressure is positive everywhere.
pub fn cfd_variables(noise: &[f32], cells: usize) -> Vec<f32> {
    (0..NVAR * cells)
        .map(|k| match k / cells {
            0 => 1.0 + 0.2 * noise[k],
            4 => 3.0 + 0.5 * noise[k],
            _ => 0.5 * noise[k],
        })
        .collect()
}

/// The neighbours of a mesh of `cells` cells in rows of `width`, laid out as
/// `cfd_compute_flux` reads them: across faces 0 and 1 the cells beside a cell in its row,
/// across faces 2 and 3 those in the rows after and before; a row's start and the first row
/// are walls (-1), a row's end and the last row the far field (-2).
pub fn cfd_mesh(cells: usize, width: usize) -> Vec<i32> {
    let mut neighbours = vec![0i32; NNB * cells];
    for i in 0..cells {
        let faces = [
            if i % width + 1 < width && i + 1 < cells {
                (i + 1) as i32
            } else {
                -2
            },
            if i % width > 0 { i as i32 - 1 } else { -1 },
            if i + width < cells {
                (i + width) as i32
            } else {
                -2
            },
            if i >= width { (i - width) as i32 } else { -1 },
        ];
        for (j, nb) in faces.into_iter().enumerate() {
            neighbours[i + j * cells] = nb;
        }
    }
    neighbours
}

/// Hidden units of the backprop network, one column of a tile each (Rodinia's `WIDTH`).
pub const BP_WIDTH: usize = 16;

/// Input units a tile covers (Rodinia's `HEIGHT`).
pub const BP_HEIGHT: usize = 16;

/// The learning rate.
pub const ETA: f32 = 0.3;

/// The weight of the previous step's change.
pub const MOMENTUM: f32 = 0.3;

/// Each block's sums, for every hidden unit, of its `BP_HEIGHT` inputs times their weights
/// (Rodinia's `bpnn_layerforward_CUDA`): `weights` is `(inputs + 1) × (hid + 1)` with the bias
/// in row and column 0, block `b` takes input units `16 b + 1 ..= 16 b + 16`, and a 16 × 16
/// tile in shared memory adds its rows up in log steps. Block `b`'s sum of hidden unit `h` goes
/// to `partial_sums[b * hid + h]` (Rodinia's grid is `1 × inputs / 16`, which caps the inputs
/// at a million; the blocks run along x here).
#[kernel]
pub fn bpnn_layerforward(input: &[f32], weights: &[f32], partial_sums: &mut [f32], hid: usize) {
    let node = shared_array::<f32, BP_HEIGHT>();
    let tile = shared_array::<[f32; BP_WIDTH], BP_HEIGHT>();
    let by = block_idx().x as usize;
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = BP_HEIGHT * by + ty + 1;
    let index = (hid + 1) * row + tx + 1;
    if tx == 0 {
        node[ty] = input[row];
    }
    sync_threads();
    tile[ty][tx] = weights[index] * node[ty];
    sync_threads();
    for i in 1..=BP_HEIGHT.ilog2() {
        let power_two = 1 << i;
        if ty % power_two == 0 {
            tile[ty][tx] += tile[ty + power_two / 2][tx];
        }
        sync_threads();
    }
    if tx == 0 {
        partial_sums[by * hid + ty] = tile[tx][ty];
    }
}

/// Moves each weight by `ETA` times its output unit's error times its input unit's value plus
/// `MOMENTUM` times its previous change (Rodinia's `bpnn_adjust_weights_cuda`), a thread per
/// weight, blocks laid out as `bpnn_layerforward`'s; block 0 moves the biases of row 0 too.
#[kernel]
pub fn bpnn_adjust_weights(delta: &[f32], ly: &[f32], w: &mut [f32], oldw: &mut [f32], hid: usize) {
    let by = block_idx().x as usize;
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = BP_HEIGHT * by + ty + 1;
    let col = tx + 1;
    let index = (hid + 1) * row + col;
    let change = ETA * delta[col] * ly[row] + MOMENTUM * oldw[index];
    w[index] += change;
    oldw[index] = change;
    if ty == 0 && by == 0 {
        let bias_change = ETA * delta[col] + MOMENTUM * oldw[col];
        w[col] += bias_change;
        oldw[col] = bias_change;
    }
}
