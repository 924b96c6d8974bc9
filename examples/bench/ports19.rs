//! Rows for the nineteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels19.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels19::{
    self as ports, Flow, FourVector, Vec3, BP_HEIGHT, BP_WIDTH, LAVA_THREADS, MRIQ_THREADS, NNB,
    NVAR,
};
use crate::ports::{agree, row, values};
use crate::{median_ms, Only, Row};
use twins::{BPNN_ADJUST_C, BPNN_LAYERFORWARD_C, CFD_FLUX_C, LAVAMD_C, MRIQ_C};

/// Every row of the nineteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port mri-q") {
        rows.push(mriq(stream, 1 << 18, 2048)?);
    }
    if only.wants("port lavamd") {
        rows.push(lavamd(stream, 10)?);
    }
    if only.wants("port cfd flux") {
        rows.push(cfd_flux(stream, 1 << 22, 1024)?);
    }
    if only.wants("port backprop layerforward") {
        rows.push(bpnn_layerforward(stream, 1 << 22)?);
    }
    if only.wants("port backprop adjust weights") {
        rows.push(bpnn_adjust(stream, 1 << 22)?);
    }
    Ok(rows)
}

fn mriq(stream: &Stream, voxels: usize, samples: usize) -> gpu_dsl::Result<Row> {
    let k = ports::mriq_samples(&values(4 * samples, 191), 8.0);
    let words: Vec<f32> = k
        .iter()
        .flat_map(|s| [s.kx, s.ky, s.kz, s.phi_mag])
        .collect();
    let samples_buf = DeviceBuffer::from_host(stream, &k)?;
    let words_buf = DeviceBuffer::from_host(stream, &words)?;
    let x = DeviceBuffer::from_host(stream, &values(voxels, 192))?;
    let y = DeviceBuffer::from_host(stream, &values(voxels, 193))?;
    let z = DeviceBuffer::from_host(stream, &values(voxels, 194))?;
    let mut qr = DeviceBuffer::<f32>::zeroed(stream, voxels)?;
    let mut qi = DeviceBuffer::<f32>::zeroed(stream, voxels)?;
    let mut qr_twin = DeviceBuffer::<f32>::zeroed(stream, voxels)?;
    let mut qi_twin = DeviceBuffer::<f32>::zeroed(stream, voxels)?;
    let config = LaunchConfig::try_for_len(voxels, MRIQ_THREADS)?;
    let port = |qr: &mut DeviceBuffer<f32>, qi: &mut DeviceBuffer<f32>| {
        ports::mriq_compute_q::launch(stream, config, &samples_buf, &x, &y, &z, qr, qi)
    };
    let twin = |qr: &mut DeviceBuffer<f32>, qi: &mut DeviceBuffer<f32>| {
        stream.launch(
            &MRIQ_C,
            config,
            &[
                KernelArg::scalar(samples as i32),
                KernelArg::scalar(voxels as i32),
                KernelArg::slice(&words_buf),
                KernelArg::slice(&x),
                KernelArg::slice(&y),
                KernelArg::slice(&z),
                KernelArg::slice_mut(qr),
                KernelArg::slice_mut(qi),
            ],
        )
    };
    let ms = median_ms(stream, || port(&mut qr, &mut qi))?;
    let twin_ms = median_ms(stream, || twin(&mut qr_twin, &mut qi_twin))?;
    // Each run adds to Q: compare one run of each from zero.
    for b in [&mut qr, &mut qi, &mut qr_twin, &mut qi_twin] {
        b.fill(stream, 0.0)?;
    }
    port(&mut qr, &mut qi)?;
    twin(&mut qr_twin, &mut qi_twin)?;
    agree(
        "mri-q real",
        &qr.to_host(stream)?,
        &qr_twin.to_host(stream)?,
        1e-4,
    );
    agree(
        "mri-q imaginary",
        &qi.to_host(stream)?,
        &qi_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port mri-q",
        format!("{voxels} voxels x {samples} samples"),
        ms,
        twin_ms,
        (voxels * samples) as f64 / 1e9,
        "Gsample/s",
    ))
}

