//! The classic CUDA programs of `examples/bench/port_kernels19.rs` (timed in `ports19.rs`
//! against their CUDA C twins) against plain Rust, on the CPU backend and, where there is one,
//! the GPU.

mod common;

#[path = "../examples/bench/port_kernels19.rs"]
mod ports19;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports19::{
    BoxInfo, Flow, FourVector, KSample, Vec3, BP_HEIGHT, BP_WIDTH, NNB, NVAR, PAR_PER_BOX,
};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports19::mriq_phi_mag::KERNEL, &[]),
        (&ports19::mriq_compute_q::KERNEL, &[]),
        (&ports19::lavamd::KERNEL, &[]),
        (&ports19::cfd_compute_flux::KERNEL, &[]),
        (&ports19::bpnn_layerforward::KERNEL, &[]),
        (&ports19::bpnn_adjust_weights::KERNEL, &[]),
    ]);
}

/// Random k-space samples and voxel coordinates of MRI-Q.
fn mriq_inputs(voxels: usize, samples: usize) -> (Vec<KSample>, [Vec<f32>; 3]) {
    let k = ports19::mriq_samples(&random_f32(4 * samples, 191), 4.0);
    (k, [192, 193, 194].map(|seed| random_f32(voxels, seed)))
}

#[test]
fn mriq_matches_plain_rust() {
    let (voxels, samples) = (333usize, 77usize);
    let (k, [x, y, z]) = mriq_inputs(voxels, samples);
    let start_r = random_f32(voxels, 195);
    let start_i = random_f32(voxels, 196);
    // Q in f64, added to the starting values as each launch of Parboil's chunks adds to Q.
    let (mut expected_r, mut expected_i) = (Vec::new(), Vec::new());
    for v in 0..voxels {
        let (mut re, mut im) = (f64::from(start_r[v]), f64::from(start_i[v]));
        for s in &k {
            let arg = 2.0
                * std::f64::consts::PI
                * (f64::from(s.kx) * f64::from(x[v])
                    + f64::from(s.ky) * f64::from(y[v])
                    + f64::from(s.kz) * f64::from(z[v]));
            re += f64::from(s.phi_mag) * arg.cos();
            im += f64::from(s.phi_mag) * arg.sin();
        }
        expected_r.push(re as f32);
        expected_i.push(im as f32);
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let kb = DeviceBuffer::from_host(&stream, &k).unwrap();
        let [xb, yb, zb] = [&x, &y, &z].map(|c| DeviceBuffer::from_host(&stream, c).unwrap());
        let mut qr = DeviceBuffer::from_host(&stream, &start_r).unwrap();
        let mut qi = DeviceBuffer::from_host(&stream, &start_i).unwrap();
        let config = LaunchConfig::for_len(voxels, ports19::MRIQ_THREADS);
        ports19::mriq_compute_q::launch(&stream, config, &kb, &xb, &yb, &zb, &mut qr, &mut qi)
            .unwrap();
        let (got_r, got_i) = (qr.to_host(&stream).unwrap(), qi.to_host(&stream).unwrap());
        eprintln!("{}", gpu.name());
        close(&got_r, &expected_r, 1e-4);
        close(&got_i, &expected_i, 1e-4);
    }
}

#[test]
fn mriq_phi_mag_matches_plain_rust() {
    let n = 1000;
    let (re, im) = (random_f32(n, 197), random_f32(n, 198));
    let expected: Vec<f32> = re.iter().zip(&im).map(|(r, i)| r * r + i * i).collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let r = DeviceBuffer::from_host(&stream, &re).unwrap();
        let i = DeviceBuffer::from_host(&stream, &im).unwrap();
        let mut mag = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
        ports19::mriq_phi_mag::launch(&stream, LaunchConfig::for_len(n, 128), &r, &i, &mut mag)
            .unwrap();
        eprintln!("{}", gpu.name());
        close(&mag.to_host(&stream).unwrap(), &expected, 1e-6);
    }
}