fn lavamd(stream: &Stream, boxes1d: usize) -> gpu_dsl::Result<Row> {
    let boxes = ports::lava_boxes(boxes1d);
    let particles = boxes.len() * ports::PAR_PER_BOX;
    let r = values(4 * particles, 195);
    let rv: Vec<FourVector> = r
        .chunks(4)
        .map(|c| FourVector {
            v: 0.5 + 0.5 * f64::from(c[0]),
            x: 0.5 + 0.5 * f64::from(c[1]),
            y: 0.5 + 0.5 * f64::from(c[2]),
            z: 0.5 + 0.5 * f64::from(c[3]),
        })
        .collect();
    let qv: Vec<f64> = values(particles, 196)
        .iter()
        .map(|&q| 0.5 + 0.5 * f64::from(q))
        .collect();
    let box_words: Vec<u32> = boxes
        .iter()
        .flat_map(|b| [b.offset, b.nn].into_iter().chain(b.nei))
        .collect();
    let rv_words: Vec<f64> = rv.iter().flat_map(|p| [p.v, p.x, p.y, p.z]).collect();
    let boxes_buf = DeviceBuffer::from_host(stream, &boxes)?;
    let box_words = DeviceBuffer::from_host(stream, &box_words)?;
    let rv_buf = DeviceBuffer::from_host(stream, &rv)?;
    let rv_words = DeviceBuffer::from_host(stream, &rv_words)?;
    let qv = DeviceBuffer::from_host(stream, &qv)?;
    let mut fv = DeviceBuffer::<FourVector>::zeroed(stream, particles)?;
    let mut fv_twin = DeviceBuffer::<f64>::zeroed(stream, 4 * particles)?;
    let alpha = 0.5f64;
    let config = LaunchConfig::new(Grid::x(boxes.len() as u32), Block::x(LAVA_THREADS as u32));
    let port = |fv: &mut DeviceBuffer<FourVector>| {
        ports::lavamd::launch(stream, config, alpha, &boxes_buf, &rv_buf, &qv, fv)
    };
    let twin = |fv: &mut DeviceBuffer<f64>| {
        stream.launch(
            &LAVAMD_C,
            config,
            &[
                KernelArg::scalar(alpha),
                KernelArg::slice(&box_words),
                KernelArg::slice(&rv_words),
                KernelArg::slice(&qv),
                KernelArg::slice_mut(fv),
            ],
        )
    };
    let ms = median_ms(stream, || port(&mut fv))?;
    let twin_ms = median_ms(stream, || twin(&mut fv_twin))?;
    // Each run adds to the forces: compare one run of each from zero.
    fv = DeviceBuffer::zeroed(stream, particles)?;
    fv_twin.fill(stream, 0.0)?;
    port(&mut fv)?;
    twin(&mut fv_twin)?;
    let ours: Vec<f32> = fv
        .to_host(stream)?
        .iter()
        .flat_map(|p| [p.v, p.x, p.y, p.z].map(|w| w as f32))
        .collect();
    let theirs: Vec<f32> = fv_twin.to_host(stream)?.iter().map(|&w| w as f32).collect();
    agree("lavamd", &ours, &theirs, 1e-5);
    let pairs: usize = boxes
        .iter()
        .map(|b| (1 + b.nn as usize) * ports::PAR_PER_BOX * ports::PAR_PER_BOX)
        .sum();
    Ok(row(
        "port lavamd",
        format!("{boxes1d}³ boxes x {}", ports::PAR_PER_BOX),
        ms,
        twin_ms,
        pairs as f64 / 1e9,
        "Gpair/s",
    ))
}

fn cfd_flux(stream: &Stream, cells: usize, width: usize) -> gpu_dsl::Result<Row> {
    let neighbours = ports::cfd_mesh(cells, width);
    let normals = values(3 * NNB * cells, 197);
    let v = values(NVAR * cells, 198);
    let variables = ports::cfd_variables(&v, cells);
    let ff = Flow {
        density: 1.4,
        momentum: Vec3 {
            x: 1.2,
            y: 0.1,
            z: 0.0,
        },
        energy: 3.2,
    };
    let ff_velocity = ff.velocity();
    let ff_flux = ff.flux_contribution(ff_velocity, ff.pressure(ff_velocity.dot(ff_velocity)));
    let nb = DeviceBuffer::from_host(stream, &neighbours)?;
    let normals = DeviceBuffer::from_host(stream, &normals)?;
    let variables = DeviceBuffer::from_host(stream, &variables)?;
    let mut fluxes = DeviceBuffer::<f32>::zeroed(stream, NVAR * cells)?;
    let mut fluxes_twin = DeviceBuffer::<f32>::zeroed(stream, NVAR * cells)?;
    let config = LaunchConfig::try_for_len(cells, 192)?;
    let ms = median_ms(stream, || {
        ports::cfd_compute_flux::launch(
            stream,
            config,
            &nb,
            &normals,
            &variables,
            &mut fluxes,
            ff,
            ff_flux,
        )
    })?;
    // The far field's state and fluxes, as the twin's scalars.
    let mut far = vec![
        ff.density,
        ff.momentum.x,
        ff.momentum.y,
        ff.momentum.z,
        ff.energy,
    ];
    for v in [
        ff_flux.momentum_x,
        ff_flux.momentum_y,
        ff_flux.momentum_z,
        ff_flux.energy,
    ] {
        far.extend([v.x, v.y, v.z]);
    }
    let twin_ms = median_ms(stream, || {
        let mut args = vec![
            KernelArg::scalar(cells as i32),
            KernelArg::slice(&nb),
            KernelArg::slice(&normals),
            KernelArg::slice(&variables),
            KernelArg::slice_mut(&mut fluxes_twin),
        ];
        args.extend(far.iter().map(|&v| KernelArg::scalar(v)));
        stream.launch(&CFD_FLUX_C, config, &args)
    })?;
    agree(
        "cfd flux",
        &fluxes.to_host(stream)?,
        &fluxes_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port cfd flux",
        format!("{cells} cells"),
        ms,
        twin_ms,
        cells as f64 / 1e9,
        "Gcell/s",
    ))
}

/// The blocks and threads of both backprop kernels over `inputs` input units.
fn bpnn_config(inputs: usize) -> LaunchConfig {
    LaunchConfig::new(
        Grid::x((inputs / BP_HEIGHT) as u32),
        Block::xy(BP_WIDTH as u32, BP_HEIGHT as u32),
    )
}

fn bpnn_layerforward(stream: &Stream, inputs: usize) -> gpu_dsl::Result<Row> {
    let hid = BP_WIDTH;
    let input: Vec<f32> = values(inputs + 1, 199).iter().map(|v| v.abs()).collect();
    let input = DeviceBuffer::from_host(stream, &input)?;
    let weights = DeviceBuffer::from_host(stream, &values((inputs + 1) * (hid + 1), 200))?;
    let blocks = inputs / BP_HEIGHT;
    let mut sums = DeviceBuffer::<f32>::zeroed(stream, blocks * hid)?;
    let mut sums_twin = DeviceBuffer::<f32>::zeroed(stream, blocks * hid)?;
    let config = bpnn_config(inputs);
    let ms = median_ms(stream, || {
        ports::bpnn_layerforward::launch(stream, config, &input, &weights, &mut sums, hid)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BPNN_LAYERFORWARD_C,
            config,
            &[
                KernelArg::slice(&input),
                KernelArg::slice(&weights),
                KernelArg::slice_mut(&mut sums_twin),
                KernelArg::scalar(inputs as i32),
                KernelArg::scalar(hid as i32),
            ],
        )
    })?;
    agree(
        "backprop layerforward",
        &sums.to_host(stream)?,
        &sums_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port backprop layerforward",
        format!("{inputs} x {hid}"),
        ms,
        twin_ms,
        ((inputs + 1) * (hid + 1) * 4) as f64 / 1e9,
        "GB/s",
    ))
}

fn bpnn_adjust(stream: &Stream, inputs: usize) -> gpu_dsl::Result<Row> {
    let hid = BP_WIDTH;
    let delta = DeviceBuffer::from_host(stream, &values(hid + 1, 201))?;
    let ly = DeviceBuffer::from_host(stream, &values(inputs + 1, 202))?;
    let w_host = values((inputs + 1) * (hid + 1), 203);
    let old_host = values((inputs + 1) * (hid + 1), 204);
    let mut w = DeviceBuffer::from_host(stream, &w_host)?;
    let mut oldw = DeviceBuffer::from_host(stream, &old_host)?;
    let mut w_twin = DeviceBuffer::from_host(stream, &w_host)?;
    let mut oldw_twin = DeviceBuffer::from_host(stream, &old_host)?;
    let config = bpnn_config(inputs);
    let port = |w: &mut DeviceBuffer<f32>, oldw: &mut DeviceBuffer<f32>| {
        ports::bpnn_adjust_weights::launch(stream, config, &delta, &ly, w, oldw, hid)
    };
    let twin = |w: &mut DeviceBuffer<f32>, oldw: &mut DeviceBuffer<f32>| {
        stream.launch(
            &BPNN_ADJUST_C,
            config,
            &[
                KernelArg::slice(&delta),
                KernelArg::scalar(hid as i32),
                KernelArg::slice(&ly),
                KernelArg::scalar(inputs as i32),
                KernelArg::slice_mut(w),
                KernelArg::slice_mut(oldw),
            ],
        )
    };
    let ms = median_ms(stream, || port(&mut w, &mut oldw))?;
    let twin_ms = median_ms(stream, || twin(&mut w_twin, &mut oldw_twin))?;
    // Each run moves the weights again: compare one step of each from the same weights.
    for (b, host) in [
        (&mut w, &w_host),
        (&mut oldw, &old_host),
        (&mut w_twin, &w_host),
        (&mut oldw_twin, &old_host),
    ] {
        *b = DeviceBuffer::from_host(stream, host)?;
    }
    port(&mut w, &mut oldw)?;
    twin(&mut w_twin, &mut oldw_twin)?;
    agree(
        "backprop weights",
        &w.to_host(stream)?,
        &w_twin.to_host(stream)?,
        1e-5,
    );
    agree(
        "backprop changes",
        &oldw.to_host(stream)?,
        &oldw_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port backprop adjust weights",
        format!("{inputs} x {hid}"),
        ms,
        twin_ms,
        ((inputs + 1) * (hid + 1) * 4 * 4) as f64 / 1e9,
        "GB/s",
    ))
}