/// The potential and force on every particle, pair by pair over each box and its neighbours.
fn lava_forces(alpha: f64, boxes: &[BoxInfo], rv: &[FourVector], qv: &[f64]) -> Vec<FourVector> {
    let mut fv = vec![FourVector::default(); rv.len()];
    let a2 = 2.0 * alpha * alpha;
    for (number, home) in boxes.iter().enumerate() {
        let others = std::iter::once(number as u32).chain(home.nei[..home.nn as usize].to_vec());
        for other in others {
            let first_j = boxes[other as usize].offset as usize;
            for i in 0..PAR_PER_BOX {
                let a = rv[home.offset as usize + i];
                let f = &mut fv[home.offset as usize + i];
                for j in first_j..first_j + PAR_PER_BOX {
                    let b = rv[j];
                    let r2 = a.v + b.v - (a.x * b.x + a.y * b.y + a.z * b.z);
                    let vij = (-a2 * r2).exp();
                    f.v += qv[j] * vij;
                    f.x += qv[j] * 2.0 * vij * (a.x - b.x);
                    f.y += qv[j] * 2.0 * vij * (a.y - b.y);
                    f.z += qv[j] * 2.0 * vij * (a.z - b.z);
                }
            }
        }
    }
    fv
}

#[test]
fn lavamd_matches_plain_rust() {
    let boxes = ports19::lava_boxes(3);
    // The centre box of a 3 × 3 × 3 grid has all 26 neighbours, a corner 7.
    assert_eq!(boxes[13].nn, 26);
    assert_eq!(boxes[0].nn, 7);
    let n = boxes.len() * PAR_PER_BOX;
    let rv: Vec<FourVector> = random_f32(4 * n, 199)
        .chunks(4)
        .map(|c| FourVector {
            v: 0.5 + 0.5 * f64::from(c[0]),
            x: 0.5 + 0.5 * f64::from(c[1]),
            y: 0.5 + 0.5 * f64::from(c[2]),
            z: 0.5 + 0.5 * f64::from(c[3]),
        })
        .collect();
    let qv: Vec<f64> = random_f32(n, 200).iter().map(|&q| f64::from(q)).collect();
    let alpha = 0.5;
    let expected = lava_forces(alpha, &boxes, &rv, &qv);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let b = DeviceBuffer::from_host(&stream, &boxes).unwrap();
        let r = DeviceBuffer::from_host(&stream, &rv).unwrap();
        let q = DeviceBuffer::from_host(&stream, &qv).unwrap();
        let mut fv = DeviceBuffer::<FourVector>::zeroed(&stream, n).unwrap();
        let config = LaunchConfig::new(
            Grid::x(boxes.len() as u32),
            Block::x(ports19::LAVA_THREADS as u32),
        );
        ports19::lavamd::launch(&stream, config, alpha, &b, &r, &q, &mut fv).unwrap();
        let got = fv.to_host(&stream).unwrap();
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            let (g, e) = ([g.v, g.x, g.y, g.z], [e.v, e.x, e.y, e.z]);
            for (a, b) in g.iter().zip(&e) {
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
                    "{}: particle {i}: {g:?} against {e:?}",
                    gpu.name()
                );
            }
        }
    }
}

/// Rodinia CFD's flux of each cell, in its own flat style over `[f32; 3]`s.
fn cfd_fluxes(neighbours: &[i32], normals: &[f32], variables: &[f32], ff: &[f32; 5]) -> Vec<f32> {
    let nelr = variables.len() / NVAR;
    let gamma = ports19::GAMMA;
    // A cell's state and what follows from it: momentum, velocity, pressure, speed of sound,
    // and its fluxes (momentum x, y, z rows, then energy).
    let state = |var: &dyn Fn(usize) -> f32| {
        let density = var(0);
        let momentum = [var(1), var(2), var(3)];
        let energy = var(4);
        let velocity = momentum.map(|m| m / density);
        let speed_sqd: f32 = velocity.iter().map(|v| v * v).sum();
        let pressure = (gamma - 1.0) * (energy - 0.5 * density * speed_sqd);
        let sound = (gamma * pressure / density).sqrt();
        let mut fc = [[0.0f32; 3]; 4];
        for r in 0..3 {
            for c in 0..3 {
                fc[r][c] = velocity[c] * momentum[r] + if r == c { pressure } else { 0.0 };
            }
            fc[3][r] = velocity[r] * (energy + pressure);
        }
        (density, momentum, energy, speed_sqd, pressure, sound, fc)
    };
    let ff_state = state(&|k| ff[k]);
    let mut fluxes = vec![0.0f32; variables.len()];
    for i in 0..nelr {
        let (density, momentum, energy, speed_sqd, pressure, sound, fc) =
            state(&|k| variables[i + k * nelr]);
        let mut flux = [0.0f32; NVAR];
        for j in 0..NNB {
            let nb = neighbours[i + j * nelr];
            let normal: [f32; 3] = std::array::from_fn(|c| normals[i + (j + c * NNB) * nelr]);
            let normal_len = normal.iter().map(|n| n * n).sum::<f32>().sqrt();
            let centred = |flux: &mut [f32; NVAR], other_m: [f32; 3], other_fc: [[f32; 3]; 4]| {
                for c in 0..3 {
                    let factor = 0.5 * normal[c];
                    flux[0] += factor * (other_m[c] + momentum[c]);
                    flux[4] += factor * (other_fc[3][c] + fc[3][c]);
                    for r in 0..3 {
                        flux[1 + r] += factor * (other_fc[r][c] + fc[r][c]);
                    }
                }
            };
            if nb >= 0 {
                let nb = nb as usize;
                let (d_nb, m_nb, e_nb, s_nb, _, sound_nb, fc_nb) =
                    state(&|k| variables[nb + k * nelr]);
                let factor =
                    -normal_len * 0.2 * 0.5 * (speed_sqd.sqrt() + s_nb.sqrt() + sound + sound_nb);
                flux[0] += factor * (density - d_nb);
                flux[4] += factor * (energy - e_nb);
                for c in 0..3 {
                    flux[1 + c] += factor * (momentum[c] - m_nb[c]);
                }
                centred(&mut flux, m_nb, fc_nb);
            } else if nb == -1 {
                for c in 0..3 {
                    flux[1 + c] += normal[c] * pressure;
                }
            } else if nb == -2 {
                centred(&mut flux, ff_state.1, ff_state.6);
            }
        }
        for (k, f) in flux.iter().enumerate() {
            fluxes[i + k * nelr] = *f;
        }
    }
    fluxes
}

#[test]
fn cfd_flux_matches_plain_rust() {
    let (cells, width) = (300usize, 17usize);
    let neighbours = ports19::cfd_mesh(cells, width);
    // Every kind of face occurs: inner cells, walls and the far field.
    for kind in [-2, -1] {
        assert!(neighbours.contains(&kind));
    }
    assert!(neighbours.iter().any(|&nb| nb >= 0));
    let normals = random_f32(3 * NNB * cells, 201);
    let v = random_f32(NVAR * cells, 202);
    let variables = ports19::cfd_variables(&v, cells);
    let ff = Flow {
        density: 1.4,
        momentum: Vec3 {
            x: 1.2,
            y: 0.1,
            z: -0.3,
        },
        energy: 3.2,
    };
    let velocity = ff.velocity();
    let ff_flux = ff.flux_contribution(velocity, ff.pressure(velocity.dot(velocity)));
    let ff_words = [
        ff.density,
        ff.momentum.x,
        ff.momentum.y,
        ff.momentum.z,
        ff.energy,
    ];
    let expected = cfd_fluxes(&neighbours, &normals, &variables, &ff_words);
    for gpu in backends() {
        let stream = gpu.default_stream();
        let nb = DeviceBuffer::from_host(&stream, &neighbours).unwrap();
        let nm = DeviceBuffer::from_host(&stream, &normals).unwrap();
        let vars = DeviceBuffer::from_host(&stream, &variables).unwrap();
        let mut fluxes = DeviceBuffer::<f32>::zeroed(&stream, NVAR * cells).unwrap();
        let config = LaunchConfig::for_len(cells, 64);
        ports19::cfd_compute_flux::launch(
            &stream,
            config,
            &nb,
            &nm,
            &vars,
            &mut fluxes,
            ff,
            ff_flux,
        )
        .unwrap();
        eprintln!("{}", gpu.name());
        close(&fluxes.to_host(&stream).unwrap(), &expected, 1e-4);
    }
}

#[test]
fn bpnn_layerforward_matches_plain_rust() {
    let (inputs, hid) = (5 * BP_HEIGHT, BP_WIDTH);
    let input = random_f32(inputs + 1, 203);
    let weights = random_f32((inputs + 1) * (hid + 1), 204);
    let blocks = inputs / BP_HEIGHT;
    // Each block's sums over its 16 input units, bias row 0 and column 0 left out.
    let mut expected = vec![0.0f32; blocks * hid];
    for b in 0..blocks {
        for h in 0..hid {
            expected[b * hid + h] = (BP_HEIGHT * b + 1..=BP_HEIGHT * (b + 1))
                .map(|row| input[row] * weights[row * (hid + 1) + h + 1])
                .sum();
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let inp = DeviceBuffer::from_host(&stream, &input).unwrap();
        let w = DeviceBuffer::from_host(&stream, &weights).unwrap();
        let mut sums = DeviceBuffer::<f32>::zeroed(&stream, blocks * hid).unwrap();
        let config = LaunchConfig::new(
            Grid::x(blocks as u32),
            Block::xy(BP_WIDTH as u32, BP_HEIGHT as u32),
        );
        ports19::bpnn_layerforward::launch(&stream, config, &inp, &w, &mut sums, hid).unwrap();
        eprintln!("{}", gpu.name());
        close(&sums.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn bpnn_adjust_weights_matches_plain_rust() {
    let (inputs, hid) = (3 * BP_HEIGHT, BP_WIDTH);
    let delta = random_f32(hid + 1, 205);
    let ly = random_f32(inputs + 1, 206);
    let w0 = random_f32((inputs + 1) * (hid + 1), 207);
    let old0 = random_f32((inputs + 1) * (hid + 1), 208);
    // Rodinia's bpnn_adjust_weights on the host: every weight but column 0 (no output unit).
    let (mut w_expected, mut old_expected) = (w0.clone(), old0.clone());
    for (k, &d) in delta.iter().enumerate().skip(1) {
        for (j, &l) in ly.iter().enumerate() {
            let index = j * (hid + 1) + k;
            let input = if j == 0 { 1.0 } else { l };
            let change = ports19::ETA * d * input + ports19::MOMENTUM * old0[index];
            w_expected[index] += change;
            old_expected[index] = change;
        }
    }
    for gpu in backends() {
        let stream = gpu.default_stream();
        let d = DeviceBuffer::from_host(&stream, &delta).unwrap();
        let l = DeviceBuffer::from_host(&stream, &ly).unwrap();
        let mut w = DeviceBuffer::from_host(&stream, &w0).unwrap();
        let mut oldw = DeviceBuffer::from_host(&stream, &old0).unwrap();
        let config = LaunchConfig::new(
            Grid::x((inputs / BP_HEIGHT) as u32),
            Block::xy(BP_WIDTH as u32, BP_HEIGHT as u32),
        );
        ports19::bpnn_adjust_weights::launch(&stream, config, &d, &l, &mut w, &mut oldw, hid)
            .unwrap();
        eprintln!("{}", gpu.name());
        close(&w.to_host(&stream).unwrap(), &w_expected, 1e-6);
        close(&oldw.to_host(&stream).unwrap(), &old_expected, 1e-6);
    }
}
